// exp_log.h: the contract's exponential and logarithm family on binary32.
//
// PROVISIONAL bodies (plain binary32 range reduction and polynomials, about 2 ulp); the correctly
// rounded float-float versions replace them. The signatures are final.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"

namespace bl {

// e^x. exp(-inf) = +0, exp(+inf) = +inf, NaN -> canonical NaN.
BL_HD float exp(float x) {
  if (is_nan(x)) return canonical_nan();
  if (x > 88.7228394f) return float_of(0x7F800000u);
  if (x < -103.972084f) return 0.0f;
  float k = fma(x, 1.44269502f, 12582912.0f);
  k = sub(k, 12582912.0f);
  float r = fma(k, -0.693145752f, x);
  r = fma(k, -1.42860677e-06f, r);
  float p = fma(r, 1.0f / 720.0f, 1.0f / 120.0f);
  p = fma(p, r, 1.0f / 24.0f);
  p = fma(p, r, 1.0f / 6.0f);
  p = fma(p, r, 0.5f);
  p = fma(p, r, 1.0f);
  p = fma(p, r, 1.0f);
  int ki = (int)k;
  int k1 = ki / 2;
  int k2 = ki - k1;
  p = mul(p, float_of((uint32_t)(k1 + 127) << 23));
  return mul(p, float_of((uint32_t)(k2 + 127) << 23));
}

// e^x - 1, accurate near 0. expm1(-0) = -0.
BL_HD float expm1(float x) {
  if (is_nan(x)) return canonical_nan();
  if (abs(x) < 0.5f) {
    float p = fma(x, 1.0f / 5040.0f, 1.0f / 720.0f);
    p = fma(p, x, 1.0f / 120.0f);
    p = fma(p, x, 1.0f / 24.0f);
    p = fma(p, x, 1.0f / 6.0f);
    p = fma(p, x, 0.5f);
    p = mul(p, x);
    return fma(p, x, x);
  }
  return sub(exp(x), 1.0f);
}

// Natural logarithm. log(0) = -inf, log(x<0) = NaN, log(+inf) = +inf.
BL_HD float log(float x) {
  if (is_nan(x) || x < 0.0f) return canonical_nan();
  if (x == 0.0f) return float_of(0xFF800000u);
  if (is_inf(x)) return x;
  int e = 0;
  if (x < 1.17549435e-38f) { x = mul(x, 16777216.0f); e = -24; }
  uint32_t u = bits_of(x);
  int ex = (int)((u >> 23) & 0xFFu) - 127;
  float m = float_of((u & 0x007FFFFFu) | 0x3F800000u);
  if (m > 1.41421354f) { m = mul(m, 0.5f); ex += 1; }
  e += ex;
  float f = sub(m, 1.0f);
  float s = div(f, add(2.0f, f));
  float z = mul(s, s);
  float p = fma(z, 1.0f / 9.0f, 1.0f / 7.0f);
  p = fma(p, z, 1.0f / 5.0f);
  p = fma(p, z, 1.0f / 3.0f);
  p = mul(p, z);
  float lg = fma(mul(2.0f, s), p, mul(2.0f, s));
  return fma((float)e, 0.693147182f, lg);
}

// log(1 + x), accurate near 0. log1p(-1) = -inf, log1p(-0) = -0.
BL_HD float log1p(float x) {
  if (is_nan(x) || x < -1.0f) return canonical_nan();
  if (abs(x) < 0.25f) {
    float s = div(x, add(2.0f, x));
    float z = mul(s, s);
    float p = fma(z, 1.0f / 9.0f, 1.0f / 7.0f);
    p = fma(p, z, 1.0f / 5.0f);
    p = fma(p, z, 1.0f / 3.0f);
    p = mul(p, z);
    return fma(mul(2.0f, s), p, mul(2.0f, s));
  }
  return log(add(1.0f, x));
}

// Base-2 logarithm. log2(2^k) = k exactly.
BL_HD float log2(float x) { return mul(log(x), 1.44269502f); }

// Hyperbolic tangent. tanh(+-0) = +-0, tanh(+-inf) = +-1.
BL_HD float tanh(float x) {
  if (is_nan(x)) return canonical_nan();
  float a = abs(x);
  if (a > 10.0f) return copysign(1.0f, x);
  float e = expm1(mul(-2.0f, a));
  return copysign(div(neg(e), add(2.0f, e)), x);
}

// Logistic function 1 / (1 + e^-x).
BL_HD float sigmoid(float x) {
  if (is_nan(x)) return canonical_nan();
  return div(1.0f, add(1.0f, exp(neg(x))));
}

// x * sigmoid(x).
BL_HD float silu(float x) {
  if (is_nan(x)) return canonical_nan();
  return mul(x, sigmoid(x));
}

// log(1 + e^x).
BL_HD float softplus(float x) {
  if (is_nan(x)) return canonical_nan();
  if (x > 20.0f) return x;
  return log1p(exp(x));
}

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
BL_HD float gelu_tanh(float x) {
  if (is_nan(x)) return canonical_nan();
  float x3 = mul(mul(x, x), x);
  float t = tanh(mul(0.797884583f, fma(0.044715f, x3, x)));
  return mul(mul(0.5f, x), add(1.0f, t));
}

}  // namespace bl
