// pow_exp2_log2.h: float-float log2 and exp2 kernels behind bl::pow (also used by bl::erf).
//
// log2 works on the significand m in [sqrt(1/2), sqrt(2)) with log(m) = 2*atanh((m-1)/(m+1));
// exp2 splits t = k + j/32 + g with |g| <= 1/64 and uses a float-float table of 2^(j/32) and a
// short Taylor series. Both keep about 40 correct bits, enough for a faithful, nearly always
// correctly rounded pow. Binary32 operations and integer bit operations only.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/trig_reduce.h"

// The kernels are large; on host compilers they are forced inline so that a loop over an array
// that calls pow has no calls left and can vectorize (nvcc's BL_HD already forces inlining).
#if !BL_GPU_COMPILER && (defined(__GNUC__) || defined(__clang__))
#define BL_POW_INLINE inline __attribute__((always_inline))
#else
#define BL_POW_INLINE BL_HD
#endif

namespace bl {
namespace pow_detail {

// c ? a : b on the bits with a mask: both operands are always computed, so compilers keep the
// code straight-line (a float ?: lets them move an operand's computation under a branch, which
// -ftrapping-math then forbids them to undo, and the loop no longer vectorizes).
BL_HD float select(bool c, float a, float b) {
  uint32_t mask = 0u - static_cast<uint32_t>(c);
  return float_of((bits_of(a) & mask) | (bits_of(b) & ~mask));
}

// log2(x) as a float-float for finite x > 0 (subnormals included).
BL_POW_INLINE ff log2_ff(float x) {
  // Selects instead of branches keep loops over arrays vectorizable.
  bool subnormal = bits_of(x) < 0x00800000u;  // scale into the normal range (exact)
  x = select(subnormal, mul(x, 8388608.0f), x);
  uint32_t u = bits_of(x);
  int k = static_cast<int>(u >> 23) - 127 - (subnormal ? 23 : 0);
  uint32_t mb = (u & 0x007FFFFFu) | 0x3F800000u;
  bool above = mb > 0x3FB504F3u;  // m > sqrt(2): use m/2 and k+1
  mb = above ? mb - 0x00800000u : mb;
  k += above ? 1 : 0;
  float m = float_of(mb);
  float num = sub(m, 1.0f);  // exact (Sterbenz)
  ff den = two_sum(m, 1.0f);
  // s = num/den as a float-float: one division and an exact remainder correction.
  float sh = div(num, den.hi);
  float rem = fma(neg(sh), den.hi, num);
  rem = fma(neg(sh), den.lo, rem);
  ff s = fast_two_sum(sh, div(rem, den.hi));
  // log(m) = 2s * (1 + s^2/3 + s^4/5 + ...), |s| <= 0.1716, series to s^18 (truncation < 2^-48).
  ff z = trig_detail::ff_square(s);
  float zh = z.hi;
  float t = fma(zh, fma(zh, fma(zh, fma(zh, fma(zh, 0.058823529411764705f, 0.066666666666666667f),
                                        0.076923076923076923f), 0.090909090909090909f), 0.11111111111111111f),
                0.14285714285714286f);
  ff v = trig_detail::ff_horner_step(ff{0.20000000298023224f, -2.9802322831784522e-09f}, z, ff{t, 0.0f});
  v = trig_detail::ff_horner_step(ff{0.3333333432674408f, -9.9341077586245774e-09f}, z, v);
  ff w = ff_mul(z, v);                                         // s^2/3 + s^4/5 + ..., <= 0.01
  ff logm = trig_detail::ff_add_big(ff{s.hi, s.lo}, ff_mul(s, w));          // atanh(s)
  ff l2 = ff_mul(logm, ff{2.8853900432586670f, 3.8519260670000222e-08f});  // * 2/log(2)
  return ff_add_f(l2, static_cast<float>(k));
}

// 2^(j/32) for j = 0..31 as float-float pairs (hi, lo), values rounded to nearest with MPFR
// (the generated list BL_EXP2_TABLE_VALUES of pow_exp2_table.inc).
#include "contract/math/pow_exp2_table.inc"
BL_CONSTANT_TABLE_DEFINE(float, kExp2Table, 64, BL_EXP2_TABLE_VALUES)
#undef BL_EXP2_TABLE_VALUES

BL_HD ff exp2_table(uint32_t j) {
  return ff{BL_CONSTANT_TABLE(kExp2Table)[2 * j], BL_CONSTANT_TABLE(kExp2Table)[2 * j + 1]};
}

struct scaled {
  int k;  // result = m * 2^k
  ff m;   // 1 <= m < 2 (up to rounding)
};

// 2^t for a float-float t; t.hi is clamped to [-400, 400], beyond which every binary32 result
// has overflowed or underflowed.
BL_POW_INLINE scaled exp2_ff(ff t) {
  // Clamp with integer comparisons on the bits (no floating-point compares, which keeps the
  // selects branch-free for the vectorizer under -ftrapping-math).
  bool big = (bits_of(t.hi) & 0x7FFFFFFFu) > 0x43C80000u;  // |t.hi| > 400
  float th = select(big, copysign(400.0f, t.hi), t.hi);
  float tl = select(big, 0.0f, t.lo);
  // n = round(32*th) with the 1.5*2^23 trick (|32*th| < 2^22); th - n/32 is exact.
  float nf = sub(add(mul(th, 32.0f), 12582912.0f), 12582912.0f);
  int n = static_cast<int>(nf);
  ff g = fast_two_sum(sub(th, mul(nf, 0.03125f)), tl);  // |g| <= 1/64 + tiny
  ff a = ff_mul(g, ff{0.69314718246459961f, -1.9046542121259336e-09f});  // g*log(2), |a| < 0.011
  // e^a - 1 = a + a^2*(1/2 + a/6 + a^2/24 + a^3/120 + a^4/720), truncation < 2^-49.
  float ah = a.hi;
  float p = fma(ah, fma(ah, fma(ah, 0.0013888888888888889f, 0.0083333333333333333f), 0.041666666666666667f),
                0.16666666666666667f);
  ff h = trig_detail::ff_horner_step(ff{0.5f, 0.0f}, a, ff{p, 0.0f});
  ff em1 = trig_detail::ff_add_big(a, ff_mul(a, ff_mul(a, h)));
  ff tj = exp2_table(static_cast<uint32_t>(n) & 31u);
  scaled out;
  out.k = n >> 5;  // arithmetic shift: floor(n/32)
  out.m = trig_detail::ff_add_big(tj, ff_mul(tj, em1));
  return out;
}

// Rounds (m.hi + m.lo) * 2^k to binary32 once, including results in the subnormal range, for a
// normalized float-float with 1/4 <= m.hi < 4. Overflow gives +inf, deep underflow +0. Both the
// normal and the subnormal rounding are computed and one is selected (no branches).
BL_POW_INLINE float scale_round(ff m, int k) {
  k = k < 300 ? k : 300;
  k = k > -300 ? k : -300;
  float r = add(m.hi, m.lo);
  int e = static_cast<int>(bits_of(r) >> 23) - 127;
  // Normal result (or overflow): r * 2^k in exact steps, k split into two factors in range.
  int k1 = k < 127 ? k : 127;
  k1 = k1 > -126 ? k1 : -126;
  int k2 = k - k1;
  k2 = k2 < 127 ? k2 : 127;
  k2 = k2 > -126 ? k2 : -126;
  float normal = mul(mul(r, trig_detail::pow2i(k1)), trig_detail::pow2i(k2));
  // Subnormal result. x1 = m.hi * 2^(k+126) is exact and below 1; r1 = x1 * 2^-126 rounds once.
  // m.lo can only matter when x1 lies exactly halfway between two subnormals (d = +-2^-24 in
  // x1's units); then it decides the direction instead of ties-to-even.
  int ks = k + 126;
  ks = ks > -60 ? ks : -60;
  ks = ks < 0 ? ks : 0;
  float x1 = mul(m.hi, trig_detail::pow2i(ks));
  float r1 = mul(x1, trig_detail::pow2i(-126));
  float d = sub(x1, mul(r1, trig_detail::pow2i(126)));
  bool fix = ((bits_of(d) & 0x7FFFFFFFu) == 0x33800000u) & ((bits_of(m.lo) & 0x7FFFFFFFu) != 0u) &
             (sign_bit(d) == sign_bit(m.lo));  // |d| == 2^-24 and m.lo != 0 on d's side
  uint32_t step_bits = fix ? ((bits_of(d) & 0x80000000u) | 1u) : 0u;  // +-2^-149 or +0
  float subnormal = add(r1, float_of(step_bits));
  subnormal = select(k < -160, 0.0f, subnormal);
  return select(e + k >= -126, normal, subnormal);
}

}  // namespace pow_detail
}  // namespace bl
