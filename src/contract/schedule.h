// schedule.h: the contract's reduction and GEMM schedules.
//
// A schedule says in which order the additions of a reduction happen. It is a pure function of the
// problem size (the reduction length), never of thread count, SIMD width, warp width, block count or
// timing, so every backend that follows it produces the same bits. docs/contract.md, "Reductions".
//
// Sum of n values x[0..n):
//   1. The input is cut into leaves of kReduceLeaf consecutive values (the last leaf may be short).
//   2. Inside a leaf, value i of the leaf goes to lane (i mod kReduceLanes); each lane starts at +0.0
//      and adds its values in ascending order: lane = lane + x.
//   3. The kReduceLanes lanes of a leaf are folded by halving: for s = 16, 8, 4, 2, 1:
//      lane[j] = lane[j] + lane[j + s] for j < s. lane[0] is the leaf's value.
//   4. The leaf values are combined by a pairwise tree over leaf index: at each level
//      p[i] = p[2i] + p[2i+1], an odd last element moves up unchanged, until one value is left.
//   The sum of zero values is +0.0.
// A dot product (and a sum of squares) follows the same schedule with lane = fma(x, y, lane).
//
// Matrix product C[m][n] = sum_k A[m][k] * B[k][n]:
//   The k range is cut into leaves of kGemmKLeaf (the last may be short). Inside a leaf,
//   acc starts at +0.0 and runs acc = fma(A[m][k], B[k][n], acc) in ascending k. The leaf values are
//   folded left to right: c = leaf[0]; c = c + leaf[j] for j = 1, 2, ... With K == 0, c = +0.0.
//   Bias, scaling and activation are applied afterwards, each as its own rounding.
#pragma once

#include "contract/arith.h"

namespace bl {

constexpr int kReduceLanes = 32;
constexpr int64_t kReduceLeaf = 4096;
constexpr int64_t kGemmKLeaf = 256;

static_assert(kReduceLeaf % kReduceLanes == 0, "a leaf holds whole rounds of lanes");

// Number of leaves of a reduction of length n (0 for n == 0).
BL_HD int64_t reduce_leaf_count(int64_t n) { return (n + kReduceLeaf - 1) / kReduceLeaf; }
BL_HD int64_t gemm_k_leaf_count(int64_t k) { return (k + kGemmKLeaf - 1) / kGemmKLeaf; }

// Folds kReduceLanes lane values (in place) by halving; returns lane[0].
BL_HD float fold_lanes(float* lanes) {
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = add(lanes[j], lanes[j + s]);
  return lanes[0];
}

// The value of one leaf: x[0..len) with len <= kReduceLeaf, by lanes then fold_lanes.
BL_HD float reference_leaf_sum(const float* x, int64_t len) {
  float lanes[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) lanes[j] = 0.0f;
  for (int64_t i = 0; i < len; ++i) lanes[i % kReduceLanes] = add(lanes[i % kReduceLanes], x[i]);
  return fold_lanes(lanes);
}

// Pairwise tree over leaf values p[0..m) (destroys p); +0.0 for m == 0.
BL_HD float fold_leaves(float* p, int64_t m) {
  if (m == 0) return 0.0f;
  while (m > 1) {
    int64_t half = m / 2;
    for (int64_t i = 0; i < half; ++i) p[i] = add(p[2 * i], p[2 * i + 1]);
    if (m % 2) p[half] = p[m - 1];
    m = half + (m % 2);
  }
  return p[0];
}

}  // namespace bl
