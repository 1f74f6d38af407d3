// The binary64 exp in device code (contract/math/exp_f64.h): bl::exp on the GPU (math map and
// softmax) must give the float-float reference's bits. Counts how often the rounding test sends an
// input to the float-float fallback (rare), and runs the sabotage variants (too small an error
// bound, no rounding test) that must be caught on the hard inputs and a sample.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "kernels/launch.h"
#include "kernels/math_map.h"
#include "math/exp_f64_cases.h"

namespace {

using exp_f64_cases::Variant;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Every 251st bit pattern over all 2^32 (about 17 million inputs: all exponents, both signs),
// the special values and the hard inputs.
std::vector<float> sample_inputs() {
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 251) x.push_back(bl::float_of(uint32_t(u)));
  for (float s : bl::conformance::special_values()) x.push_back(s);
  for (float h : exp_f64_cases::hard_inputs()) x.push_back(h);
  return x;
}

std::vector<float> reference_exp(const std::vector<float>& x) {
  std::vector<float> ref(x.size());
  bl::math_map_reference(bl::MathFn::exp, x.data(), nullptr, ref.data(),
                         static_cast<int64_t>(x.size()));
  return ref;
}

// Counts are integers: atomicAdd on them is exact in any order.
__global__ void exp_variant_kernel(const float* x, float* out, int64_t n, Variant v,
                                   unsigned long long* fell_back) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    bool fb = false;
    out[i] = bl::canonicalize(exp_f64_cases::exp_variant(x[i], v, &fb));
    if (fb) atomicAdd(fell_back, 1ull);
  }
}

struct DeviceRun {
  std::vector<float> out;
  unsigned long long fell_back = 0;
};

DeviceRun run_variant(const std::vector<float>& x, Variant v) {
  const size_t n = x.size();
  float *dx = nullptr, *dout = nullptr;
  unsigned long long* dcount = nullptr;
  EXPECT_EQ(cudaMalloc(&dx, n * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dout, n * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dcount, sizeof(unsigned long long)), cudaSuccess);
  cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(dcount, 0, sizeof(unsigned long long));
  exp_variant_kernel<<<1024, 256>>>(dx, dout, static_cast<int64_t>(n), v, dcount);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  DeviceRun r;
  r.out.resize(n);
  cudaMemcpy(r.out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(&r.fell_back, dcount, sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
  cudaFree(dcount);
  return r;
}

int64_t count_wrong(const std::vector<float>& ref, const std::vector<float>& got) {
  int64_t wrong = 0;
  for (size_t i = 0; i < ref.size(); ++i) wrong += bl::bits_of(ref[i]) != bl::bits_of(got[i]);
  return wrong;
}

std::vector<float> math_map_exp(const std::vector<float>& x, const bl::LaunchConfig& config) {
  const size_t n = x.size();
  float *dx = nullptr, *dout = nullptr;
  EXPECT_EQ(cudaMalloc(&dx, n * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dout, n * 4), cudaSuccess);
  cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
  bl::math_map_cuda(bl::MathFn::exp, dx, dout, static_cast<int64_t>(n), config);
  std::vector<float> out(n);
  cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
  return out;
}

TEST(ExpF64Cuda, MathMapExpMatchesReferenceOnHardInputsAndSample) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<float> x = sample_inputs();
  const std::vector<float> ref = reference_exp(x);
  for (const bl::LaunchConfig& c : bl::kConformanceLaunchConfigs)
    ASSERT_TRUE(bl::conformance::bits_equal(ref, math_map_exp(x, c),
                                            "exp block=" + std::to_string(c.block)));
}

TEST(ExpF64Cuda, ShippedVariantFallbackIsRareAndResultsMatch) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> x = sample_inputs();
  const std::vector<float> ref = reference_exp(x);
  const DeviceRun r = run_variant(x, exp_f64_cases::kShipped);
  EXPECT_EQ(count_wrong(ref, r.out), 0);
  std::printf("exp_f64 on the device: %zu inputs, %llu decided by the float-float fallback\n",
              x.size(), r.fell_back);
  EXPECT_GE(r.fell_back, 1ull);  // the hard inputs are in the sample
  EXPECT_LT(r.fell_back, x.size() / 4096);
  // The hard inputs alone: every one correct.
  const std::vector<float> hard = exp_f64_cases::hard_inputs();
  EXPECT_EQ(count_wrong(reference_exp(hard), run_variant(hard, exp_f64_cases::kShipped).out), 0);
}

TEST(ExpF64Cuda, LowDegreeWithHonestMarginStaysCorrect) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> x = sample_inputs();
  const DeviceRun r = run_variant(x, exp_f64_cases::kLowDegreeHonest);
  EXPECT_EQ(count_wrong(reference_exp(x), r.out), 0);
  EXPECT_GT(r.fell_back, 100ull);
}

TEST(ExpF64Cuda, SabotageTooSmallErrorBoundIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> x = sample_inputs();
  EXPECT_GT(count_wrong(reference_exp(x), run_variant(x, exp_f64_cases::kTooSmallBound).out), 0);
}

TEST(ExpF64Cuda, SabotageTooSmallUlpMarginIsCaughtByHardInputs) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> x = exp_f64_cases::hard_inputs();
  EXPECT_GT(count_wrong(reference_exp(x), run_variant(x, exp_f64_cases::kTooSmallUlpMargin).out), 0);
}

TEST(ExpF64Cuda, SabotageNoRoundingTestIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> x = exp_f64_cases::hard_inputs();
  EXPECT_GT(count_wrong(reference_exp(x), run_variant(x, exp_f64_cases::kNoRoundingTest).out), 0);
}

// All 2^32 inputs on the device, integer counts only: counts[0] = results that differ from the
// float-float path evaluated on the same device (itself equal to the CPU's, see the sweep),
// counts[1] = inputs sent to the fallback; *first_wrong = the smallest differing input.
// shipped = true tests bl::exp itself; otherwise the variant v.
__global__ void all_inputs_kernel(bool shipped, Variant v, unsigned long long* counts,
                                  unsigned int* first_wrong) {
  const uint64_t total = uint64_t{1} << 32;
  for (uint64_t u = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; u < total;
       u += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float x = bl::float_of(static_cast<uint32_t>(u));
    bool fb = false;
    const float y = shipped ? bl::exp(x) : exp_f64_cases::exp_variant(x, v, &fb);
    if (shipped) {
      bool hard = false;
      bl::exp_f64_detail::exp_f64_fast(x, bl::exp_f64_detail::kExpF64Degree,
                                       bl::exp_f64_detail::kExpF64MarginBits, &hard);
      fb = hard;
    }
    const float ref = bl::exp_log_detail::exp_float_float(x);
    if (bl::bits_of(y) != bl::bits_of(ref)) {
      atomicAdd(&counts[0], 1ull);
      atomicMin(first_wrong, static_cast<unsigned int>(u));
    }
    if (fb) atomicAdd(&counts[1], 1ull);
  }
}

struct AllInputs {
  unsigned long long wrong = 0, fell_back = 0;
  unsigned int first_wrong = 0xFFFFFFFFu;
};

AllInputs run_all_inputs(bool shipped, Variant v) {
  unsigned long long* dcounts = nullptr;
  unsigned int* dfirst = nullptr;
  EXPECT_EQ(cudaMalloc(&dcounts, 2 * sizeof(unsigned long long)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dfirst, sizeof(unsigned int)), cudaSuccess);
  cudaMemset(dcounts, 0, 2 * sizeof(unsigned long long));
  cudaMemset(dfirst, 0xFF, sizeof(unsigned int));
  all_inputs_kernel<<<4096, 256>>>(shipped, v, dcounts, dfirst);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned long long counts[2] = {0, 0};
  AllInputs r;
  cudaMemcpy(counts, dcounts, sizeof counts, cudaMemcpyDeviceToHost);
  cudaMemcpy(&r.first_wrong, dfirst, sizeof(unsigned int), cudaMemcpyDeviceToHost);
  r.wrong = counts[0];
  r.fell_back = counts[1];
  cudaFree(dcounts);
  cudaFree(dfirst);
  return r;
}

TEST(ExpF64Cuda, AllInputsShippedExpEqualsFloatFloatOnDevice) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const AllInputs r = run_all_inputs(true, exp_f64_cases::kShipped);
  std::printf("exp_f64 all 2^32 inputs on the device: %llu differ from float-float, %llu decided by "
              "the fallback (first differing input 0x%08X)\n",
              r.wrong, r.fell_back, r.first_wrong);
  EXPECT_EQ(r.wrong, 0ull);
  EXPECT_LT(r.fell_back, (1ull << 32) / 4096);
}

TEST(ExpF64Cuda, AllInputsWithoutRoundingTest) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  // Report: the shipped polynomial rounded without the test (how much the test protects).
  const AllInputs bare = run_all_inputs(false, exp_f64_cases::kShippedWithoutTest);
  std::printf("exp_f64 all 2^32 inputs, degree 12 without the rounding test: %llu misrounded "
              "(first 0x%08X)\n", bare.wrong, bare.first_wrong);
  // Sabotage: degree 11 without the test must misround somewhere.
  const AllInputs sab = run_all_inputs(false, exp_f64_cases::kNoRoundingTest);
  std::printf("exp_f64 all 2^32 inputs, degree 11 without the rounding test: %llu misrounded "
              "(first 0x%08X)\n", sab.wrong, sab.first_wrong);
  EXPECT_GT(sab.wrong, 0ull);
}

}  // namespace
