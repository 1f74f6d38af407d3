// norm_backward.h: the input gradient of layer norm and RMS norm in one pass over each row, for
// training (src/lm). Raw-pointer API and its scalar reference.
//
// Rows of n values: x (the norm's input), g (the gradient of its output) and the weight w (n
// values shared by every row). For each row (the reference below is the specification; every step
// is the rounding of the Tensor op it replaces in the composed backward, so the result equals the
// composed ops bit for bit; S is the sum schedule of schedule.h with lane = lane + v):
//   mu      = S(x) / n                     (layer norm only)
//   c_i     = x_i - mu                     (layer norm); x_i (RMS norm)
//   r       = rsqrt(S(c_i * c_i) / n + eps)    products rounded, then summed; one add; rsqrt
//   xhat_i  = c_i * r
//   d_i     = g_i * w_i
//   mp      = S(d_i * xhat_i) / n
//   md      = S(d_i) / n                   (layer norm only)
//   dx_i    = r * ((d_i - xhat_i * mp) - md)   (RMS norm: r * (d_i - xhat_i * mp))
//   gx_i    = g_i * xhat_i                 (summed over rows by the caller: the weight's gradient)
// Each division by n is one division by float(n). Every stored NaN is canonical. Rows are
// independent (batch invariant).
#pragma once

#include <cstdint>

#include "contract/math.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl {

class ThreadPool;

// The widest row the kernels take: 32 sum-schedule leaves.
constexpr int64_t kNormBackwardMaxWidth = 32 * kReduceLeaf;

struct NormBackwardArgs {
  int64_t rows = 0;
  int64_t n = 0;  // values per row
  float eps = 0.0f;
  bool layer_norm = false;  // else RMS norm
};

// r of the definition from the mean square ms.
BL_HD float norm_backward_rstd(float ms, float eps) { return canonicalize(rsqrt(canonicalize(add(ms, eps)))); }

// dx_i of the definition (md = +0 for RMS norm is not used: layer_norm says whether it is subtracted).
BL_HD float norm_backward_dx(float d, float xhat, float r, float mp, float md, bool layer_norm) {
  float inner = canonicalize(sub(d, canonicalize(mul(xhat, mp))));
  if (layer_norm) inner = canonicalize(sub(inner, md));
  return canonicalize(mul(r, inner));
}

// Throws bl::Error when args are not a valid problem.
void norm_backward_check_args(const NormBackwardArgs& args);

// The scalar reference over every row. Slow and obviously right.
void norm_backward_reference(const NormBackwardArgs& args, const float* x, const float* g, const float* w, float* dx,
                             float* gx);

// CPU: threads over blocks of rows fixed by the shape; equal to the reference.
void norm_backward_cpu(const NormBackwardArgs& args, const float* x, const float* g, const float* w, float* dx,
                       float* gx, ThreadPool& pool);

// CUDA: one 32-lane group per row; device pointers, default stream.
void norm_backward_cuda(const NormBackwardArgs& args, const float* x, const float* g, const float* w, float* dx,
                        float* gx, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
