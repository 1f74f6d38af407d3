// CUDA attention backward (kernels/attention_backward.h): one 32-lane group per row, rows striding
// over the grid, the row held in shared memory where it fits; the row sums run on the sum schedule
// through group_sum (group_sum.cuh). The maximum is order-free. Every value is the reference's,
// for any launch.
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

// kShared: the row's logits are read once into the group's slice of shared memory (n floats)
// and its probabilities replace them there; group_sum's lane L touches only elements j with
// j mod 32 == L (leaves start at multiples of 4096), and so does every loop here, so each lane
// reads back only what it wrote and no synchronisation is needed. Otherwise the logits are
// computed from s again in each pass and p is read back from global memory.
template <bool kShared>
__global__ void attention_backward_kernel(AttentionBackwardArgs a, const float* s, const float* dp, float* p,
                                          float* ds) {
  extern __shared__ float row_shared[];
  const int lane = threadIdx.x % kLanes;
  const int64_t groups_per_block = blockDim.x / kLanes;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * groups_per_block + threadIdx.x / kLanes;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groups_per_block;
  const int64_t n = a.n;
  float* held = kShared ? row_shared + (threadIdx.x / kLanes) * n : nullptr;
  for (int64_t r = first; r < a.rows; r += stride) {
    const int64_t pos = a.offset + r % a.period;
    const float* sr = s + r * n;
    const float* dr = dp + r * n;
    auto computed = [&](int64_t j) { return attention_backward_logit(sr[j], a.scale, attention_backward_masked(pos, j, a.window)); };
    auto logit = [&](int64_t j) { return kShared ? held[j] : computed(j); };
    float m = StepMax::init();
    for (int64_t j = lane; j < n; j += kLanes) {
      const float x = computed(j);
      if (kShared) held[j] = x;
      m = max(m, x);
    }
    for (int w = kLanes / 2; w >= 1; w /= 2) m = max(m, __shfl_xor_sync(kFull, m, w, kLanes));
    const float sum = group_sum<StepExpShift>(n, lane, m, logit);
    float* pr = p + r * n;
    float* gr = ds + r * n;
    // p_j is stored as it is computed (p may alias s: element j is read and written by this lane
    // only, and its score is not needed again), then read back for ds_j.
    const float c = canonicalize(group_sum<StepAdd>(n, lane, 0.0f, [&](int64_t j) {
      const float pj = softmax_element(logit(j), m, sum);
      pr[j] = pj;
      if (kShared) held[j] = pj;
      return canonicalize(mul(dr[j], pj));
    }));
    for (int64_t j = lane; j < n; j += kLanes) gr[j] = attention_backward_grad(kShared ? held[j] : pr[j], dr[j], c, a.scale);
  }
}

// The most shared memory a block's rows may take (bytes): past it, rows are not held.
constexpr int64_t kHeldRowBytes = 96 * 1024;

}  // namespace

void attention_backward_cuda(const AttentionBackwardArgs& a, const float* s, const float* dp, float* p, float* ds,
                             const LaunchConfig& config) {
  attention_backward_check_args(a);
  if (a.rows == 0 || a.n == 0) return;
  const auto launch = [&](auto kernel, int64_t smem_per_group) {
    const int block = cuda::fitted_block(kernel, config);
    const int64_t groups = block / kLanes;
    const int64_t smem = groups * smem_per_group;
    if (smem > kHeldRowBytes) return false;
    if (smem > 48 * 1024)
      BL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<cuda::grid_size((a.rows + groups - 1) / groups, config), block, static_cast<size_t>(smem)>>>(a, s, dp, p, ds);
    return true;
  };
  if (!launch(attention_backward_kernel<true>, a.n * static_cast<int64_t>(sizeof(float))))
    launch(attention_backward_kernel<false>, 0);
  cuda_sync_check("attention_backward");
}

}  // namespace bl
