// Conformance of the CUDA math map: every function under every launch shape of
// kConformanceLaunchConfigs, with special values and arbitrary bit patterns, compared with the
// scalar reference by memcmp (a quick sample by default, a million elements per function with
// BITLEARN_CUDA_EXHAUSTIVE=1). Sabotage arm: CUDA's fast __expf must be caught.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "core/error.h"
#include "kernels/launch.h"
#include "kernels/math_map.h"

namespace {

using bl::MathFn;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::vector<float> math_inputs(int64_t n, uint64_t seed) {
  std::vector<float> v = bl::conformance::generate_floats(n, seed, 1.0f, 5);
  bl::test_rng::SplitMix64 rng(seed ^ 0x5EEDull);
  const float scales[] = {1.0f, 4.0f, 30.0f, 120.0f, 1e5f};
  for (int64_t i = 0; i < n; ++i) {
    if (i % 3 == 0) v[i] = bl::float_of(static_cast<uint32_t>(rng.next() >> 32));
    else if (i % 5 != 4) v[i] = v[i] * scales[i % 5];
  }
  return v;
}

struct DeviceBuffer {
  float* p = nullptr;
  explicit DeviceBuffer(size_t n) {
    if (n) EXPECT_EQ(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(p); }
};

std::vector<float> cuda_map(MathFn fn, const std::vector<float>& x, const std::vector<float>& y,
                            const bl::LaunchConfig& config) {
  const size_t n = x.size();
  DeviceBuffer dx(n), dy(n), dout(n);
  if (n) {
    cudaMemcpy(dx.p, x.data(), n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dy.p, y.data(), n * 4, cudaMemcpyHostToDevice);
    cudaMemset(dout.p, 0xAB, n * 4);
  }
  if (bl::math_arity(fn) == 2)
    bl::math_map_cuda(fn, dx.p, dy.p, dout.p, static_cast<int64_t>(n), config);
  else
    bl::math_map_cuda(fn, dx.p, dout.p, static_cast<int64_t>(n), config);
  std::vector<float> out(n);
  if (n) cudaMemcpy(out.data(), dout.p, n * 4, cudaMemcpyDeviceToHost);
  return out;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Milliseconds spent computing the reference and on the device (uploads, launches, downloads).
struct SampleTimes {
  double reference_ms = 0.0, device_ms = 0.0;
};

// fn on a sample of each length in lengths (math_inputs: special values, scaled uniforms and
// arbitrary bit patterns) under every launch config of kConformanceLaunchConfigs, against the
// reference by memcmp. The inputs are uploaded once per length; the output is refilled with 0xAB
// before every launch, so a launch shape that skips an element cannot pass on an earlier result.
// Adds the time spent to *t.
void check_every_launch_config(MathFn fn, const std::vector<int64_t>& lengths, SampleTimes* t) {
  const bool binary = bl::math_arity(fn) == 2;
  for (int64_t n : lengths) {
    const std::vector<float> x = math_inputs(n, 10 + n), y = math_inputs(n, 20 + n);
    auto start = std::chrono::steady_clock::now();
    std::vector<float> ref(n);
    bl::math_map_reference(fn, x.data(), binary ? y.data() : nullptr, ref.data(), n);
    t->reference_ms += ms_since(start);
    start = std::chrono::steady_clock::now();
    const size_t bytes = static_cast<size_t>(n) * 4;
    DeviceBuffer dx(n), dy(n), dout(n);
    if (n) {
      ASSERT_EQ(cudaMemcpy(dx.p, x.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dy.p, y.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    }
    std::vector<float> got(n);
    for (const bl::LaunchConfig& c : bl::kConformanceLaunchConfigs) {
      if (n) ASSERT_EQ(cudaMemset(dout.p, 0xAB, bytes), cudaSuccess);
      if (binary)
        bl::math_map_cuda(fn, dx.p, dy.p, dout.p, n, c);
      else
        bl::math_map_cuda(fn, dx.p, dout.p, n, c);
      if (n) ASSERT_EQ(cudaMemcpy(got.data(), dout.p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_TRUE(bl::conformance::bits_equal(
          ref, got,
          std::string(bl::math_fn_name(fn)) + " n=" + std::to_string(n) + " block=" +
              std::to_string(c.block) + " grid_cap=" + std::to_string(c.grid_cap)));
    }
    t->device_ms += ms_since(start);
  }
}

// The default sample: lengths 0, 1, 33, 4097 and 65537 (a grid-stride walk of several rounds under
// the capped launch configs) for every function. The million-element sample of the same inputs is
// MathMapCuda.ExhaustiveMillionElementSample below.
TEST(MathMapCuda, EveryFunctionMatchesReferenceUnderEveryLaunchConfig) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  SampleTimes total;
  for (MathFn fn : bl::all_math_fns()) {
    check_every_launch_config(fn, {0, 1, 33, 4097, 65537}, &total);
    if (HasFatalFailure()) return;
  }
  std::printf("MathMapCuda quick sample: reference %.0f ms, device %.0f ms\n", total.reference_ms,
              total.device_ms);
}

// 1000003 elements per function (a third of them arbitrary bit patterns) under every launch config:
// opt-in with BITLEARN_CUDA_EXHAUSTIVE=1 (ctest -L exhaustive sets it; scripts/gpu-check.sh
// --exhaustive runs it). Prints where the time goes, per function.
TEST(MathMapCuda, ExhaustiveMillionElementSample) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const char* on = std::getenv("BITLEARN_CUDA_EXHAUSTIVE");
  if (!on || std::string(on) != "1") GTEST_SKIP() << "set BITLEARN_CUDA_EXHAUSTIVE=1";
  for (MathFn fn : bl::all_math_fns()) {
    SampleTimes t;
    check_every_launch_config(fn, {1000003}, &t);
    if (HasFatalFailure()) return;
    std::printf("MathMapCuda million-element sample %-10s reference %7.0f ms, device %7.0f ms\n",
                bl::math_fn_name(fn), t.reference_ms, t.device_ms);
  }
}

TEST(MathMapCuda, SpecialValuesAndPowGrid) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<float> s = bl::conformance::special_values();
  for (MathFn fn : bl::all_math_fns()) {
    std::vector<float> x, y;
    for (float a : s)
      for (float b : s) {
        x.push_back(a);
        y.push_back(b);
      }
    std::vector<float> ref(x.size());
    bl::math_map_reference(fn, x.data(), bl::math_arity(fn) == 2 ? y.data() : nullptr, ref.data(),
                           static_cast<int64_t>(x.size()));
    std::vector<float> got = cuda_map(fn, x, y, bl::LaunchConfig{});
    ASSERT_TRUE(bl::conformance::bits_equal(ref, got, bl::math_fn_name(fn)));
  }
}

TEST(MathMapCuda, BadArgumentsThrow) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  DeviceBuffer d(4);
  EXPECT_THROW(bl::math_map_cuda(MathFn::pow, d.p, d.p, 4, bl::LaunchConfig{}), bl::Error);
  EXPECT_THROW(bl::math_map_cuda(MathFn::exp, d.p, d.p, 4, bl::LaunchConfig{100, 0, 0}), bl::Error);
  EXPECT_THROW(bl::math_map_cuda(MathFn::exp, d.p, d.p, -1, bl::LaunchConfig{}), bl::Error);
}

// Sabotage arm: the GPU's fast exponential (__expf) in place of bl::exp, same comparison.
__global__ void fast_exp_kernel(const float* x, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = bl::canonicalize(__expf(x[i]));
}

TEST(MathMapCuda, SabotageFastExpIntrinsicIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 65537;
  std::vector<float> x = math_inputs(n, 3);
  std::vector<float> ref(n), got(n);
  bl::math_map_reference(MathFn::exp, x.data(), nullptr, ref.data(), n);
  DeviceBuffer dx(n), dout(n);
  cudaMemcpy(dx.p, x.data(), n * 4, cudaMemcpyHostToDevice);
  fast_exp_kernel<<<64, 256>>>(dx.p, dout.p, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemcpy(got.data(), dout.p, n * 4, cudaMemcpyDeviceToHost);
  EXPECT_FALSE(bl::conformance::bits_equal(ref, got, "sabotage __expf"));
}

}  // namespace
