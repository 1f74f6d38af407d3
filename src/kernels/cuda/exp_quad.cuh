// exp_quad.cuh: bl::exp of four floats at once, for CUDA kernels that move float4.
//
// The four fast evaluations (exp_split) run back to back with no branch between them, so the
// compiler loads their constants once and interleaves them; the rare inputs whose rounding is in
// doubt are settled afterwards by exp_settle. Each element gets exactly bl::exp's bits.
#pragma once

#include <cuda_runtime.h>

#include "contract/math.h"

namespace bl::cuda {

// The four-wide form over a fast evaluation `split(x, &hard)` with exp_split's contract (hard set
// where the rounding is in doubt): its four calls first, then exp_settle for the doubtful ones.
template <class Split>
__device__ __forceinline__ float4 exp_quad_with(float4 x, Split split) {
  bool h0, h1, h2, h3;
  float4 y = make_float4(split(x.x, &h0), split(x.y, &h1), split(x.z, &h2), split(x.w, &h3));
  if (h0 || h1 || h2 || h3) {  // rare: about 2^-19 of inputs
    if (h0) y.x = exp_settle(x.x);
    if (h1) y.y = exp_settle(x.y);
    if (h2) y.z = exp_settle(x.z);
    if (h3) y.w = exp_settle(x.w);
  }
  return y;
}

__device__ __forceinline__ float4 exp_quad(float4 x) {
  return exp_quad_with(x, [](float v, bool* hard) { return exp_split(v, hard); });
}

}  // namespace bl::cuda
