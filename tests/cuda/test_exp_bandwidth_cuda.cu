// Bandwidth of exp on the GPU: the exp Tensor op, the exp math map and kernel variants
// (one or two float4 per thread and iteration, CUDA's own expf) against a float4 copy kernel and
// cudaMemcpy device to device, on 2^26 floats, both for a constant input (every element takes the
// same path) and for inputs spread over (-90, 90). Prints lines starting with EXPBW; never fails on
// speed (speed targets live in benchmarks), only on wrong bits of the variants.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "bitlearn/tensor.h"
#include "kernels/cuda/exp_quad.cuh"
#include "kernels/launch.h"
#include "kernels/math_map.h"
#include "kernels/softmax.h"

namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

__global__ void copy_quad_kernel(const float4* x, float4* y, int64_t n4) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i];
}

__global__ void cuda_expf_quad_kernel(const float4* x, float4* y, int64_t n4) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    y[i] = make_float4(expf(v.x), expf(v.y), expf(v.z), expf(v.w));
  }
}

__global__ void exp_quad_kernel(const float4* x, float4* y, int64_t n4) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = bl::cuda::exp_quad(x[i]);
}

// Two float4 per thread and iteration (both loads issued before any exp).
__global__ void exp_quad2_kernel(const float4* x, float4* y, int64_t n4) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += 2 * stride) {
    const float4 a = x[i];
    const float4 b = i + stride < n4 ? x[i + stride] : make_float4(0, 0, 0, 0);
    y[i] = bl::cuda::exp_quad(a);
    if (i + stride < n4) y[i + stride] = bl::cuda::exp_quad(b);
  }
}

// Scalar bl::exp per element (the settling step after each element).
__global__ void exp_scalar_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = bl::exp(x[i]);
}

template <class F>
float best_ms(F f, int reps = 10) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best) best = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

TEST(ExpBandwidthCuda, Report) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = int64_t{1} << 26, n4 = n / 4;
  float *x = nullptr, *y = nullptr, *y2 = nullptr;
  ASSERT_EQ(cudaMalloc(&x, n * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, n * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y2, n * 4), cudaSuccess);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const double bytes = 8.0 * n;
  const float t_memcpy = best_ms([&] { cudaMemcpy(y, x, n * 4, cudaMemcpyDeviceToDevice); });
  const double copy_gbs = bytes / (t_memcpy * 1e-3) * 1e-9;
  std::printf("EXPBW cudaMemcpy D2D %.1f GB/s (%.3f ms)\n", copy_gbs, t_memcpy);
  auto report = [&](const std::string& name, float ms) {
    const double gbs = bytes / (ms * 1e-3) * 1e-9;
    std::printf("EXPBW %-44s %8.1f GB/s  ratio %.2f  (%.3f ms)\n", name.c_str(), gbs, gbs / copy_gbs, ms);
  };
  for (int input = 0; input < 2; ++input) {
    std::vector<float> h(n);
    uint64_t s = 99;
    for (auto& v : h) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      v = input == 0 ? 1.5f : -90.0f + 180.0f * static_cast<float>(s >> 40) * 0x1p-24f;
    }
    ASSERT_EQ(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    const std::string in = input == 0 ? " [x = 1.5]" : " [x in (-90, 90)]";
    for (int block : {256, 512}) {
      const int grid = static_cast<int>((n4 + block - 1) / block);
      const std::string b = " block " + std::to_string(block);
      report("copy float4" + b + in, best_ms([&] { copy_quad_kernel<<<grid, block>>>((const float4*)x, (float4*)y, n4); }));
      report("cuda expf float4" + b + in, best_ms([&] { cuda_expf_quad_kernel<<<grid, block>>>((const float4*)x, (float4*)y2, n4); }));
      report("bl exp_quad" + b + in, best_ms([&] { exp_quad_kernel<<<grid, block>>>((const float4*)x, (float4*)y, n4); }));
      report("bl exp_quad x2" + b + in, best_ms([&] { exp_quad2_kernel<<<(grid + 1) / 2, block>>>((const float4*)x, (float4*)y2, n4); }));
    }
    for (int waves : {4, 8, 16}) {
      const int grid = sms * waves;
      report("bl exp_quad block 256 grid " + std::to_string(waves) + "/SM" + in,
             best_ms([&] { exp_quad_kernel<<<grid, 256>>>((const float4*)x, (float4*)y2, n4); }));
    }
    report("bl exp scalar block 256" + in, best_ms([&] { exp_scalar_kernel<<<static_cast<int>(n / 256), 256>>>(x, y2, n); }));
    report("math_map_cuda(exp)" + in, best_ms([&] { bl::math_map_cuda(bl::MathFn::exp, x, y, n, bl::LaunchConfig()); }));
    std::vector<float> a(n), b(n);
    cudaMemcpy(a.data(), y, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(b.data(), y2, n * 4, cudaMemcpyDeviceToHost);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), n * 4), 0) << "exp variants differ" << in;
    bl::Tensor t = bl::Tensor::from_vector(h, {n}, bl::Device::cuda(0));
    report("exp Tensor op" + in, best_ms([&] { bl::Tensor r = bl::exp(t); }));
  }
  // Softmax and log-softmax on rows of 4096 kept on chip: two passes (read n, write n) counted.
  for (bool log_form : {false, true}) {
    const float ms = best_ms([&] { bl::softmax_rows_on_chip_cuda(x, n / 4096, 4096, y, log_form); });
    report(std::string(log_form ? "log_softmax" : "softmax") + " rows of 4096", ms);
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(y2);
}

}  // namespace
