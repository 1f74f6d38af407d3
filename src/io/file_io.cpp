// file_io.cpp: whole-file reads and atomic writes (see bitlearn/io.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bitlearn/io.h"
#include "core/error.h"

namespace bl {

std::vector<uint8_t> read_file_bytes(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  BL_CHECK(f.good(), what, " ", path, ": cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  BL_CHECK(!f.bad(), what, " ", path, ": read failed");
  return bytes;
}

std::string read_file_text(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  BL_CHECK(f.good(), what, " ", path, ": cannot open the file");
  std::ostringstream text;
  text << f.rdbuf();
  BL_CHECK(!f.bad(), what, " ", path, ": read failed");
  return text.str();
}

void write_file_atomic(const std::string& path, const void* data, size_t size,
                       const std::string& what) {
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  BL_CHECK(fd >= 0, what, " ", path, ": cannot create ", tmp, " (", std::strerror(errno), ")");
  const auto* p = static_cast<const uint8_t*>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      std::remove(tmp.c_str());
      throw Error(detail::concat(what, " ", path, ": write failed (", std::strerror(e), ")"));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;  // always closed, even when fsync failed
  if (!synced || !closed) {
    std::remove(tmp.c_str());
    throw Error(detail::concat(what, " ", path, ": flush failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    throw Error(detail::concat(what, " ", path, ": cannot rename ", tmp, " into place (",
                               std::strerror(e), ")"));
  }
}

}  // namespace bl
