// softmax_exp.cuh: bl::exp of four arguments known to be <= 0 and not NaN (softmax's x_i - m on a
// row whose maximum m is finite), for the on-chip softmax kernels.
//
// exp_split in device code is exp_f64_fast: NaN test, clamp to [-104.5, 89], the binary64
// evaluation, the rounding on the bits with its doubt test, and a NaN select. For x <= 0 and not
// NaN the NaN test is false and the upper clamp does nothing, so leaving both out gives the same
// value and the same doubt flag; doubtful inputs are settled by exp_settle as in exp_quad. Here x
// reaches binary64 and the result returns to binary32 by the conversion instructions (the notes
// below say why that gives the same values as the bit manipulations of exp_f64_fast). The result
// is exactly bl::exp's. Where the binary64 evaluation is not used (no binary64 or switched off),
// this is exp_quad.
#pragma once

#include <cuda_runtime.h>

#include "contract/math.h"
#include "kernels/cuda/exp_quad.cuh"

namespace bl::cuda {

#if BL_EXP_F64_DEVICE && BL_HAS_F64
// exp_f64_approx with x reaching binary64 by the conversion instruction. It differs from
// exp_f64_approx (x taken on its bits) only for subnormal x, which the bits take to 0: then
// t = x / ln2 + 1.5 * 2^52 rounds to the shifter either way (k = 0), r = x, and every Horner step
// p * r + c rounds to c (|p r| < 2^-120), so p = 1 exactly in both: the same value.
__device__ __forceinline__ double exp_f64_approx_nonpositive(float xc) {
  using namespace exp_f64_detail;
  const double x = static_cast<double>(xc);
  const double shifter = 6755399441055744.0;
  const double t = f64_fma(x, 1.4426950408889634, shifter);
  const double kd = f64_add(t, -shifter);
  const double r1 = f64_fma(-kd, 0.6931471805599453, x);
  const double r = f64_fma(-kd, 2.3190468138462996e-17, r1);
  double p = exp_coefficient(kExpF64Degree, kExpF64Degree);
#pragma unroll
  for (int i = kExpF64Degree - 1; i >= 0; --i) p = f64_fma(p, r, exp_coefficient(kExpF64Degree, i));
  const uint32_t k = static_cast<uint32_t>(bits_of_f64(t));
  return f64_of_bits(bits_of_f64(p) + (static_cast<uint64_t>(k << 20) << 32));
}

// exp_f64_round(y, margin, true, hard) for 0 < y <= 2 (results never overflow), with the value
// rounded by the conversion instruction and the doubt test on the bits as there. Where the test
// does not fire, no binary32 rounding boundary lies within 2^9 units (of v = y, or of
// v = RN64(y + 2^-126) for y < 2^-126) of v; the bit rounding of exp_f64_round then gives RN32(y)
// (round half up differs from nearest-even only at exact halves, which fire the test; for
// y < 2^-126 the add moves v by at most one unit, so the boundary count between y + 2^-126 and v
// is zero), and so does the conversion: the same value.
__device__ __forceinline__ float exp_f64_round_converted(double y, bool* hard) {
  using namespace exp_f64_detail;
  const uint32_t margin = exp_f64_margin_ulps(kExpF64MarginBits);
  const bool small = static_cast<uint32_t>(bits_of_f64(y) >> 32) < (897u << 20);  // y < 2^-126
  const double v = small ? f64_add(y, 0x1p-126) : y;
  const uint32_t dropped = static_cast<uint32_t>(bits_of_f64(v)) & 0x1FFFFFFFu;
  *hard = dropped - (0x10000000u - margin) <= 2u * margin;
  return __double2float_rn(y);
}

// exp_split(x, hard) for x <= 0, not NaN.
__device__ __forceinline__ float exp_split_nonpositive(float x, bool* hard) {
  const float xc = x < -104.5f ? -104.5f : x;  // e^-104.5 < 2^-150 rounds to +0
  const double y = exp_f64_approx_nonpositive(xc);
  return exp_f64_round_converted(y, hard);
}

__device__ __forceinline__ float4 exp_quad_nonpositive(float4 x) {
  return exp_quad_with(x, [](float v, bool* hard) { return exp_split_nonpositive(v, hard); });
}
#else
__device__ __forceinline__ float4 exp_quad_nonpositive(float4 x) { return exp_quad(x); }
#endif

}  // namespace bl::cuda
