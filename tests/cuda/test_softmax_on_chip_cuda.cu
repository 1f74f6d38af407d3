// Softmax and log-softmax of rows kept on chip (n <= 8192: one block per row, two memory passes)
// against the scalar reference, bit for bit, under every launch shape of
// kConformanceLaunchConfigs: lengths around the lane (32), float4 and leaf (4096) sizes, primes,
// scales that send e^(x - m) into the subnormal and zero range, special values, unaligned and
// in-place rows, through the softmax kernel and the log-softmax kernel (float max, the lean exp of
// softmax_exp.cuh, binary64 reciprocal division of div_by_reciprocal.h); rows aimed at the
// division (s an even integer, so the tie rule runs; s = 1; e_i subnormal) and the maximum (zero
// maxima of either sign, NaN beside a finite maximum) follow. The other forms of the kernel are
// tested by the kernel lab (dev/cuda/softmax_forms.cu).
// The sabotage arms show that the comparison sees a change of the sum schedule and a division
// without the tie rule.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <iterator>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "core/error.h"
#include "kernels/div_by_reciprocal.h"
#include "kernels/softmax.h"

namespace bl::conformance {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct DeviceFloats {
  float* ptr = nullptr;
  size_t count = 0;
  explicit DeviceFloats(const std::vector<float>& host) : count(host.size()) {
    EXPECT_EQ(cudaMalloc(&ptr, (count + 4) * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), count * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(ptr); }
  std::vector<float> to_host(size_t offset, size_t n) const {
    std::vector<float> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), ptr + offset, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

std::string label(int64_t rows, int64_t n, float scale, bool log_form, const LaunchConfig& c,
                  const char* extra) {
  return std::string(log_form ? "log_softmax" : "softmax") + " rows=" + std::to_string(rows) +
         " n=" + std::to_string(n) + " scale=" + std::to_string(scale) + " block=" +
         std::to_string(c.block) + " grid_cap=" + std::to_string(c.grid_cap) + " variant=" +
         std::to_string(c.variant) + extra;
}

// kConformanceLaunchConfigs, and blocks of one, two, four and eight warps with the whole grid (the
// shapes the kernels take for short rows and for rows of 4096).
std::vector<LaunchConfig> launch_configs() {
  std::vector<LaunchConfig> configs(std::begin(kConformanceLaunchConfigs), std::end(kConformanceLaunchConfigs));
  for (int block : {32, 64, 128, 256}) configs.push_back(LaunchConfig{block, 0, 0});
  return configs;
}

// Out of place at offset 0 and 1 (aligned and unaligned rows), and in place. x holds rows * n + 1
// floats.
void check_rows_of(const std::vector<float>& x, int64_t rows, int64_t n, float scale) {
  for (bool log_form : {false, true}) {
    for (int64_t offset : {0, 1}) {
      std::vector<float> expected(rows * n);
      softmax_reference(x.data() + offset, rows, n, expected.data(), log_form);
      for (const LaunchConfig& c : launch_configs()) {
        DeviceFloats dx(x), dy(std::vector<float>(x.size(), 0.0f));
        softmax_rows_on_chip_cuda(dx.ptr + offset, rows, n, dy.ptr + offset, log_form, c);
        ASSERT_TRUE(bits_equal(expected, dy.to_host(offset, rows * n),
                               label(rows, n, scale, log_form, c, offset ? " unaligned" : "")));
        softmax_rows_on_chip_cuda(dx.ptr + offset, rows, n, dx.ptr + offset, log_form, c);
        ASSERT_TRUE(bits_equal(expected, dx.to_host(offset, rows * n),
                               label(rows, n, scale, log_form, c, " in place")));
      }
    }
  }
}

void check_rows(int64_t rows, int64_t n, float scale, int special_every, uint64_t seed) {
  check_rows_of(generate_floats(rows * n + 1, seed, scale, special_every), rows, n, scale);
}

TEST(SoftmaxOnChipCuda, LengthsScalesAndLaunchShapes) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t lengths[] = {1, 2, 3, 4, 5, 7, 31, 32, 33, 97, 255, 256, 257, 1021, 4092, 4095, 4096, 4097, 6143, 8188, 8191, 8192};
  for (int64_t n : lengths) {
    const int64_t rows = n <= 257 ? 37 : 5;
    for (float scale : {1.0f, 30.0f, 100.0f}) check_rows(rows, n, scale, 0, 1000 + n);
  }
}

TEST(SoftmaxOnChipCuda, SpecialValuesAndManyRows) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  check_rows(64, 4096, 10.0f, 997, 77);   // a NaN, inf or huge value in most rows
  check_rows(64, 768, 10.0f, 1531, 78);   // some rows clean, some not
  check_rows(2000, 12, 5.0f, 0, 79);      // many short rows
  // A row of -inf only (NaN result) and a row with one +inf.
  std::vector<float> x(2 * 100, float_of(0xFF800000u));
  x[150] = float_of(0x7F800000u);
  std::vector<float> expected(x.size());
  softmax_reference(x.data(), 2, 100, expected.data(), false);
  DeviceFloats dx(x), dy(x);
  softmax_rows_on_chip_cuda(dx.ptr, 2, 100, dy.ptr, false);
  ASSERT_TRUE(bits_equal(expected, dy.to_host(0, x.size()), "softmax -inf and +inf rows"));
}

// Rows aimed at the division and the maximum: s an even integer (k maxima, the rest with subnormal or zero e_i:
// the tie rule runs), s a power of two, s = 1 exactly, s with many significand bits, zero maxima
// of either sign (the sign shows in log-softmax), NaN beside a finite maximum, all NaN.
TEST(SoftmaxOnChipCuda, LeanDivisionAndMaximumRows) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const float ninf = float_of(0xFF800000u), nan = float_of(0x7FC00000u);
  for (int64_t n : {int64_t{4096}, int64_t{4093}, int64_t{100}, int64_t{8192}}) {
    const int64_t rows = 12;
    std::vector<float> x = generate_floats(rows * n + 1, 900 + n, 1.0f);
    for (int64_t r = 0; r < rows; ++r) {
      float* xr = x.data() + r * n;
      const int64_t k = r == 0 ? std::min<int64_t>(n, 3994) : r == 1 ? n / 2 : r == 2 ? 1 : r == 3 ? 6 : 0;
      for (int64_t i = 0; i < n; ++i) {
        const float spread = -87.0f - 17.0f * static_cast<float>((i * 7919) % 1000) / 1000.0f;
        if (r <= 3) xr[i] = i < k ? 0.0f : spread;  // e_i = 1 or subnormal / zero: s = k
        if (r == 4) xr[i] = i == 5 ? -0.0f : spread;  // max -0, s = 1
        if (r == 5) xr[i] = i == 5 ? -0.0f : i == 9 ? 0.0f : spread;  // max +0 beside -0
        if (r == 6) xr[i] = i % 3 == 0 ? -0.0f : ninf;  // only -0 and -inf
        if (r == 7 && i == n / 2) xr[i] = nan;  // NaN beside a finite maximum
        if (r == 8) xr[i] = nan;
        if (r == 9) xr[i] = 20.0f * xr[i] - 60.0f;  // spread over (-80, -40)
        if (r == 10) xr[i] = 90.0f * xr[i];  // (-90, 90): most e_i subnormal or zero
      }
    }
    check_rows_of(x, rows, n, 0.0f);
  }
}

// Rows longer than the on-chip kernel's 8192 through softmax_cuda: the long-row kernel (up to
// 57344, one row per block in shared memory) under every launch shape, the three-pass kernels
// (kSoftmaxPassesVariant, and every row past 57344), out of place at offsets 0 and 1 (rows of odd
// length start unaligned) and in place, with special values, the division and maximum rows of
// the test above, and scales that send most e_i to zero.
void check_long_rows_of(const std::vector<float>& x, int64_t rows, int64_t n, float scale) {
  std::vector<LaunchConfig> configs(std::begin(kConformanceLaunchConfigs), std::end(kConformanceLaunchConfigs));
  configs.push_back(LaunchConfig{256, 0, kSoftmaxPassesVariant});
  configs.push_back(LaunchConfig{32, 2, 0});
  for (bool log_form : {false, true}) {
    for (int64_t offset : {0, 1}) {
      std::vector<float> expected(rows * n);
      softmax_reference(x.data() + offset, rows, n, expected.data(), log_form);
      for (const LaunchConfig& c : configs) {
        DeviceFloats dx(x), dy(std::vector<float>(x.size(), 0.0f));
        softmax_cuda(dx.ptr + offset, rows, n, dy.ptr + offset, log_form, c);
        ASSERT_TRUE(bits_equal(expected, dy.to_host(offset, rows * n),
                               label(rows, n, scale, log_form, c, offset ? " long, unaligned" : " long")));
        softmax_cuda(dx.ptr + offset, rows, n, dx.ptr + offset, log_form, c);
        ASSERT_TRUE(bits_equal(expected, dx.to_host(offset, rows * n), label(rows, n, scale, log_form, c, " long, in place")));
      }
    }
  }
}

TEST(SoftmaxOnChipCuda, LongRowsMatchReference) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (int64_t n : {int64_t{8193}, int64_t{12291}, int64_t{50257}, int64_t{57344}, int64_t{57345}}) {
    const int64_t rows = n == 50257 ? 9 : 3;
    for (float scale : {1.0f, 30.0f}) check_long_rows_of(generate_floats(rows * n + 1, 3000 + n, scale), rows, n, scale);
    check_long_rows_of(generate_floats(rows * n + 1, 4000 + n, 10.0f, 4999), rows, n, 10.0f);  // specials
  }
  const float ninf = float_of(0xFF800000u), nan = float_of(0x7FC00000u);
  const int64_t rows = 10, n = 50257;
  std::vector<float> x = generate_floats(rows * n + 1, 5000, 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = x.data() + r * n;
    for (int64_t i = 0; i < n; ++i) {
      const float spread = -87.0f - 17.0f * static_cast<float>((i * 7919) % 1000) / 1000.0f;
      if (r <= 1) xr[i] = i < (r == 0 ? 3994 : 2) ? 0.0f : spread;  // s an even integer: the tie rule
      if (r == 2) xr[i] = i == 5 ? -0.0f : spread;                   // max -0
      if (r == 3) xr[i] = i == 5 ? -0.0f : i == 40000 ? 0.0f : spread;  // max +0 beside -0
      if (r == 4) xr[i] = i % 3 == 0 ? -0.0f : ninf;
      if (r == 5 && i == n / 2) xr[i] = nan;
      if (r == 6) xr[i] = ninf;
      if (r == 7 && i == 77) xr[i] = float_of(0x7F800000u);
      if (r == 8) xr[i] = 90.0f * xr[i];
    }
  }
  check_long_rows_of(x, rows, n, 0.0f);
}

// Sabotage arm: against a reference that divides by a binary32 reciprocal (e_i * RN32(1 / s)),
// the kernel's output must be seen as different (and equal the true reference).
TEST(SoftmaxOnChipCuda, SabotageBinary32ReciprocalIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 8, n = 4096;
  const std::vector<float> x = generate_floats(rows * n, 4244, 4.0f);
  std::vector<float> expected(rows * n), sabotaged(rows * n);
  softmax_reference(x.data(), rows, n, expected.data(), false);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    const float m = reference_reduce_one<StepMax>(xr, n, 1, 0.0f);
    const float s = reference_reduce_one<StepExpShift>(xr, n, 1, m);
    const float inverse = div(1.0f, s);
    for (int64_t i = 0; i < n; ++i) sabotaged[r * n + i] = mul(exp(sub(xr[i], m)), inverse);
  }
  DeviceFloats dx(x), dy(x);
  for (int block : {128, 256}) {
    softmax_rows_on_chip_cuda(dx.ptr, rows, n, dy.ptr, false, LaunchConfig{block, 0, 0});
    EXPECT_FALSE(bits_equal(sabotaged, dy.to_host(0, rows * n), "binary32 reciprocal"));
    EXPECT_TRUE(bits_equal(expected, dy.to_host(0, rows * n), "library"));
  }
}

TEST(SoftmaxOnChipCuda, RowTooLongIsAClearError) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  DeviceFloats dx(std::vector<float>(8193, 0.0f));
  EXPECT_THROW(softmax_rows_on_chip_cuda(dx.ptr, 1, 8193, dx.ptr, false), Error);
  EXPECT_THROW(softmax_rows_on_chip_cuda(dx.ptr, -1, 4, dx.ptr, true), Error);
}

// A reference whose denominator adds the e_i in plain ascending order (not the lane schedule): what
// the sabotage arms below must tell apart from the kernels' output.
std::vector<float> ascending_sum_rows(const std::vector<float>& x, int64_t rows, int64_t n, bool log_form) {
  std::vector<float> out(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    float m = xr[0];
    for (int64_t i = 1; i < n; ++i) m = max(m, xr[i]);
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s = add(s, exp(sub(xr[i], m)));
    for (int64_t i = 0; i < n; ++i)
      out[r * n + i] = log_form ? log_softmax_element(xr[i], m, log(s)) : softmax_element(xr[i], m, s);
  }
  return out;
}

// Sabotage arm: the same comparison against a reference whose denominator adds the e_i in plain
// ascending order (not the lane schedule) must find a difference.
TEST(SoftmaxOnChipCuda, SabotageOtherSumOrderIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 8, n = 4096;
  const std::vector<float> x = generate_floats(rows * n, 4243, 4.0f);
  const std::vector<float> sabotaged = ascending_sum_rows(x, rows, n, false);
  DeviceFloats dx(x), dy(x);
  softmax_rows_on_chip_cuda(dx.ptr, rows, n, dy.ptr, false);
  EXPECT_FALSE(bits_equal(sabotaged, dy.to_host(0, rows * n), "ascending-order denominator"));
  std::vector<float> expected(rows * n);
  softmax_reference(x.data(), rows, n, expected.data(), false);
  EXPECT_TRUE(bits_equal(expected, dy.to_host(0, rows * n), "library"));
}

// Sabotage arm of the log-softmax kernel: rows of one 0 (the maximum, first) and e_i = e^-17.33
// below half a unit of 1 elsewhere. Added in ascending order every e_i is lost (s = 1, so the
// maximum's output is 0); on the lane schedule the lanes sum their e_i first (s > 1). The
// comparison must see the difference.
TEST(SoftmaxOnChipCuda, SabotageOtherSumOrderIsCaughtLogForm) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 8, n = 4096;
  std::vector<float> x(rows * n, -17.33f);
  for (int64_t r = 0; r < rows; ++r) x[r * n] = 0.0f;
  const std::vector<float> sabotaged = ascending_sum_rows(x, rows, n, true);
  DeviceFloats dx(x), dy(x);
  softmax_rows_on_chip_cuda(dx.ptr, rows, n, dy.ptr, true);
  EXPECT_FALSE(bits_equal(sabotaged, dy.to_host(0, rows * n), "ascending-order denominator"));
  std::vector<float> expected(rows * n);
  softmax_reference(x.data(), rows, n, expected.data(), true);
  EXPECT_TRUE(bits_equal(expected, dy.to_host(0, rows * n), "library"));
}

// Sabotage arms of the long-row kernel (rows of 8193..57344 through softmax_cuda, every launch
// shape that keeps it): against references whose denominator adds the e_i in plain ascending
// order, both forms, the kernel's output must be seen as different (and equal the true reference).
// The log form uses the rows of the arm above: one 0 and e_i = e^-17.33 below half a unit of 1, so
// an ascending sum loses every e_i.
TEST(SoftmaxOnChipCuda, SabotageOtherSumOrderIsCaughtLongRows) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 3, n = 50257;
  for (bool log_form : {false, true}) {
    std::vector<float> x = generate_floats(rows * n, 4245, 4.0f);
    if (log_form) {
      for (int64_t i = 0; i < rows * n; ++i) x[i] = i % n == 0 ? 0.0f : -17.33f;
    }
    const std::vector<float> sabotaged = ascending_sum_rows(x, rows, n, log_form);
    std::vector<float> expected(rows * n);
    softmax_reference(x.data(), rows, n, expected.data(), log_form);
    for (const LaunchConfig& c : kConformanceLaunchConfigs) {
      DeviceFloats dx(x), dy(x);
      softmax_cuda(dx.ptr, rows, n, dy.ptr, log_form, c);
      const std::string what = std::string(log_form ? "log form" : "softmax") + " block " + std::to_string(c.block);
      EXPECT_FALSE(bits_equal(sabotaged, dy.to_host(0, rows * n), "ascending-order denominator, " + what));
      EXPECT_TRUE(bits_equal(expected, dy.to_host(0, rows * n), "library, " + what));
    }
  }
}

}  // namespace
}  // namespace bl::conformance
