// file_io.cpp: whole-file reads and atomic writes (see bitlearn/io.h).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "bitlearn/io.h"
#include "core/error.h"

namespace bl {
namespace {

// Removes the temporaries `<name>.tmp.<pid>` beside path that a writer which has died left behind
// (kill -9 during a write). A temporary is removed only when kill(pid, 0) says no such process
// exists (ESRCH): a live writer's file, or one of another user (EPERM), is never touched. Best
// effort: a failure to list or remove is not an error of the write.
void remove_stale_temporaries(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const pid_t self = ::getpid();
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == static_cast<long>(self)) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(dir + "/" + name);
  }
  ::closedir(d);
  for (const auto& f : stale) ::unlink(f.c_str());
}

// The end of every message of a failed write: what became of the target. The temporary is removed
// and the target is only ever replaced by the final rename, so a previous file is still whole.
std::string target_state(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0) return "; the previous " + path + " is left unchanged";
  return "; nothing was written";
}

}  // namespace

int open_input_file(const std::string& path, const std::string& what, bool regular_only) {
  // O_NONBLOCK: opening a pipe for reading would otherwise wait for a writer; blocking is restored
  // right after, so that reads wait for data as usual.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    throw Error(detail::concat(what, " ", path, ": cannot open the file (", std::strerror(e), ")"));
  }
  struct stat st {};
  const char* refuse = nullptr;
  if (::fstat(fd, &st) != 0) {
    refuse = "cannot stat the file";
  } else if (S_ISDIR(st.st_mode)) {
    refuse = "is a directory, not a file";
  } else if (regular_only && !S_ISREG(st.st_mode)) {
    refuse = "is not a regular file (a pipe, a device or a socket cannot be read here)";
  } else {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) refuse = "cannot set blocking reads";
  }
  if (refuse != nullptr) {
    ::close(fd);
    throw Error(detail::concat(what, " ", path, ": ", refuse));
  }
  return fd;
}

namespace {

// A pipe or a device has no size to check against: its reads stop at 1 GiB (/dev/zero would
// otherwise fill the memory).
constexpr size_t kMaxStreamBytes = size_t{1} << 30;

template <class Bytes>
Bytes read_whole(const std::string& path, const std::string& what) {
  const int fd = open_input_file(path, what);
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  Bytes out;
  if (regular) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw Error(detail::concat(what, " ", path, ": read failed (", std::strerror(e), ")"));
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
    if (!regular && out.size() > kMaxStreamBytes) {
      ::close(fd);
      throw Error(detail::concat(what, " ", path, ": more than 1 GiB read from a pipe or device; refused"));
    }
  }
  ::close(fd);
  return out;
}

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path, const std::string& what) {
  return read_whole<std::vector<uint8_t>>(path, what);
}

std::string read_file_text(const std::string& path, const std::string& what) {
  return read_whole<std::string>(path, what);
}

namespace {

// Writes into an existing device or pipe (never replaced by a file).
void write_in_place(const std::string& path, const void* data, size_t size, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    throw Error(detail::concat(what, " ", path, ": cannot open it for writing (",
                               e == ENXIO ? "a pipe that no process reads" : std::strerror(e), ")"));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const auto* p = static_cast<const uint8_t*>(data);
  size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      throw Error(detail::concat(what, " ", path, ": write failed (", std::strerror(e), ")"));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw Error(detail::concat(what, " ", path, ": write failed on close"));
}

}  // namespace

void write_file_atomic(const std::string& path, const void* data, size_t size,
                       const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    BL_CHECK(!S_ISDIR(st.st_mode), what, " ", path, ": is a directory; give a file name");
    write_in_place(path, data, size, what);
    return;
  }
  remove_stale_temporaries(path);
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    throw Error(detail::concat(what, " ", path, ": cannot create ", tmp, " (", std::strerror(e), ")",
                               target_state(path)));
  }
  const auto* p = static_cast<const uint8_t*>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      std::remove(tmp.c_str());
      throw Error(detail::concat(what, " ", path, ": write failed (", std::strerror(e), ")", target_state(path)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;  // always closed, even when fsync failed
  if (!synced || !closed) {
    std::remove(tmp.c_str());
    throw Error(detail::concat(what, " ", path, ": flush failed", target_state(path)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    throw Error(detail::concat(what, " ", path, ": cannot rename ", tmp, " into place (",
                               std::strerror(e), ")", target_state(path)));
  }
}

}  // namespace bl
