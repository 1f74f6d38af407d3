// group_sum.cuh: the sum schedule over one row by a 32-lane group, for row kernels that compute
// their summands on the fly (attention backward, norm backward).
//
// Lane L of the group takes the elements j with j mod 32 == L of every sum-schedule leaf in
// ascending order, so its partial sums are exactly lane L of leaf_reduce; the lanes are folded by
// shuffles in the schedule's halving order and the leaf values (at most 32, one per lane) by
// leaf_tree. Width-32 shuffles, so the hardware warp width does not matter.
#pragma once

#include <cstdint>

#include "kernels/reduce.h"

namespace bl::cuda {

constexpr int kGroupLanes = 32;
constexpr unsigned kGroupMask = 0xFFFFFFFFu;
static_assert(kReduceLanes == kGroupLanes, "one group lane per sum-schedule lane");
// The longest row group_sum takes: one leaf value per lane.
constexpr int64_t kGroupSumMaxLength = kGroupLanes * kReduceLeaf;

// Sum-schedule reduction of Step over the group's row of n elements (n <= kGroupSumMaxLength);
// value(j) gives element j. Returns the leaf tree's value on every lane.
template <class Step, class Value>
__device__ float group_sum(int64_t n, int lane, float c, Value value) {
  const int64_t leaves = reduce_leaf_count(n);
  float mine = 0.0f;             // lane l keeps leaf l's value
  float last = Step::init();     // the last leaf's value, on every lane
  for (int64_t l = 0; l < leaves; ++l) {
    const int64_t start = l * kReduceLeaf, end = start + kReduceLeaf < n ? start + kReduceLeaf : n;
    float acc = Step::init();
    for (int64_t j = start + lane; j < end; j += kGroupLanes) acc = Step::apply(acc, value(j), c);
    for (int w = kGroupLanes / 2; w >= 1; w /= 2)
      acc = Step::combine(acc, __shfl_down_sync(kGroupMask, acc, w, kGroupLanes));
    last = __shfl_sync(kGroupMask, acc, 0, kGroupLanes);
    if (lane == l) mine = last;
  }
  // leaf_tree of one value is that value, of none init(): no gathering for rows of one leaf.
  if (leaves <= 1) return last;
  float leaf_values[kGroupLanes];
  for (int l = 0; l < kGroupLanes; ++l) leaf_values[l] = __shfl_sync(kGroupMask, mine, l, kGroupLanes);
  return leaf_tree<Step>(leaf_values, leaves);
}

}  // namespace bl::cuda
