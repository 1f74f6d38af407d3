// trig_erf_pow.h: the contract's sin, cos, erf, gelu (erf form), pow and rsqrt on binary32.
//
// PROVISIONAL: these bodies are placeholders with the final signatures, so code that includes
// contract/math.h compiles; accurate implementations replace them.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
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

// pow(x, y) in binary32 with the C99 Annex F special cases.
BL_HD float pow(float x, float y) {
  if (y == 0.0f) return 1.0f;
  if (is_nan(x) || is_nan(y)) return canonical_nan();
  if (y == 1.0f) return x;
  if (y == 2.0f) return mul(x, x);
  return canonical_nan();
}

// 1/sqrt(x) in binary32. rsqrt(+0) = +inf, rsqrt(-0) = -inf, negative or NaN x: canonical NaN.
BL_HD float rsqrt(float x) { return canonicalize(div(1.0f, sqrt(x))); }

}  // namespace bl
