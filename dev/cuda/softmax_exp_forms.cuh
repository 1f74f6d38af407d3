// softmax_exp_forms.cuh: the lean exp of the on-chip softmax in every form the lab compares
// (src/kernels/cuda/softmax_exp.cuh keeps the one the library runs: converting in and out).
// bl::exp of four arguments known to be <= 0 and not NaN (softmax's x_i - m on a row whose
// maximum m is finite).
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

namespace bl::dev {

#if BL_EXP_F64_DEVICE && BL_HAS_F64
// exp_f64_approx with x reaching binary64 by the conversion instruction (CONVERT) or on its bits
// (exp_f64_approx itself). They differ only for subnormal x, which the bits take to 0: then
// t = x / ln2 + 1.5 * 2^52 rounds to the shifter either way (k = 0), r = x, and every Horner step
// p * r + c rounds to c (|p r| < 2^-120), so p = 1 exactly in both: the same value.
template <bool CONVERT>
__device__ __forceinline__ double exp_f64_approx_nonpositive(float xc) {
  if (!CONVERT) return exp_f64_detail::exp_f64_approx(xc, exp_f64_detail::kExpF64Degree);
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

// exp_split(x, hard) for x <= 0, not NaN. CONVERT_IN: x to binary64 by the conversion
// instruction; CONVERT_OUT: the result rounded by it (exp_f64_round_converted).
template <bool CONVERT_IN, bool CONVERT_OUT>
__device__ __forceinline__ float exp_split_nonpositive(float x, bool* hard) {
  const float xc = x < -104.5f ? -104.5f : x;  // e^-104.5 < 2^-150 rounds to +0
  const double y = exp_f64_approx_nonpositive<CONVERT_IN>(xc);
  if (CONVERT_OUT) return exp_f64_round_converted(y, hard);
  return exp_f64_detail::exp_f64_round(
      y, exp_f64_detail::exp_f64_margin_ulps(exp_f64_detail::kExpF64MarginBits), true, hard);
}

template <bool CONVERT_IN, bool CONVERT_OUT>
__device__ __forceinline__ float4 exp_quad_nonpositive(float4 x) {
  bool h0, h1, h2, h3;
  float4 y = make_float4(exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.x, &h0),
                         exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.y, &h1),
                         exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.z, &h2),
                         exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.w, &h3));
  if (h0 || h1 || h2 || h3) {  // rare: about 2^-19 of inputs
    if (h0) y.x = exp_settle(x.x);
    if (h1) y.y = exp_settle(x.y);
    if (h2) y.z = exp_settle(x.z);
    if (h3) y.w = exp_settle(x.w);
  }
  return y;
}
// The four fast evaluations of exp_quad_nonpositive without the settling: *hard is true when any
// of them is in doubt (then exp_quad_nonpositive(x) gives the right four values).
template <bool CONVERT_IN, bool CONVERT_OUT>
__device__ __forceinline__ float4 exp_quad_nonpositive_split(float4 x, bool* hard) {
  bool h0, h1, h2, h3;
  const float4 y = make_float4(exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.x, &h0),
                               exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.y, &h1),
                               exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.z, &h2),
                               exp_split_nonpositive<CONVERT_IN, CONVERT_OUT>(x.w, &h3));
  *hard = h0 || h1 || h2 || h3;
  return y;
}
#else
template <bool CONVERT_IN, bool CONVERT_OUT>
__device__ __forceinline__ float4 exp_quad_nonpositive(float4 x) { return cuda::exp_quad(x); }
template <bool CONVERT_IN, bool CONVERT_OUT>
__device__ __forceinline__ float4 exp_quad_nonpositive_split(float4 x, bool* hard) {
  *hard = true;  // exp_quad_nonpositive decides every element
  return x;
}
#endif

}  // namespace bl::dev
