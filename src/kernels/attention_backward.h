// attention_backward.h: the probabilities of causal attention and their score gradient, in one pass
// over each row, for training (src/lm). Raw-pointer API and its scalar reference.
//
// Rows of n keys: row r holds the raw scores s (q k^T, before scaling) of the query at position
// t = offset + r % period and the gradient dp of that query's probabilities. Key j is masked when j > t or
// (window > 0 and j <= t - window). For each row (the reference below is the specification; every
// step is the rounding of the Tensor op it replaces, so the result equals the composed ops bit for
// bit):
//   x_j  = (s_j * scale) + mask_j      mask_j = -inf (masked) or +0; two roundings
//   p_j  = softmax(x)_j                the softmax row of softmax.h
//   c    = sum_j dp_j * p_j            products rounded, summed on the sum schedule
//   ds_j = (p_j * (dp_j - c)) * scale  three roundings
// Outputs p and ds (each may alias s and dp). Every stored NaN is canonical. Rows are independent.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/math.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace bl {

class ThreadPool;

// The longest row (keys) the kernels take: 32 sum-schedule leaves.
constexpr int64_t kAttentionBackwardMaxKeys = 32 * kReduceLeaf;

struct AttentionBackwardArgs {
  int64_t rows = 0;
  int64_t n = 0;       // keys per row
  int64_t period = 1;  // query position of row r: offset + r % period
  int64_t offset = 0;
  float scale = 1.0f;
  int64_t window = 0;  // sliding window in keys (self included); 0 = none
};

// True when key j is masked for the query at position t.
BL_HD bool attention_backward_masked(int64_t t, int64_t j, int64_t window) {
  return j > t || (window > 0 && j <= t - window);
}

// x_j of the definition.
BL_HD float attention_backward_logit(float s, float scale, bool masked) {
  return canonicalize(add(canonicalize(mul(s, scale)), masked ? float_of(0xFF800000u) : 0.0f));
}

// ds_j of the definition from p_j, dp_j and the row's c.
BL_HD float attention_backward_grad(float p, float dp, float c, float scale) {
  return canonicalize(mul(canonicalize(mul(p, canonicalize(sub(dp, c)))), scale));
}

// Throws bl::Error when args are not a valid problem.
void attention_backward_check_args(const AttentionBackwardArgs& args);

// The scalar reference over every row. Slow and obviously right.
void attention_backward_reference(const AttentionBackwardArgs& args, const float* s, const float* dp, float* p,
                                  float* ds);

// CPU: threads over blocks of rows fixed by the shape; equal to the reference.
void attention_backward_cpu(const AttentionBackwardArgs& args, const float* s, const float* dp, float* p, float* ds,
                            ThreadPool& pool);

// CUDA: one 32-lane group per row; device pointers, default stream.
void attention_backward_cuda(const AttentionBackwardArgs& args, const float* s, const float* dp, float* p, float* ds,
                             const LaunchConfig& config = LaunchConfig());

}  // namespace bl
