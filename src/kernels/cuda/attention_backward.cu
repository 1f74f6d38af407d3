// CUDA attention backward (kernels/attention_backward.h): one 32-lane group per row, rows striding
// over the grid; the row sums run on the sum schedule through group_sum (group_sum.cuh). The
// maximum is order-free. Every value is the reference's, for any launch.
#include <cstdint>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/attention_backward.h"
#include "kernels/cuda/group_sum.cuh"
#include "kernels/cuda/reduce_cuda.cuh"

namespace bl {
namespace {

constexpr int kLanes = cuda::kGroupLanes;
constexpr unsigned kFull = cuda::kGroupMask;
static_assert(kAttentionBackwardMaxKeys <= cuda::kGroupSumMaxLength, "one leaf value per lane");
using cuda::group_sum;

__global__ void attention_backward_kernel(AttentionBackwardArgs a, const float* s, const float* dp, float* p,
                                          float* ds) {
  const int lane = threadIdx.x % kLanes;
  const int64_t groups_per_block = blockDim.x / kLanes;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block + threadIdx.x / kLanes;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groups_per_block;
  const int64_t n = a.n;
  for (int64_t r = first; r < a.rows; r += stride) {
    const int64_t pos = a.offset + r % a.period;
    const float* sr = s + r * n;
    const float* dr = dp + r * n;
    auto logit = [&](int64_t j) { return attention_backward_logit(sr[j], a.scale, attention_backward_masked(pos, j, a.window)); };
    float m = StepMax::init();
    for (int64_t j = lane; j < n; j += kLanes) m = max(m, logit(j));
    for (int w = kLanes / 2; w >= 1; w /= 2) m = max(m, __shfl_xor_sync(kFull, m, w, kLanes));
    const float sum = group_sum<StepExpShift>(n, lane, m, logit);
    float* pr = p + r * n;
    float* gr = ds + r * n;
    // p_j is stored as it is computed (p may alias s: element j is read and written by this lane
    // only, and its score is not needed again), then read back for ds_j.
    const float c = canonicalize(group_sum<StepAdd>(n, lane, 0.0f, [&](int64_t j) {
      const float pj = softmax_element(logit(j), m, sum);
      pr[j] = pj;
      return canonicalize(mul(dr[j], pj));
    }));
    for (int64_t j = lane; j < n; j += kLanes) gr[j] = attention_backward_grad(pr[j], dr[j], c, a.scale);
  }
}

}  // namespace

void attention_backward_cuda(const AttentionBackwardArgs& a, const float* s, const float* dp, float* p, float* ds,
                             const LaunchConfig& config) {
  attention_backward_check_args(a);
  if (a.rows == 0 || a.n == 0) return;
  const int block = cuda::fitted_block(attention_backward_kernel, config);
  const int64_t groups = block / kLanes;
  const int grid = cuda::grid_size((a.rows + groups - 1) / groups, config);
  attention_backward_kernel<<<grid, block>>>(a, s, dp, p, ds);
  cuda_sync_check("attention_backward");
}

}  // namespace bl
