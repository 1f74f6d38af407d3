// CUDA Adam update (kernels/adam.h): one thread per element, grid-stride.
#include "core/allocator.h"
#include "kernels/adam.h"
#include "kernels/cuda/launch_util.cuh"

namespace bl {
namespace {

__global__ void adam_kernel(AdamScalars s, const float* p, const float* m, const float* v, const float* g,
                            float* p_out, float* m_out, float* v_out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    adam_element(s, p[i], m[i], v[i], g[i], p_out + i, m_out + i, v_out + i);
}

}  // namespace

void adam_cuda(const AdamScalars& s, const float* p, const float* m, const float* v, const float* g, float* p_out,
               float* m_out, float* v_out, int64_t n, const LaunchConfig& config) {
  if (n == 0) return;
  const cuda::GridShape grid = cuda::grid_for(n, config);
  adam_kernel<<<grid.blocks, grid.threads>>>(s, p, m, v, g, p_out, m_out, v_out, n);
  cuda_sync_check("adam_update");
}

}  // namespace bl
