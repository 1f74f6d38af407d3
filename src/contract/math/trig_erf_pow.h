// trig_erf_pow.h: the contract's sin, cos, erf, gelu (erf form), pow and rsqrt on binary32.
//
// Binary32 + - * fma / sqrt, float-float arithmetic (ff.h) and integer operations on the bits
// only; no float64, no libm, same source for CPU and GPU compilers. All are faithful (error below
// 1 ulp) everywhere and nearly always correctly rounded; rsqrt is correctly rounded. Internals:
// trig_reduce.h (sin/cos), trig_erf_kernels.h + trig_erfc_table.h (erf/gelu), pow_exp2_log2.h
// (pow), pow_rsqrt.h (rsqrt). Every NaN result is the canonical NaN; subnormals are not flushed.
// pow and rsqrt are straight-line code, so loops over arrays vectorize (-O3 -mavx2 -mfma) with the
// same bits as the scalar code; sin, cos, erf and gelu branch on the quadrant or the region.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/pow_exp2_log2.h"
#include "contract/math/pow_rsqrt.h"
#include "contract/math/trig_erf_kernels.h"
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

// erf(x) in binary32: faithful everywhere, nearly always correctly rounded (Taylor series below
// 0.5, 1 - erfc above). erf(-x) == -erf(x) bitwise; erf(+-inf) = +-1; NaN gives the canonical NaN.
BL_HD float erf(float x) {
  if (is_nan(x)) return canonical_nan();
  float a = abs(x);
  float r;
  if (a < 8.67361737988403547e-19f) {  // |x| < 2^-60: erf(x) = x * 2/sqrt(pi), rounded once
    ff p = ff_mul_f(ff{1.128379225730896f, -5.8635382771399236e-08f}, mul(a, 1.8446744073709552e19f));
    int k = -64;
    erf_detail::normalize_scaled(p, k);
    r = pow_detail::scale_round(p, k);
  } else if (a < 0.5f) {
    ff e = erf_detail::erf_small(ff{a, 0.0f}, two_prod(a, a));
    r = add(e.hi, e.lo);
  } else if (a < 4.0f) {  // erfc(4) < 2^-25: above 4 the result rounds to 1
    pow_detail::scaled e = erf_detail::erfc_scaled(ff{a, 0.0f}, two_prod(a, a));
    float s = trig_detail::pow2i(e.k);  // exact scaling: erfc(a) > 2^-26 here
    ff c = fast_two_sum(1.0f, neg(mul(e.m.hi, s)));
    r = add(c.hi, sub(c.lo, mul(e.m.lo, s)));
  } else {
    r = 1.0f;
  }
  return float_of(bits_of(r) | (bits_of(x) & 0x80000000u));
}

// gelu(x) = x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))) in binary32, faithful everywhere. For
// x < 0, Phi(x) = erfc(|x|/sqrt(2))/2 is computed directly (no 1 + erf cancellation), so the
// result keeps its relative accuracy down into the subnormals; gelu(-0) = -0.
BL_HD float gelu(float x) {
  if (is_nan(x)) return canonical_nan();
  float ax = abs(x);
  ff a = ff_mul_f(ff{0.70710676908493042f, 1.2101617485882343e-08f}, ax);  // |x|/sqrt(2)
  ff z = two_prod(ax, ax);                                                   // x^2/2, exact
  z.hi = mul(z.hi, 0.5f);
  z.lo = mul(z.lo, 0.5f);
  bool negative = sign_bit(x);
  if (ax < 8.67361737988403547e-19f) {
    // |x| < 2^-60: gelu(x) = x/2 + x^2/sqrt(2 pi) + ...; the square only breaks ties of x/2,
    // towards larger x/2 + x^2 (smaller magnitude for x < 0). Rounded once, also when subnormal.
    float h = mul(mul(ax, 1.8446744073709552e19f), 0.5f);  // |x| * 2^63, exact
    ff p = ff{h, mul(h, negative ? -9.094947e-13f : 9.094947e-13f)};
    int k = -64;
    erf_detail::normalize_scaled(p, k);
    return float_of(bits_of(pow_detail::scale_round(p, k)) | (bits_of(x) & 0x80000000u));
  }
  if (a.hi < 0.5f) {
    ff e = erf_detail::erf_small(a, z);
    if (negative) e = ff{neg(e.hi), neg(e.lo)};
    ff phi = fast_two_sum(0.5f, mul(0.5f, e.hi));
    phi.lo = add(phi.lo, mul(0.5f, e.lo));
    return fma(x, phi.hi, mul(x, phi.lo));
  }
  if (!(a.hi < 11.0f)) return negative ? -0.0f : x;  // Phi rounds to 0 or 1
  pow_detail::scaled e = erf_detail::erfc_scaled(a, z);  // erfc(|x|/sqrt(2)) = m * 2^k
  if (negative) {  // gelu = -(|x|/2) * erfc, rounded once (also when subnormal)
    ff p = ff_mul_f(e.m, mul(ax, 0.5f));
    int k = e.k;
    erf_detail::normalize_scaled(p, k);
    return neg(pow_detail::scale_round(p, k));
  }
  if (e.k < -60) return x;  // Phi = 1 - erfc/2 rounds to 1 and x * Phi to x
  float s = trig_detail::pow2i(e.k - 1);
  ff phi = fast_two_sum(1.0f, neg(mul(e.m.hi, s)));
  phi.lo = sub(phi.lo, mul(e.m.lo, s));
  ff p = ff_mul_f(phi, x);
  return add(p.hi, p.lo);
}

// pow(x, y) in binary32, as 2^(y*log2|x|) with log2 and exp2 in float-float; faithful, nearly
// always correctly rounded, subnormal results rounded once. Special cases follow C99 Annex F:
// pow(x, +-0) = 1 and pow(+1, y) = 1 even for NaN; pow(-1, +-inf) = 1; a negative base needs an
// integer y (odd y keeps the sign); +-0 and +-inf bases as the annex lists. Other NaNs: canonical.
BL_POW_INLINE float pow(float x, float y) {
  // The main path runs on sanitized operands and the special cases are selected at the end, so
  // the function has no branches and loops over arrays can vectorize.
  uint32_t ux = bits_of(x), uy = bits_of(y);
  uint32_t ax = ux & 0x7FFFFFFFu, ay = uy & 0x7FFFFFFFu;
  bool x_negative = (ux >> 31) != 0;
  bool y_negative = (uy >> 31) != 0;
  // Classify y: 0 = not an integer, 1 = odd integer, 2 = even integer (|y| >= 2^24 is even).
  int shift = 150 - static_cast<int>(ay >> 23);  // significand bits below the unit
  shift = shift < 0 ? 0 : (shift > 24 ? 24 : shift);
  uint32_t sig = (ay & 0x007FFFFFu) | 0x00800000u;
  bool integral = ay >= 0x3F800000u && (sig & ((1u << shift) - 1u)) == 0u;
  bool odd = integral && ((sig >> shift) & 1u) != 0u && ay < 0x4B800000u;
  uint32_t result_sign = (x_negative && odd) ? 0x80000000u : 0u;
  // Main path: 2^(y * log2|x|) for finite nonzero x and finite y.
  bool x_regular = ax != 0u && ax < 0x7F800000u;
  float xm = pow_detail::select(x_regular, float_of(ax), 1.0f);
  float ym = pow_detail::select(ay < 0x7F800000u, y, 0.0f);
  ff l2 = pow_detail::log2_ff(xm);
  ff t = ff_mul_f(l2, ym);
  bool huge = (bits_of(t.hi) & 0x7FFFFFFFu) >= 0x43C80000u;  // |t| >= 400 (or inf/NaN)
  t.hi = pow_detail::select(huge, 0.0f, t.hi);
  t.lo = pow_detail::select(huge, 0.0f, t.lo);
  pow_detail::scaled e = pow_detail::exp2_ff(t);
  float mag = pow_detail::scale_round(e.m, e.k);
  const float inf = float_of(0x7F800000u);
  float huge_mag = (!sign_bit(l2.hi) != y_negative) ? inf : 0.0f;  // l2 != 0 when huge
  mag = pow_detail::select(huge, huge_mag, mag);
  float r = float_of(bits_of(mag) | result_sign);
  // Special cases, later lines take precedence.
  r = pow_detail::select(x_negative && !integral, canonical_nan(), r);
  bool to_inf = (ax == 0u) == y_negative;  // x = +-0 or +-inf
  float zero_or_inf = float_of((to_inf ? 0x7F800000u : 0u) | result_sign);
  r = pow_detail::select(ax == 0u || ax == 0x7F800000u, zero_or_inf, r);
  float y_inf_result = ((ax > 0x3F800000u) != y_negative) ? inf : 0.0f;
  y_inf_result = ax == 0x3F800000u ? 1.0f : y_inf_result;  // pow(-1, +-inf) = 1
  r = pow_detail::select(ay == 0x7F800000u, y_inf_result, r);
  r = pow_detail::select(ax > 0x7F800000u || ay > 0x7F800000u, canonical_nan(), r);
  r = pow_detail::select(ay == 0u || ux == 0x3F800000u, 1.0f, r);
  return r;
}

// 1/sqrt(x) correctly rounded (one rounding of the exact value; div(1, sqrt(x)) would round twice
// and be off by up to 1.49 ulp). rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = +0; negative x
// and NaN give the canonical NaN.
BL_POW_INLINE float rsqrt(float x) {
  uint32_t u = bits_of(x);
  bool regular = u - 1u < 0x7F7FFFFFu;  // 0 < x < inf
  float r = rsqrt_detail::rsqrt_positive(pow_detail::select(regular, x, 1.0f));
  r = pow_detail::select((u & 0x7FFFFFFFu) == 0u, float_of(0x7F800000u | u), r);  // +-0 -> +-inf
  r = pow_detail::select(u == 0x7F800000u, 0.0f, r);                           // +inf -> +0
  r = pow_detail::select(u > 0x7F800000u && u != 0x80000000u, canonical_nan(), r);  // x < 0, NaN
  return r;
}

}  // namespace bl
