// rng_fill.cu: the CUDA fill of kernels/rng_fill.h (a grid-stride loop over rng_fill_element).
#include "core/cuda_check.h"
#include "kernels/launch.h"
#include "kernels/rng_fill.h"

namespace bl {

namespace {
__global__ void rng_fill_kernel(RngKind kind, uint64_t seed, uint64_t stream, float a, float b,
                                float* out, int64_t n) {
  int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = rng_fill_element(kind, seed, stream, static_cast<uint64_t>(i), a, b);
}
}  // namespace

void rng_fill_cuda(RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out, int64_t n,
                   const LaunchConfig& config) {
  if (n <= 0) return;
  const int block = config.block > 0 ? config.block : 256;
  int64_t blocks = (n + block - 1) / block;
  if (blocks > 65535) blocks = 65535;  // the grid-stride loop covers the rest
  if (config.grid_cap > 0 && blocks > config.grid_cap) blocks = config.grid_cap;
  rng_fill_kernel<<<static_cast<unsigned>(blocks), block>>>(kind, seed, stream, a, b, out, n);
  BL_CUDA_CHECK(cudaGetLastError());
  BL_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace bl
