// im2col.cu: CUDA patch matrix of a convolution window (see kernels/im2col.h): one thread per
// output element, each a bit copy, so the launch shape never changes the result.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/im2col.h"

namespace bl {
namespace {

__global__ void im2col_kernel(const float* x, Im2colShape s, float pad_value, int64_t total, float* out) {
  const int64_t kk = s.kernel_h * s.kernel_w;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total; e += stride) {
    const int64_t j = e % s.c, p = (e / s.c) % kk, m = e / (s.c * kk);
    const int64_t src = im2col_source(s, m, p);
    out[e] = src < 0 ? pad_value : x[src + j];
  }
}

}  // namespace

void im2col_cuda(const float* x, const Im2colShape& s, float pad_value, float* out, const LaunchConfig& config) {
  im2col_check(s);
  if (s.n * s.h * s.w == 0) return;
  const int64_t total = s.out_numel();
  if (total == 0) return;
  cuda::GridShape shape = cuda::grid_for(total, config);
  im2col_kernel<<<shape.blocks, shape.threads>>>(x, s, pad_value, total, out);
  cuda_sync_check("im2col");
}

}  // namespace bl
