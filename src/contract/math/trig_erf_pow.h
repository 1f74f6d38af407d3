// trig_erf_pow.h: the contract's sin, cos, erf, gelu (erf form), pow and rsqrt on binary32.
//
// PROVISIONAL: these bodies are placeholders with the final signatures, so code that includes
// contract/math.h compiles; accurate implementations replace them.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/pow_exp2_log2.h"
#include "contract/math/pow_rsqrt.h"
#include "contract/math/trig_reduce.h"

namespace bl {

// sin(x) in binary32: exact argument reduction for every finite x, then float-float kernels.
// sin(-x) == -sin(x) bitwise; sin(-0) = -0; sin(+-inf) and sin(NaN) give the canonical NaN.
BL_HD float sin(float x) {
  if (!is_finite(x)) return canonical_nan();
  float v = trig_detail::sin_cos_positive(abs(x), 0u);
  return float_of(bits_of(v) ^ (bits_of(x) & 0x80000000u));
}

// cos(x) in binary32, same method as sin; cos(-x) == cos(x). cos(+-inf), cos(NaN): canonical NaN.
BL_HD float cos(float x) {
  if (!is_finite(x)) return canonical_nan();
  return trig_detail::sin_cos_positive(abs(x), 1u);
}

// erf(x) in binary32. erf(+-inf) = +-1, erf(-0) = -0, erf(NaN) = canonical NaN.
BL_HD float erf(float x) {
  if (is_nan(x)) return canonical_nan();
  float a = abs(x);
  float r = a >= 1.0f ? 1.0f : mul(a, 1.1283791671f);
  return copysign(r, x);
}

// gelu(x) = 0.5*x*(1 + erf(x/sqrt(2))) in binary32 (the exact, erf form of GELU).
BL_HD float gelu(float x) {
  if (is_nan(x)) return canonical_nan();
  return mul(mul(0.5f, x), add(1.0f, erf(mul(x, 0.70710678118f))));
}

// pow(x, y) in binary32, as 2^(y*log2|x|) with log2 and exp2 in float-float; faithful, nearly
// always correctly rounded, subnormal results rounded once. Special cases follow C99 Annex F:
// pow(x, +-0) = 1 and pow(+1, y) = 1 even for NaN; pow(-1, +-inf) = 1; a negative base needs an
// integer y (odd y keeps the sign); +-0 and +-inf bases as the annex lists. Other NaNs: canonical.
BL_HD float pow(float x, float y) {
  uint32_t ux = bits_of(x), uy = bits_of(y);
  uint32_t ax = ux & 0x7FFFFFFFu, ay = uy & 0x7FFFFFFFu;
  if (ay == 0u || ux == 0x3F800000u) return 1.0f;
  if (is_nan(x) || is_nan(y)) return canonical_nan();
  // Classify y: 0 = not an integer, 1 = odd integer, 2 = even integer.
  int y_class = 0;
  if (ay >= 0x4B800000u) {  // |y| >= 2^24 (or inf): even
    y_class = 2;
  } else if (ay >= 0x3F800000u) {
    int frac_bits = 150 - static_cast<int>(ay >> 23);  // bits of the significand below the unit
    uint32_t sig = (ay & 0x007FFFFFu) | 0x00800000u;
    if ((sig & ((1u << frac_bits) - 1u)) == 0u) y_class = ((sig >> frac_bits) & 1u) ? 1 : 2;
  }
  bool x_negative = (ux >> 31) != 0;
  bool y_negative = (uy >> 31) != 0;
  uint32_t result_sign = (x_negative && y_class == 1) ? 0x80000000u : 0u;
  if (ay == 0x7F800000u) {  // y = +-inf
    if (ax == 0x3F800000u) return 1.0f;  // pow(-1, +-inf)
    bool big = ax > 0x3F800000u;
    return (big != y_negative) ? float_of(0x7F800000u) : 0.0f;
  }
  if (ax == 0u || ax == 0x7F800000u) {  // x = +-0 or +-inf
    bool to_inf = (ax == 0u) == y_negative;
    return float_of((to_inf ? 0x7F800000u : 0u) | result_sign);
  }
  if (x_negative && y_class == 0) return canonical_nan();
  ff l2 = pow_detail::log2_ff(float_of(ax));
  ff t = ff_mul_f(l2, y);
  float mag;
  if (!(abs(t.hi) < 400.0f)) {  // far outside the range (possibly inf/NaN intermediates)
    mag = ((l2.hi > 0.0f) != y_negative) ? float_of(0x7F800000u) : 0.0f;
  } else {
    pow_detail::scaled e = pow_detail::exp2_ff(t);
    mag = pow_detail::scale_round(e.m, e.k);
  }
  return float_of(bits_of(mag) | result_sign);
}

// 1/sqrt(x) correctly rounded (one rounding of the exact value; div(1, sqrt(x)) would round twice
// and be off by up to 1.49 ulp). rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = +0; negative x
// and NaN give the canonical NaN.
BL_HD float rsqrt(float x) {
  if (x == 0.0f) return div(1.0f, x);
  if (!(x > 0.0f)) return canonical_nan();
  if (is_inf(x)) return 0.0f;
  return rsqrt_detail::rsqrt_positive(x);
}

}  // namespace bl
