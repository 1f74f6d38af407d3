// idx.cpp: the IDX format of MNIST-style data sets (plain or gzip-compressed through zlib).
//
// Layout: two zero bytes, a type byte (0x08 = unsigned byte), the number of dimensions, then each
// dimension as a big-endian uint32, then the row-major data.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "bitlearn/nn/data.h"
#include "bitlearn/io.h"
#include "core/error.h"

namespace bl::nn {

namespace {

// The most data an IDX file may declare: 4 GiB, 80 times Fashion-MNIST's training images. The data
// is read only up to what the header declares (plus one byte to see trailing data), so a small
// gzip file that inflates to far more cannot make the reader allocate beyond it.
constexpr uint64_t kIdxMaxDataBytes = uint64_t{1} << 32;

// An open IDX file, plain or gzip-compressed (gzread reads plain files unchanged).
struct GzReader {
  gzFile f = nullptr;
  std::string path;
  explicit GzReader(const std::string& p) : path(p) {
    const int fd = open_input_file(p, "read_idx: file");
    f = gzdopen(fd, "rb");
    if (f == nullptr) ::close(fd);
    BL_CHECK(f != nullptr, "read_idx: cannot open '", path, "'");
  }
  ~GzReader() { gzclose(f); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to n bytes into dst; returns how many (fewer only at the end of the file).
  size_t read(uint8_t* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      const size_t want = std::min<size_t>(n - done, size_t{1} << 30);
      const int got = gzread(f, dst + done, static_cast<unsigned>(want));
      if (got < 0) {
        int err = 0;
        const std::string msg = gzerror(f, &err);
        throw Error(detail::concat("read_idx: '", path, "' is corrupt or truncated (", msg, ")"));
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    return done;
  }
};

}  // namespace

IdxArray read_idx(const std::string& path) {
  GzReader in(path);
  uint8_t magic[4] = {0, 0, 0, 0};
  const size_t got_magic = in.read(magic, 4);
  BL_CHECK(got_magic == 4, "read_idx: '", path, "' is too short for an IDX header (", got_magic, " bytes)");
  BL_CHECK(magic[0] == 0 && magic[1] == 0, "read_idx: '", path,
           "' does not start with the IDX magic (two zero bytes)");
  BL_CHECK(magic[2] == 0x08, "read_idx: '", path, "' has element type 0x", std::hex,
           static_cast<int>(magic[2]), std::dec, "; only unsigned bytes (0x08) are supported");
  const int ndim = magic[3];
  BL_CHECK(ndim >= 1 && ndim <= 4, "read_idx: '", path, "' declares ", ndim,
           " dimensions; expected 1 to 4");
  uint8_t dims[16];
  BL_CHECK(in.read(dims, 4 * static_cast<size_t>(ndim)) == 4 * static_cast<size_t>(ndim), "read_idx: '", path,
           "' is truncated inside the dimension list");
  IdxArray out;
  uint64_t total = 1;
  for (int d = 0; d < ndim; ++d) {
    const uint8_t* p = dims + 4 * d;
    const uint64_t e = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | p[3];
    out.dims.push_back(static_cast<int64_t>(e));
    total *= e;  // at most 2^32 * 2^32 before the check below stops the loop: no overflow
    BL_CHECK(total <= kIdxMaxDataBytes, "read_idx: '", path, "' declares more than ", kIdxMaxDataBytes,
             " data bytes (the limit of the IDX reader)");
  }
  // Read what the header declares, one byte more to see trailing data, in chunks: the buffer grows
  // with the data actually read, never to a declared size the file does not hold.
  const uint64_t want = total + 1;
  uint64_t have = 0;
  while (have < want) {
    const uint64_t step = std::min<uint64_t>(want - have, uint64_t{1} << 24);
    out.data.resize(static_cast<size_t>(have + step));
    const size_t got = in.read(out.data.data() + have, static_cast<size_t>(step));
    have += got;
    if (got < step) break;
  }
  BL_CHECK(have == total, "read_idx: '", path, "' holds ", have > total ? "more" : std::to_string(have),
           " data bytes but its dimensions need ", total, have < total ? " (truncated)" : " (trailing bytes)");
  out.data.resize(static_cast<size_t>(total));
  return out;
}

}  // namespace bl::nn
