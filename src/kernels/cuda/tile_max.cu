// tile_max.cu: CUDA max pooling over k x k tiles (see kernels/tile_max.h). One thread per output
// (forward) or input-gradient (backward) element; every element is computed alone, so the launch
// shape never changes the bits.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/tile_max.h"

namespace bl {
namespace {

__global__ void tile_max_kernel(const float* x, TileMaxShape s, int64_t total, float* y, int32_t* arg) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total; o += stride)
    tile_max_one(x, s, o, y, arg);
}

__global__ void tile_max_backward_kernel(const float* g, const int32_t* arg, TileMaxShape s, int64_t total,
                                         float* dx) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total; i += stride)
    dx[i] = tile_max_grad_one(g, arg, s, i);
}

}  // namespace

void tile_max_cuda(const float* x, TileMaxShape s, float* y, int32_t* arg, const LaunchConfig& config) {
  tile_max_check(s);
  const int64_t total = s.out_numel();
  if (total == 0) return;
  cuda::GridShape shape = cuda::grid_for(total, config);
  tile_max_kernel<<<shape.blocks, shape.threads>>>(x, s, total, y, arg);
  cuda_sync_check("tile_max");
}

void tile_max_backward_cuda(const float* g, const int32_t* arg, TileMaxShape s, float* dx,
                            const LaunchConfig& config) {
  tile_max_check(s);
  const int64_t total = s.n * s.h * s.w * s.c;
  if (total == 0) return;
  cuda::GridShape shape = cuda::grid_for(total, config);
  tile_max_backward_kernel<<<shape.blocks, shape.threads>>>(g, arg, s, total, dx);
  cuda_sync_check("tile_max_backward");
}

}  // namespace bl
