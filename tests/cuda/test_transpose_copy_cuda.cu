// Conformance of the CUDA transposing copy (src/kernels/cuda/elementwise_cuda.cu, the tiled path of
// bl::strided_copy_cuda) with strided_copy_reference, by memcmp, for every kernel variant (6: 32 x
// 32 tiles, 7: 64 x 64 tiles, 0 and 8 (default): 64 x 64 tiles in 16-byte quads where aligned, else
// 64 x 64 tiles) and capped grids: 1-, 4- and 8-byte
// elements, edges of every size, batches, padded and unaligned sources (which send variant 8 to its
// element-wise fallback). Sabotage arm: a result with two elements swapped must be caught.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "kernels/backend.h"
#include "kernels/copy.h"
#include "kernels/launch.h"

namespace {

using bl::conformance::bits_equal;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// One transposed read: dst[b][r][c] = src[offset + b * batch_stride + r + c * col_stride].
struct CopyCase {
  int64_t batch, rows, cols;
  int64_t col_pad;    // col_stride = rows + col_pad
  int64_t batch_pad;  // batch_stride = cols * col_stride + batch_pad
  int64_t offset;     // first source element (1 makes 4-byte sources unaligned)
};

std::string case_name(const CopyCase& c, size_t elem, const bl::LaunchConfig& cfg) {
  return "batch=" + std::to_string(c.batch) + " rows=" + std::to_string(c.rows) +
         " cols=" + std::to_string(c.cols) + " col_pad=" + std::to_string(c.col_pad) +
         " batch_pad=" + std::to_string(c.batch_pad) + " offset=" + std::to_string(c.offset) +
         " elem=" + std::to_string(elem) + " block=" + std::to_string(cfg.block) +
         " grid_cap=" + std::to_string(cfg.grid_cap) + " variant=" + std::to_string(cfg.variant);
}

const bl::LaunchConfig kCopyConfigs[] = {{256, 0, 0}, {256, 0, 6}, {256, 5, 6}, {256, 0, 7},
                                         {256, 3, 7}, {256, 0, 8}, {256, 2, 8}, {64, 7, 1}};

// Runs one case for element type T (an unsigned integer of the element size) under every config;
// the source bytes are a counter pattern with float NaN payloads mixed in.
template <typename T>
void check_case(const CopyCase& c) {
  const int64_t col_stride = c.rows + c.col_pad;
  const int64_t batch_stride = c.cols * col_stride + c.batch_pad;
  const int64_t src_len = c.offset + c.batch * batch_stride;
  const int64_t n = c.batch * c.rows * c.cols;
  std::vector<T> src(static_cast<size_t>(src_len));
  for (int64_t i = 0; i < src_len; ++i)
    src[i] = static_cast<T>(static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull >> 17);
  if (sizeof(T) == 4 && src_len > 3) src[3] = static_cast<T>(0x7FC00001u);  // a NaN payload
  bl::StridedView sv;
  sv.ndim = 3;
  sv.shape[0] = c.batch;
  sv.shape[1] = c.rows;
  sv.shape[2] = c.cols;
  sv.strides[0] = batch_stride;
  sv.strides[1] = 1;
  sv.strides[2] = col_stride;
  bl::StridedView dv;
  dv.ndim = 1;
  dv.shape[0] = n;
  dv.strides[0] = 1;
  std::vector<T> expected(static_cast<size_t>(n));
  bl::strided_copy_reference<T>(src.data() + c.offset, sv, expected.data(), dv, n);

  T *d_src = nullptr, *d_dst = nullptr;
  ASSERT_EQ(cudaMalloc(&d_src, src.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_dst, expected.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_src, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  for (const bl::LaunchConfig& cfg : kCopyConfigs) {
    ASSERT_EQ(cudaMemset(d_dst, 0xAB, expected.size() * sizeof(T)), cudaSuccess);
    bl::strided_copy_cuda(sizeof(T), d_src + c.offset, sv, d_dst, dv, n, cfg);
    std::vector<T> got(expected.size());
    ASSERT_EQ(cudaMemcpy(got.data(), d_dst, got.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(bits_equal(expected.data(), got.data(), got.size(), sizeof(T),
                           "transpose copy " + case_name(c, sizeof(T), cfg)));
  }
  cudaFree(d_src);
  cudaFree(d_dst);
}

std::vector<CopyCase> copy_cases() {
  std::vector<CopyCase> cases;
  for (int64_t rows : {2, 3, 4, 31, 64, 65, 131})
    for (int64_t cols : {2, 5, 8, 63, 64, 129}) cases.push_back({1, rows, cols, 0, 0, 0});
  cases.push_back({3, 67, 72, 0, 0, 0});    // batched, cols a multiple of 4
  cases.push_back({3, 67, 72, 4, 8, 0});    // padded columns and batches, still aligned
  cases.push_back({2, 130, 68, 1, 0, 0});   // col_stride not a multiple of 4: no quads
  cases.push_back({2, 128, 128, 0, 3, 0});  // batch stride not a multiple of 4: no quads
  cases.push_back({1, 100, 100, 0, 0, 1});  // unaligned source: no quads
  cases.push_back({1, 1000, 12, 0, 0, 0});  // tall and narrow
  cases.push_back({1, 5, 2000, 0, 0, 0});   // short and wide
  return cases;
}

TEST(TransposeCopyCuda, MatchesReference4Byte) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (const CopyCase& c : copy_cases()) check_case<uint32_t>(c);
}

TEST(TransposeCopyCuda, MatchesReference1And8Byte) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (const CopyCase& c : copy_cases()) {
    check_case<uint8_t>(c);
    check_case<uint64_t>(c);
  }
}

TEST(TransposeCopyCuda, LargeMatrixEveryVariant) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  check_case<uint32_t>({1, 2051, 1030, 0, 0, 0});
  check_case<uint32_t>({1, 2048, 1024, 0, 0, 0});
}

TEST(TransposeCopyCuda, SabotageSwappedElementsAreCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  // The GPU result of every variant must equal the reference, and must differ from the reference
  // with two elements swapped (a copy that transposed one pair wrongly).
  const int64_t rows = 70, cols = 68, n = rows * cols;
  std::vector<uint32_t> src(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
  bl::StridedView sv;
  sv.ndim = 2;
  sv.shape[0] = rows;
  sv.shape[1] = cols;
  sv.strides[0] = 1;
  sv.strides[1] = rows;
  bl::StridedView dv;
  dv.ndim = 1;
  dv.shape[0] = n;
  dv.strides[0] = 1;
  std::vector<uint32_t> expected(static_cast<size_t>(n));
  bl::strided_copy_reference<uint32_t>(src.data(), sv, expected.data(), dv, n);
  std::vector<uint32_t> sabotaged = expected;
  std::swap(sabotaged[1], sabotaged[static_cast<size_t>(cols)]);
  uint32_t *d_src = nullptr, *d_dst = nullptr;
  ASSERT_EQ(cudaMalloc(&d_src, n * sizeof(uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_dst, n * sizeof(uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_src, src.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice), cudaSuccess);
  for (const bl::LaunchConfig& cfg : kCopyConfigs) {
    bl::strided_copy_cuda(4, d_src, sv, d_dst, dv, n, cfg);
    std::vector<uint32_t> got(static_cast<size_t>(n));
    ASSERT_EQ(cudaMemcpy(got.data(), d_dst, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(bits_equal(expected.data(), got.data(), got.size(), 4, "reference"));
    EXPECT_FALSE(bits_equal(sabotaged.data(), got.data(), got.size(), 4, "sabotaged"));
  }
  cudaFree(d_src);
  cudaFree(d_dst);
}

}  // namespace
