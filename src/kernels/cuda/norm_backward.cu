// CUDA norm backward (kernels/norm_backward.h): one 32-lane group per row, rows striding over the
// grid; each row sum runs on the sum schedule through group_sum (group_sum.cuh) with its summands
// computed as they are read. Every value is the reference's, for any launch.
#include <cstdint>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/group_sum.cuh"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/norm_backward.h"

namespace bl {
namespace {

static_assert(kNormBackwardMaxWidth <= cuda::kGroupSumMaxLength, "one leaf value per lane");

__global__ void norm_backward_kernel(NormBackwardArgs a, const float* x, const float* g, const float* w, float* dx,
                                     float* gx) {
  const int lane = threadIdx.x % cuda::kGroupLanes;
  const int64_t groups_per_block = blockDim.x / cuda::kGroupLanes;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block + threadIdx.x / cuda::kGroupLanes;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groups_per_block;
  const int64_t n = a.n;
  for (int64_t r = first; r < a.rows; r += stride) {
    const float* xr = x + r * n;
    const float* gr = g + r * n;
    float mu = 0.0f;
    if (a.layer_norm) mu = finish_mean(cuda::group_sum<StepAdd>(n, lane, 0.0f, [&](int64_t i) { return xr[i]; }), n);
    auto centered = [&](int64_t i) { return a.layer_norm ? canonicalize(sub(xr[i], mu)) : xr[i]; };
    const float ms = finish_mean(cuda::group_sum<StepAdd>(n, lane, 0.0f, [&](int64_t i) {
      const float c = centered(i);
      return canonicalize(mul(c, c));
    }), n);
    const float rs = norm_backward_rstd(ms, a.eps);
    auto xhat = [&](int64_t i) { return canonicalize(mul(centered(i), rs)); };
    auto d = [&](int64_t i) { return canonicalize(mul(gr[i], w[i])); };
    const float mp = finish_mean(
        cuda::group_sum<StepAdd>(n, lane, 0.0f, [&](int64_t i) { return canonicalize(mul(d(i), xhat(i))); }), n);
    float md = 0.0f;
    if (a.layer_norm) md = finish_mean(cuda::group_sum<StepAdd>(n, lane, 0.0f, d), n);
    float* dxr = dx + r * n;
    float* gxr = gx + r * n;
    for (int64_t i = lane; i < n; i += cuda::kGroupLanes) {
      const float xh = xhat(i);
      dxr[i] = norm_backward_dx(d(i), xh, rs, mp, md, a.layer_norm);
      gxr[i] = canonicalize(mul(gr[i], xh));
    }
  }
}

}  // namespace

void norm_backward_cuda(const NormBackwardArgs& a, const float* x, const float* g, const float* w, float* dx,
                        float* gx, const LaunchConfig& config) {
  norm_backward_check_args(a);
  if (a.rows == 0 || a.n == 0) return;
  const int block = cuda::fitted_block(norm_backward_kernel, config);
  const int64_t groups = block / cuda::kGroupLanes;
  const int grid = cuda::grid_size((a.rows + groups - 1) / groups, config);
  norm_backward_kernel<<<grid, block>>>(a, x, g, w, dx, gx);
  cuda_sync_check("norm_backward");
}

}  // namespace bl
