// io.h: whole-file reading and atomic writing, used by every file format of bitlearn.
//
// Files are written atomically: the bytes go to a temporary file in the target's folder, are
// flushed, and the temporary is renamed over the target, so a reader (or a crash) never sees half a
// file. Errors name the path and the operation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl {

// Opens path for reading and returns its descriptor (close-on-exec; the caller closes it). A named
// pipe that no process writes does not block the open: it reads as empty. A directory is a
// bl::Error naming `what` and the path, and with regular_only so is anything but a regular file (a
// pipe, a device, a socket): for readers that map the file or need its size.
int open_input_file(const std::string& path, const std::string& what, bool regular_only = false);

// Reads a whole file; throws bl::Error naming `what` and the path if it cannot be opened or read.
// A directory is refused; a pipe is read until its writer closes it.
std::vector<uint8_t> read_file_bytes(const std::string& path, const std::string& what = "file");
std::string read_file_text(const std::string& path, const std::string& what = "file");

// Writes bytes to path atomically (temp file `path.tmp.<pid>` beside it + fsync + rename). Throws
// bl::Error naming `what` and the path on failure; the target is then untouched. A target that
// exists and is not a regular file is never replaced: a device or a pipe (/dev/stdout, /dev/null)
// is written in place (a pipe without a reader, or a failed write such as /dev/full's, is an
// error), and a directory is an error. Before writing,
// removes the `path.tmp.<pid>` files of writers that no longer run (kill(pid, 0) fails with
// ESRCH), never the file of a live process.
void write_file_atomic(const std::string& path, const void* data, size_t size,
                       const std::string& what = "file");
inline void write_file_atomic(const std::string& path, const std::string& text,
                              const std::string& what = "file") {
  write_file_atomic(path, text.data(), text.size(), what);
}
inline void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes,
                              const std::string& what = "file") {
  write_file_atomic(path, bytes.data(), bytes.size(), what);
}

}  // namespace bl
