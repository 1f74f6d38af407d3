// exp_quad.cuh: bl::exp of four floats at once, for CUDA kernels that move float4.
//
// The four fast evaluations (exp_split) run back to back with no branch between them, so the
// compiler loads their constants once and interleaves them; the rare inputs whose rounding is in
// doubt are settled afterwards by exp_settle. Each element gets exactly bl::exp's bits.
#pragma once

#include <cuda_runtime.h>

#include "contract/math.h"

namespace bl::cuda {

__device__ __forceinline__ float4 exp_quad(float4 x) {
  bool h0, h1, h2, h3;
  float4 y = make_float4(exp_split(x.x, &h0), exp_split(x.y, &h1), exp_split(x.z, &h2),
                         exp_split(x.w, &h3));
  if (h0 || h1 || h2 || h3) {  // rare: about 2^-19 of inputs
    if (h0) y.x = exp_settle(x.x);
    if (h1) y.y = exp_settle(x.y);
    if (h2) y.z = exp_settle(x.z);
    if (h3) y.w = exp_settle(x.w);
  }
  return y;
}

}  // namespace bl::cuda
