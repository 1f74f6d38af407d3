// trig_reduce.h: internals of bl::sin and bl::cos (argument reduction and float-float kernels).
//
// The reduction x = q*(pi/2) + r is exact in integer arithmetic (Payne-Hanek): the 24-bit
// significand of x is multiplied by a 128-bit window of the bits of 2/pi chosen by the exponent of
// x, which yields x*2/pi mod 4 with at least 100 correct fraction bits for every finite binary32.
// r comes out as a float-float with a relative error below 2^-46, so the polynomials see the
// same argument on every backend and for every |x| (no Cody-Waite switch-over point).
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"

namespace bl {
namespace trig_detail {

// Bits of 2/pi after the binary point, 32 per word, with one leading zero word so that windows
// starting before the binary point read zeros. Word j holds bits 32*j-31 .. 32*j.
#define BL_TWO_OVER_PI_WORDS                                                                   \
  0x00000000u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, \
      0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au
BL_CONSTANT_TABLE_DEFINE(uint32_t, kTwoOverPi, 10, BL_TWO_OVER_PI_WORDS)
#undef BL_TWO_OVER_PI_WORDS

BL_HD uint32_t two_over_pi_word(int j) {
  return BL_CONSTANT_TABLE(kTwoOverPi)[j];
}

// Number of leading zero bits of a nonzero 64-bit value.
BL_HD int clz64(uint64_t v) {
  return BL_DEVICE_OR_HOST(__clzll(static_cast<long long>(v)), __builtin_clzll(v));
}

// 2^k as a binary32, for -126 <= k <= 127.
BL_HD float pow2i(int k) { return float_of(static_cast<uint32_t>(k + 127) << 23); }

struct reduced {
  ff r;        // x - q*pi/2, |r| <= pi/4 (plus rounding)
  uint32_t q;  // quadrant, mod 4
};

// Reduces a finite x with 0.5 <= x (x positive, exponent field >= 126).
BL_HD reduced reduce_half_pi(float x) {
  uint32_t u = bits_of(x);
  int biased = static_cast<int>(u >> 23);
  uint64_t m = (u & 0x007FFFFFu) | 0x00800000u;
  // x = m * 2^(biased-150). The window A = floor(2/pi * 2^(biased-24)) mod 2^128 makes
  // m*A mod 2^128 equal x*2/pi mod 4 in units of 2^-126 (bits above the window contribute
  // multiples of 4; bits below it change the result by less than 2^-102).
  int first_bit = biased - 151;  // position of the window's leading bit among 2/pi's bits
  int j0 = (first_bit + 31) >> 5;
  int sh = (first_bit + 31) & 31;
  uint32_t a[4];
  for (int k = 0; k < 4; ++k) {
    uint64_t pair = (static_cast<uint64_t>(two_over_pi_word(j0 + k)) << 32) | two_over_pi_word(j0 + k + 1);
    a[k] = static_cast<uint32_t>(pair >> (32 - sh));
  }
  uint64_t p3 = m * a[3];
  uint64_t p2 = m * a[2] + (p3 >> 32);
  uint64_t p1 = m * a[1] + (p2 >> 32);
  uint64_t p0 = m * a[0] + (p1 >> 32);
  uint32_t r0 = static_cast<uint32_t>(p0), r1 = static_cast<uint32_t>(p1);
  uint32_t r2 = static_cast<uint32_t>(p2), r3 = static_cast<uint32_t>(p3);
  // Quadrant rounded to nearest; the fraction below it as a signed 128-bit value in [-1/2, 1/2).
  uint32_t q = ((r0 + 0x20000000u) >> 30) & 3u;
  uint64_t hi = (((static_cast<uint64_t>(r0) << 32) | r1) << 2) | (r2 >> 30);
  uint64_t lo = ((static_cast<uint64_t>(r2) << 32) | r3) << 2;
  bool negative = (hi >> 63) != 0;
  if (negative) {  // two's complement negation of (hi, lo)
    hi = ~hi;
    lo = ~lo + 1;
    if (lo == 0) hi += 1;
  }
  int scale = -64;  // the fraction is (hi*2^64 + lo) * 2^-128 = hi * 2^(scale)
  if (hi == 0) {    // cannot happen for binary32 inputs (the fraction exceeds 2^-40); kept for safety
    hi = lo;
    lo = 0;
    scale = -128;
  }
  int z = hi == 0 ? 0 : clz64(hi);
  uint64_t n = z == 0 ? hi : ((hi << z) | (lo >> (64 - z)));
  float f_hi = mul(static_cast<float>(static_cast<uint32_t>(n >> 40)), pow2i(scale - z + 40));
  float f_lo = mul(static_cast<float>(static_cast<uint32_t>((n >> 16) & 0xFFFFFFu)), pow2i(scale - z + 16));
  if (negative) {
    f_hi = neg(f_hi);
    f_lo = neg(f_lo);
  }
  // r = fraction * pi/2 (pi/2 as a float-float).
  ff r = ff_mul(ff{f_hi, f_lo}, ff{1.57079637050628662109375f, -4.37113882867379300296306610107421875e-08f});
  reduced out;
  out.r = r;
  out.q = q;
  return out;
}

// a + b for float-floats with |a| >= |b|.
BL_HD ff ff_add_big(ff a, ff b) {
  ff s = fast_two_sum(a.hi, b.hi);
  s.lo = add(s.lo, add(a.lo, b.lo));
  return fast_two_sum(s.hi, s.lo);
}

// c + z*t for a float-float c that dominates the sum.
BL_HD ff ff_horner_step(ff c, ff z, ff t) { return ff_add_big(c, ff_mul(z, t)); }

// r^2 as a float-float.
BL_HD ff ff_square(ff r) {
  ff z = two_prod(r.hi, r.hi);
  z.lo = fma(add(r.hi, r.hi), r.lo, z.lo);
  return fast_two_sum(z.hi, z.lo);
}

// sin(r) for |r| <= pi/4 + tiny, as one rounded binary32. Taylor series to r^13 (truncation
// below 2^-45 relative); the terms after r^7 in binary32, the leading ones in float-float.
BL_HD float sin_kernel(ff r) {
  ff z = ff_square(r);
  float zh = z.hi;
  float t = fma(zh, fma(zh, 1.6059043836821614599e-10f, -2.5052108385441718775e-08f), 2.7557319223985890653e-06f);
  ff u = ff_horner_step(ff{-0.00019841270113829523f, 2.7255968749334558e-12f}, z, ff{t, 0.0f});
  u = ff_horner_step(ff{8.33333376795053482055664062500e-03f, -4.34617203337595e-10f}, z, u);
  u = ff_horner_step(ff{-1.66666671633720397949218750e-01f, 4.967053879312289e-09f}, z, u);
  ff w = ff_mul(z, u);       // sin(r)/r - 1, |w| <= 0.11
  ff p = ff_mul(r, w);
  ff s = fast_two_sum(r.hi, p.hi);
  return add(s.hi, add(s.lo, add(r.lo, p.lo)));
}

// cos(r) for |r| <= pi/4 + tiny, as one rounded binary32. Taylor series to r^14 (truncation
// below 2^-48 relative).
BL_HD float cos_kernel(ff r) {
  ff z = ff_square(r);
  float zh = z.hi;
  float t = fma(zh, fma(zh, fma(zh, -1.1470745597729724714e-11f, 2.0876756987868098979e-09f), -2.7557319223985890653e-07f),
                2.4801587301587301587e-05f);
  ff u = ff_horner_step(ff{-1.38888892251998186111450195312500e-03f, 3.3631094437103215e-11f}, z, ff{t, 0.0f});
  u = ff_horner_step(ff{4.16666679084300994873046875000e-02f, -1.2417634698280722e-09f}, z, u);
  u = ff_horner_step(ff{-0.5f, 0.0f}, z, u);
  ff w = ff_mul(z, u);  // cos(r) - 1, |w| <= 0.31
  ff s = fast_two_sum(1.0f, w.hi);
  return add(s.hi, add(s.lo, w.lo));
}

// sin(|x|) for finite x, sign not applied; q_offset 1 gives cos(|x|).
BL_HD float sin_cos_positive(float ax, uint32_t q_offset) {
  reduced red;
  if (bits_of(ax) < 0x3F000000u) {  // |x| < 0.5: no reduction
    red.r = ff{ax, 0.0f};
    red.q = 0;
  } else {
    red = reduce_half_pi(ax);
  }
  uint32_t q = (red.q + q_offset) & 3u;
  float v = (q & 1u) ? cos_kernel(red.r) : sin_kernel(red.r);
  return (q & 2u) ? neg(v) : v;
}

}  // namespace trig_detail
}  // namespace bl
