#include "core/error.h"
#include "verify/check.h"

#include <cstring>

namespace bl::verify {

void OutputWriter::put_u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void OutputWriter::put_u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void OutputWriter::header(const std::string& label, char kind, int64_t n) {
  BL_CHECK(n >= 0, "verify output '", label, "': negative element count ", n);
  put_u32(static_cast<uint32_t>(label.size()));
  bytes_.insert(bytes_.end(), label.begin(), label.end());
  bytes_.push_back(static_cast<uint8_t>(kind));
  put_u64(static_cast<uint64_t>(n));
}

// Elements are written byte by byte in little-endian order, so the stream is the same on any host.
void OutputWriter::add_f32(const std::string& label, const float* data, int64_t n) {
  header(label, 'f', n);
  bytes_.reserve(bytes_.size() + static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, data + i, 4);
    put_u32(u);
  }
}

void OutputWriter::add_i64(const std::string& label, const int64_t* data, int64_t n) {
  header(label, 'i', n);
  bytes_.reserve(bytes_.size() + static_cast<size_t>(n) * 8);
  for (int64_t i = 0; i < n; ++i) put_u64(static_cast<uint64_t>(data[i]));
}

void OutputWriter::add_u32(const std::string& label, const uint32_t* data, int64_t n) {
  header(label, 'u', n);
  bytes_.reserve(bytes_.size() + static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) put_u32(data[i]);
}

void require_cpu(const CheckContext& ctx, const char* what) {
  if (ctx.on_cuda()) throw SkipCheck{std::string(what) + " is a CPU-only algorithm (no CUDA path by design)", true};
}

}  // namespace bl::verify
