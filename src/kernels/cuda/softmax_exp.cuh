// softmax_exp.cuh: bl::exp of four arguments known to be <= 0 and not NaN (softmax's x_i - m on a
// row whose maximum m is finite), for the lean on-chip softmax kernel.
//
// exp_split in device code is exp_f64_fast: NaN test, clamp to [-104.5, 89], the binary64
// evaluation, the rounding on the bits with its doubt test, and a NaN select. For x <= 0 and not
// NaN the NaN test is false and the upper clamp does nothing, so leaving both out gives the same
// value and the same doubt flag; doubtful inputs are settled by exp_settle as in exp_quad. The
// result is exactly bl::exp's. Where the binary64 evaluation is not used (no binary64 or switched
// off), this is exp_quad.
#pragma once

#include <cuda_runtime.h>

#include "contract/math.h"
#include "kernels/cuda/exp_quad.cuh"

namespace bl::cuda {

#if BL_EXP_F64_DEVICE && BL_HAS_F64
// exp_split(x, hard) for x <= 0, not NaN.
__device__ __forceinline__ float exp_split_nonpositive(float x, bool* hard) {
  const float xc = x < -104.5f ? -104.5f : x;  // e^-104.5 < 2^-150 rounds to +0
  const double y = exp_f64_detail::exp_f64_approx(xc, exp_f64_detail::kExpF64Degree);
  return exp_f64_detail::exp_f64_round(
      y, exp_f64_detail::exp_f64_margin_ulps(exp_f64_detail::kExpF64MarginBits), true, hard);
}

__device__ __forceinline__ float4 exp_quad_nonpositive(float4 x) {
  bool h0, h1, h2, h3;
  float4 y = make_float4(exp_split_nonpositive(x.x, &h0), exp_split_nonpositive(x.y, &h1),
                         exp_split_nonpositive(x.z, &h2), exp_split_nonpositive(x.w, &h3));
  if (h0 || h1 || h2 || h3) {  // rare: about 2^-19 of inputs
    if (h0) y.x = exp_settle(x.x);
    if (h1) y.y = exp_settle(x.y);
    if (h2) y.z = exp_settle(x.z);
    if (h3) y.w = exp_settle(x.w);
  }
  return y;
}
#else
__device__ __forceinline__ float4 exp_quad_nonpositive(float4 x) { return exp_quad(x); }
#endif

}  // namespace bl::cuda
