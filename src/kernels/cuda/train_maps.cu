// CUDA training maps (kernels/train_maps.h): one thread per element, grid-stride loops, the element
// functions of the header. Every value is the reference's, for any launch.
#include <cstdint>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/train_maps.h"

namespace bl {
namespace {

__global__ void rope_kernel(RopeArgs a, const float* x, const float* cos, const float* sin, float* y) {
  const int64_t D = a.head_dim, width = a.heads * D, total = a.rows * width;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / width, c = e % width;
    y[e] = rope_element(x + r * width, cos + r * D, sin + r * D, c / D, c % D, D, a.backward);
  }
}

__global__ void train_map_kernel(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2,
                                 float* out0, float* out1) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    train_map_element(op, e, in0, in1, in2, out0, out1);
}

}  // namespace

void rope_cuda(const RopeArgs& a, const float* x, const float* cos, const float* sin, float* y,
               const LaunchConfig& config) {
  rope_check_args(a);
  const int64_t total = a.rows * a.heads * a.head_dim;
  if (total == 0) return;
  const int block = cuda::fitted_block(rope_kernel, config);
  rope_kernel<<<cuda::grid_size((total + block - 1) / block, config), block>>>(a, x, cos, sin, y);
  cuda_sync_check("rope");
}

void train_map_cuda(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                    float* out1, const LaunchConfig& config) {
  BL_CHECK(n >= 0, "train_map: ", n, " elements");
  if (n == 0) return;
  const int block = cuda::fitted_block(train_map_kernel, config);
  train_map_kernel<<<cuda::grid_size((n + block - 1) / block, config), block>>>(op, n, in0, in1, in2, out0, out1);
  cuda_sync_check("train_map");
}

}  // namespace bl
