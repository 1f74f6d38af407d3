// CUDA cumsum on the block schedule of cumsum.h: one thread per (sequence, block) for the local
// prefixes, one thread per sequence for the offset chain, one thread per element to add offsets.
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/cumsum.h"
#include "kernels/cumsum_check.h"

namespace bl {
namespace {

__global__ void cumsum_local_kernel(const float* x, int64_t n, int64_t inner, int64_t blocks, int64_t jobs,
                                    float* y, float* totals) {
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < jobs;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % inner, rest = g / inner;
    const int64_t b = rest % blocks, o = rest / blocks;
    const int64_t start = b * kCumsumBlock;
    const int64_t len = n - start < kCumsumBlock ? n - start : kCumsumBlock;
    const float* xs = x + (o * n + start) * inner + j;
    float* ys = y + (o * n + start) * inner + j;
    float local = xs[0];
    ys[0] = local;
    for (int64_t i = 1; i < len; ++i) {
      local = add(local, xs[i * inner]);
      ys[i * inner] = local;
    }
    totals[g] = local;  // g == (o * blocks + b) * inner + j
  }
}

// Replaces block totals by block offsets: O_1 = T_0, O_b = O_{b-1} + T_{b-1}.
__global__ void cumsum_offsets_kernel(int64_t outer, int64_t inner, int64_t blocks, float* totals) {
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < outer * inner;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % inner, o = g / inner;
    float* t = totals + o * blocks * inner + j;
    float offset = 0.0f;
    float previous_total = t[0];
    for (int64_t b = 1; b < blocks; ++b) {
      offset = b == 1 ? previous_total : add(offset, previous_total);
      previous_total = t[b * inner];
      t[b * inner] = offset;
    }
  }
}

__global__ void cumsum_add_offsets_kernel(int64_t outer, int64_t n, int64_t inner, int64_t blocks,
                                          const float* offsets, float* y) {
  const int64_t total = outer * n * inner;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % inner, rest = g / inner;
    const int64_t i = rest % n, o = rest / n;
    const int64_t b = i / kCumsumBlock;
    y[g] = canonicalize(b == 0 ? y[g] : add(offsets[(o * blocks + b) * inner + j], y[g]));
  }
}

}  // namespace

void cumsum_cuda(const float* x, ReduceShape shape, float* y, const LaunchConfig& config) {
  const int64_t outer = shape.outer, n = shape.n, inner = shape.inner;
  if (!cumsum_check_args(x, shape, y)) return;
  const int64_t blocks = cumsum_block_count(n);
  const int64_t jobs = outer * blocks * inner;
  cuda::DeviceScratch<float> totals(jobs);
  int block = cuda::fitted_block(cumsum_local_kernel, config);
  cumsum_local_kernel<<<cuda::grid_size((jobs + block - 1) / block, config), block>>>(x, n, inner, blocks, jobs, y,
                                                                                      totals.ptr);
  BL_CUDA_CHECK(cudaGetLastError());
  block = cuda::fitted_block(cumsum_offsets_kernel, config);
  cumsum_offsets_kernel<<<cuda::grid_size((outer * inner + block - 1) / block, config), block>>>(outer, inner,
                                                                                                 blocks, totals.ptr);
  BL_CUDA_CHECK(cudaGetLastError());
  block = cuda::fitted_block(cumsum_add_offsets_kernel, config);
  cumsum_add_offsets_kernel<<<cuda::grid_size((outer * n * inner + block - 1) / block, config), block>>>(
      outer, n, inner, blocks, totals.ptr, y);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl
