// Conformance of the CUDA row forms of the strided copy and of binary f32 maps
// (src/kernels/cuda/elementwise_cuda.cu): contiguous blocks, rows whose last dimension has stride 1
// (slices, concatenation, permutes keeping the last dimension), in 16-byte quads where aligned and
// element by element where not, and binary maps against one broadcast value or over rows with
// broadcast leading dimensions. Each is compared by memcmp with the scalar references
// (strided_copy_reference, binary_f32_reference) under every launch shape of
// kConformanceLaunchConfigs. Sabotage arm: a row copy read with the rows' leading strides swapped
// must be caught.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "kernels/backend.h"
#include "kernels/binary.h"
#include "kernels/copy.h"
#include "kernels/launch.h"

namespace {

using bl::conformance::bits_equal;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

bl::StridedView view_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  bl::StridedView v;
  v.ndim = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  return v;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// Elements a view reaches from its base (the largest offset + 1).
int64_t extent_of(const bl::StridedView& v) {
  int64_t last = 0;
  for (int d = 0; d < v.ndim; ++d) last += (v.shape[d] - 1) * v.strides[d];
  return last + 1;
}

template <typename T>
std::vector<T> pattern(int64_t n, uint64_t seed) {
  std::vector<T> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<T>((static_cast<uint64_t>(i) + seed) * 0x9E3779B97F4A7C15ull >> 23);
  return out;
}

template <typename T>
struct DeviceBuf {
  T* ptr = nullptr;
  explicit DeviceBuf(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(&ptr, host.size() * sizeof(T) + 64), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> read(size_t n) const {
    std::vector<T> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  ~DeviceBuf() { cudaFree(ptr); }
};

struct CopyCase {
  std::vector<int64_t> shape, src_strides, dst_strides;
  int64_t src_offset, dst_offset;  // elements (1 makes 4-byte rows unaligned)
};

std::string copy_name(const CopyCase& c, size_t elem, const bl::LaunchConfig& cfg) {
  std::string s = "shape";
  for (int64_t e : c.shape) s += " " + std::to_string(e);
  s += " src strides";
  for (int64_t e : c.src_strides) s += " " + std::to_string(e);
  s += " dst strides";
  for (int64_t e : c.dst_strides) s += " " + std::to_string(e);
  return s + " offsets " + std::to_string(c.src_offset) + "/" + std::to_string(c.dst_offset) + " elem " +
         std::to_string(elem) + " block " + std::to_string(cfg.block) + " grid_cap " + std::to_string(cfg.grid_cap);
}

template <typename T>
void check_copy(const CopyCase& c) {
  const bl::StridedView sv = view_of(c.shape, c.src_strides), dv = view_of(c.shape, c.dst_strides);
  const int64_t n = numel(c.shape);
  const std::vector<T> src = pattern<T>(c.src_offset + extent_of(sv), 3);
  const std::vector<T> dst0 = pattern<T>(c.dst_offset + extent_of(dv), 11);  // untouched gaps stay
  std::vector<T> expected = dst0;
  bl::strided_copy_reference<T>(src.data() + c.src_offset, sv, expected.data() + c.dst_offset, dv, n);
  DeviceBuf<T> d_src(src);
  for (const bl::LaunchConfig& cfg : bl::kConformanceLaunchConfigs) {
    DeviceBuf<T> d_dst(dst0);
    bl::strided_copy_cuda(sizeof(T), d_src.ptr + c.src_offset, sv, d_dst.ptr + c.dst_offset, dv, n, cfg);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_TRUE(bits_equal(expected.data(), d_dst.read(expected.size()).data(), expected.size(), sizeof(T),
                           "row copy " + copy_name(c, sizeof(T), cfg)));
  }
}

std::vector<CopyCase> copy_cases() {
  return {
      {{1}, {1}, {1}, 0, 0},
      {{3}, {1}, {1}, 0, 0},
      {{1000003}, {1}, {1}, 0, 0},                         // contiguous, quads and a tail
      {{1000003}, {1}, {1}, 1, 0},                         // unaligned source: element by element
      {{48, 1024}, {8192, 1}, {1024, 1}, 0, 0},            // the first rows of each batch (slice)
      {{48, 1024}, {1024, 1}, {8192, 1}, 0, 0},            // into a slice (concatenation)
      {{48, 1024}, {8192, 1}, {1024, 1}, 0, 1},            // unaligned destination
      {{4, 12, 33, 64}, {25344, 64, 768, 1}, {25344, 2112, 64, 1}, 0, 0},  // [B,T,H,D] -> [B,H,T,D]
      {{4, 33, 12, 64}, {25344, 64, 2112, 1}, {25344, 768, 64, 1}, 0, 0},  // and back
      {{5, 7, 13}, {200, 20, 1}, {91, 13, 1}, 0, 0},       // rows of 13: not quads
      {{5, 7, 16}, {202, 22, 1}, {112, 16, 1}, 0, 0},      // leading strides not multiples of 4
      {{3, 1, 8}, {8, 8, 1}, {8, 8, 1}, 2, 0},             // unaligned source rows
      {{2, 3, 4, 5, 8}, {1000, 300, 70, 10, 1}, {480, 160, 40, 8, 1}, 0, 0},  // five dimensions
      {{7, 0}, {8, 1}, {8, 1}, 0, 0},                      // empty
  };
}

TEST(RowMapsCuda, CopiesMatchReference) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (const CopyCase& c : copy_cases()) {
    if (numel(c.shape) == 0) continue;  // the op returns before any kernel for no elements
    check_copy<uint32_t>(c);
    check_copy<uint8_t>(c);
    check_copy<uint64_t>(c);
  }
}

struct MapCase {
  std::vector<int64_t> shape, a_strides, b_strides;
  int64_t a_offset, b_offset;
};

TEST(RowMapsCuda, BinaryBroadcastFormsMatchReference) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const MapCase cases[] = {
      {{4097}, {1}, {0}, 0, 0},                          // b one value, a tail of 1
      {{4099}, {0}, {1}, 0, 0},                          // a one value
      {{8}, {1}, {0}, 0, 3},                             // the value anywhere (no alignment needed)
      {{4097}, {1}, {0}, 1, 0},                          // unaligned a: the generic kernel
      {{48, 1024}, {8192, 1}, {1024, 1}, 0, 0},          // a slice plus a contiguous part
      {{31, 64}, {0, 1}, {64, 1}, 0, 0},                 // a row broadcast over rows
      {{6, 5, 32}, {0, 32, 1}, {160, 32, 1}, 0, 0},      // a leading broadcast
      {{6, 5, 32}, {160, 32, 1}, {200, 40, 1}, 0, 4},    // padded rows
      {{6, 5, 30}, {150, 30, 1}, {160, 32, 1}, 0, 0},    // rows of 30: not quads
      {{6, 5, 32}, {160, 32, 1}, {160, 32, 1}, 0, 1},    // unaligned b
  };
  const std::vector<float> specials = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e-45f, -3e-39f,
                                       3.4e38f};
  for (const MapCase& c : cases) {
    const bl::StridedView va = view_of(c.shape, c.a_strides), vb = view_of(c.shape, c.b_strides);
    const int64_t n = numel(c.shape);
    std::vector<float> a(static_cast<size_t>(c.a_offset + extent_of(va)));
    std::vector<float> b(static_cast<size_t>(c.b_offset + extent_of(vb)));
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = i % 7 == 3 ? specials[i % specials.size()] : static_cast<float>(i % 1013) * 0.37f - 150.0f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = i % 5 == 1 ? specials[(i / 5) % specials.size()] : static_cast<float>(i % 997) * -0.29f + 77.0f;
    if (c.b_strides[0] == 0 && c.shape.size() == 1) b[c.b_offset] = 1.75f;
    DeviceBuf<float> d_a(a), d_b(b);
    DeviceBuf<float> d_out(std::vector<float>(static_cast<size_t>(n)));
    for (int k = 0; k < static_cast<int>(bl::BinaryOp::count_); ++k) {
      const bl::BinaryOp op = static_cast<bl::BinaryOp>(k);
      std::vector<float> expected(static_cast<size_t>(n));
      bl::binary_f32_reference(op, a.data() + c.a_offset, va, b.data() + c.b_offset, vb, expected.data(), n);
      for (const bl::LaunchConfig& cfg : bl::kConformanceLaunchConfigs) {
        bl::binary_cuda(op, bl::DType::f32, d_a.ptr + c.a_offset, va, d_b.ptr + c.b_offset, vb, d_out.ptr, n, cfg);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        ASSERT_TRUE(bits_equal(expected.data(), d_out.read(static_cast<size_t>(n)).data(), static_cast<size_t>(n), 4,
                               std::string(bl::binary_op_name(op)) + " case " + std::to_string(&c - cases) +
                                   " block " + std::to_string(cfg.block) + " grid_cap " +
                                   std::to_string(cfg.grid_cap)));
      }
    }
  }
}

TEST(RowMapsCuda, SabotageSwappedLeadingStridesAreCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  // [4, 6, 8] rows of a [6, 4, 8] source: reading it with the two leading strides swapped (a row
  // form that located rows wrongly) must give bytes other than the GPU copy's.
  const CopyCase c{{4, 6, 8}, {8, 32, 1}, {48, 8, 1}, 0, 0};
  const bl::StridedView sv = view_of(c.shape, c.src_strides), dv = view_of(c.shape, c.dst_strides);
  const bl::StridedView wrong = view_of(c.shape, {32, 8, 1});
  const int64_t n = numel(c.shape);
  const std::vector<uint32_t> src = pattern<uint32_t>(extent_of(sv), 5);
  std::vector<uint32_t> expected(static_cast<size_t>(n)), sabotaged(static_cast<size_t>(n));
  bl::strided_copy_reference<uint32_t>(src.data(), sv, expected.data(), dv, n);
  bl::strided_copy_reference<uint32_t>(src.data(), wrong, sabotaged.data(), dv, n);
  DeviceBuf<uint32_t> d_src(src), d_dst(std::vector<uint32_t>(static_cast<size_t>(n)));
  bl::strided_copy_cuda(4, d_src.ptr, sv, d_dst.ptr, dv, n, bl::kConformanceLaunchConfigs[0]);
  const std::vector<uint32_t> got = d_dst.read(static_cast<size_t>(n));
  EXPECT_TRUE(bits_equal(expected.data(), got.data(), got.size(), 4, "row copy"));
  EXPECT_FALSE(bits_equal(sabotaged.data(), got.data(), got.size(), 4, "sabotaged row copy"));
}

}  // namespace
