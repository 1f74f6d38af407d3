// idx.cpp: the IDX format of MNIST-style data sets (plain or gzip-compressed through zlib).
//
// Layout: two zero bytes, a type byte (0x08 = unsigned byte), the number of dimensions, then each
// dimension as a big-endian uint32, then the row-major data.
#include <zlib.h>

#include <cstdio>

#include "bitlearn/nn/data.h"
#include "core/error.h"

namespace bl::nn {

namespace {

std::vector<uint8_t> read_gzip_or_plain(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files unchanged
  BL_CHECK(f != nullptr, "read_idx: cannot open '", path, "'");
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    int got = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      throw Error(detail::concat("read_idx: '", path, "' is corrupt or truncated (", msg, ")"));
    }
    if (got == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + got);
  }
  gzclose(f);
  return out;
}

}  // namespace

IdxArray read_idx(const std::string& path) {
  std::vector<uint8_t> bytes = read_gzip_or_plain(path);
  BL_CHECK(bytes.size() >= 4, "read_idx: '", path, "' is too short for an IDX header (", bytes.size(),
           " bytes)");
  BL_CHECK(bytes[0] == 0 && bytes[1] == 0, "read_idx: '", path,
           "' does not start with the IDX magic (two zero bytes)");
  BL_CHECK(bytes[2] == 0x08, "read_idx: '", path, "' has element type 0x", std::hex,
           static_cast<int>(bytes[2]), std::dec, "; only unsigned bytes (0x08) are supported");
  int ndim = bytes[3];
  BL_CHECK(ndim >= 1 && ndim <= 4, "read_idx: '", path, "' declares ", ndim,
           " dimensions; expected 1 to 4");
  size_t header = 4 + 4 * static_cast<size_t>(ndim);
  BL_CHECK(bytes.size() >= header, "read_idx: '", path, "' is truncated inside the dimension list");
  IdxArray out;
  uint64_t total = 1;
  for (int d = 0; d < ndim; ++d) {
    const uint8_t* p = bytes.data() + 4 + 4 * d;
    uint64_t e = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | p[3];
    out.dims.push_back(static_cast<int64_t>(e));
    total *= e;
    BL_CHECK(total <= (uint64_t{1} << 40), "read_idx: '", path, "' declares an implausible size");
  }
  uint64_t have = bytes.size() - header;
  BL_CHECK(have == total, "read_idx: '", path, "' holds ", have, " data bytes but its dimensions need ",
           total, have < total ? " (truncated)" : " (trailing bytes)");
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

}  // namespace bl::nn
