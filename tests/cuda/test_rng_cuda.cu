// CUDA backend: Philox words, uniforms and Box-Muller normals generated on the GPU with the same
// contract/rng.h functions must equal the CPU's bit for bit, under every conformance launch shape.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "conformance/harness.h"
#include "contract/rng.h"
#include "core/cuda_check.h"
#include "kernels/launch.h"

namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Grid-stride loop: which thread computes element i does not matter, every value is a pure
// function of (seed, stream, i).
__global__ void rng_fill_kernel(uint64_t seed, uint64_t stream, int64_t n, uint32_t* words,
                                float* uniforms, float* ranged, float* normals) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    uint64_t e = static_cast<uint64_t>(i);
    words[i] = bl::random_u32_element(seed, stream, e);
    uniforms[i] = bl::uniform_element(seed, stream, e);
    ranged[i] = bl::uniform_element(seed, stream, e, -3.0f, 7.5f);
    normals[i] = bl::normal_element(seed, stream, e, 0.25f, 2.0f);
  }
}

struct RngOutputs {
  std::vector<uint32_t> words;
  std::vector<float> uniforms, ranged, normals;
  explicit RngOutputs(int64_t n) : words(n), uniforms(n), ranged(n), normals(n) {}
};

RngOutputs cpu_fill(uint64_t seed, uint64_t stream, int64_t n) {
  RngOutputs o(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t e = static_cast<uint64_t>(i);
    o.words[i] = bl::random_u32_element(seed, stream, e);
    o.uniforms[i] = bl::uniform_element(seed, stream, e);
    o.ranged[i] = bl::uniform_element(seed, stream, e, -3.0f, 7.5f);
    o.normals[i] = bl::normal_element(seed, stream, e, 0.25f, 2.0f);
  }
  return o;
}

RngOutputs gpu_fill(uint64_t seed, uint64_t stream, int64_t n, const bl::LaunchConfig& cfg) {
  RngOutputs o(n);
  uint32_t* words = nullptr;
  float* floats = nullptr;
  BL_CUDA_CHECK(cudaMalloc(&words, n * sizeof(uint32_t)));
  BL_CUDA_CHECK(cudaMalloc(&floats, 3 * n * sizeof(float)));
  int block = cfg.block;
  int64_t blocks_needed = (n + block - 1) / block;
  int grid = static_cast<int>(blocks_needed > 65535 ? 65535 : blocks_needed);
  if (cfg.grid_cap > 0 && grid > cfg.grid_cap) grid = cfg.grid_cap;
  if (grid < 1) grid = 1;
  rng_fill_kernel<<<grid, block>>>(seed, stream, n, words, floats, floats + n, floats + 2 * n);
  BL_CUDA_CHECK(cudaGetLastError());
  BL_CUDA_CHECK(cudaMemcpy(o.words.data(), words, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  BL_CUDA_CHECK(cudaMemcpy(o.uniforms.data(), floats, n * sizeof(float), cudaMemcpyDeviceToHost));
  BL_CUDA_CHECK(cudaMemcpy(o.ranged.data(), floats + n, n * sizeof(float), cudaMemcpyDeviceToHost));
  BL_CUDA_CHECK(cudaMemcpy(o.normals.data(), floats + 2 * n, n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(words);
  cudaFree(floats);
  return o;
}

TEST(RngCuda, MatchesCpuBitwise) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 1 << 20;
  const uint64_t seed = 0x5eed5eed12345678ull, stream = 3;
  RngOutputs cpu = cpu_fill(seed, stream, n);
  for (const bl::LaunchConfig& cfg : bl::kConformanceLaunchConfigs) {
    RngOutputs gpu = gpu_fill(seed, stream, n, cfg);
    std::string where = "block " + std::to_string(cfg.block) + " grid_cap " + std::to_string(cfg.grid_cap);
    EXPECT_TRUE(bl::conformance::bits_equal(cpu.words.data(), gpu.words.data(), n, 4, "words " + where));
    EXPECT_TRUE(bl::conformance::bits_equal(cpu.uniforms, gpu.uniforms, "uniforms " + where));
    EXPECT_TRUE(bl::conformance::bits_equal(cpu.ranged, gpu.ranged, "uniform [-3, 7.5) " + where));
    EXPECT_TRUE(bl::conformance::bits_equal(cpu.normals, gpu.normals, "normals " + where));
  }
}

// Sabotage arm: the same comparison must catch a GPU fill made with another stream (a shifted
// counter layout), so a comparison that always passes cannot hide here.
TEST(RngCuda, SabotageOtherStreamIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 1 << 16;
  RngOutputs cpu = cpu_fill(7, 0, n);
  RngOutputs gpu = gpu_fill(7, 1, n, bl::kConformanceLaunchConfigs[0]);
  EXPECT_FALSE(bl::conformance::bits_equal(cpu.normals, gpu.normals, "normals"));
  EXPECT_FALSE(bl::conformance::bits_equal(cpu.uniforms, gpu.uniforms, "uniforms"));
}

}  // namespace
