// CUDA attention backward (kernels/attention_backward.h): one 32-lane group per row, rows striding
// over the grid. Lane L of a group takes the keys j with j mod 32 == L of every sum-schedule leaf
// in ascending order, so its partial sums are exactly lane L of leaf_reduce; the lanes are folded
// by shuffles in the schedule's halving order and the leaf values (at most 32, one per lane) by
// leaf_tree on lane 0. The maximum is order-free. Every value is the reference's, for any launch.
#include <cstdint>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/attention_backward.h"
#include "kernels/cuda/reduce_cuda.cuh"

namespace bl {
namespace {

constexpr int kLanes = 32;
constexpr unsigned kFull = 0xFFFFFFFFu;
static_assert(kReduceLanes == kLanes, "one group lane per sum-schedule lane");
static_assert(kAttentionBackwardMaxKeys / kReduceLeaf <= kLanes, "one leaf value per lane");

// Sum-schedule reduction of the group's row: leaf l's lanes fold by halving; returns the leaf
// tree's value on every lane. value(j) gives the row's element j.
template <class Step, class Value>
__device__ float group_sum(int64_t n, int lane, float c, Value value) {
  const int64_t leaves = reduce_leaf_count(n);
  float mine = 0.0f;  // lane l keeps leaf l's value
  for (int64_t l = 0; l < leaves; ++l) {
    const int64_t start = l * kReduceLeaf, end = start + kReduceLeaf < n ? start + kReduceLeaf : n;
    float acc = Step::init();
    for (int64_t j = start + lane; j < end; j += kLanes) acc = Step::apply(acc, value(j), c);
    for (int w = kLanes / 2; w >= 1; w /= 2) acc = Step::combine(acc, __shfl_down_sync(kFull, acc, w, kLanes));
    acc = __shfl_sync(kFull, acc, 0, kLanes);
    if (lane == l) mine = acc;
  }
  float leaf_values[kLanes];
  for (int l = 0; l < kLanes; ++l) leaf_values[l] = __shfl_sync(kFull, mine, l, kLanes);
  return leaf_tree<Step>(leaf_values, leaves);
}

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
