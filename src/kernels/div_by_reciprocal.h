// div_by_reciprocal.h: the correctly rounded binary32 quotient a / b from one binary64 reciprocal
// of b, for many a divided by the same b (softmax: e_i / s of a row).
//
// For a finite binary32 a >= 0 and a finite binary32 b >= 1, with r = RN64(1/b) and
// p = RN64(a * r) (a converted to binary64 exactly), RN32(p) = RN32(a / b), except where a / b is
// itself a binary32 midpoint below 2^-126, which needs b to be an even integer. So:
//   y = RN32(p), unless b is an even integer and p < 2^-126; then y = a / b (the division).
// This costs, per element, one conversion to binary64, one binary64 multiply and one conversion
// back, instead of a correctly rounded binary32 division (about 15 instructions on sm_90 with a
// slow path for subnormal quotients).
//
// Proof. Write q = a / b (exact), RN32 for rounding to nearest even binary32 (subnormals included).
// RN32 is constant between two consecutive binary32 midpoints (half-way points between neighbours);
// so RN32(p) = RN32(q) when no midpoint lies in the closed interval between q and p.
// (1) Error of p. r = (1/b)(1 + d1), p = a r (1 + d2), |d1|, |d2| <= 2^-53 (no binary64 underflow:
//     q >= 2^-149 / 2^128), so p = q (1 + d) with |d| <= 2^-52 + 2^-106 < 2^-51.9.
// (2) Write a = A 2^alpha (A < 2^24 an integer, alpha >= -149: every binary32 is a multiple of
//     2^-149) and b = B 2^beta (B odd, B < 2^24). q <= a since b >= 1, so q never overflows.
// (3) Normal quotients, 2^E <= q < 2^(E+1), E >= -126. The midpoints of this binade are
//     M = (2K+1) 2^(E-24) with 2^24 < 2K+1 < 2^25. Then a - bM = A 2^alpha - B (2K+1) 2^(beta+E-24)
//     is not zero: otherwise the odd part of A would be B (2K+1) > 2^24 > A. It is a multiple of
//     2^min(alpha, beta+E-24), so |q - M| / q = |a - bM| / a >= 2^min(alpha, beta+E-24) / a. If the
//     minimum is alpha, that is 2^alpha / (A 2^alpha) > 2^-24. Otherwise, as
//     a = q b < 2^(E+1) B 2^beta < 2^(E+25+beta), it is > 2^(E-24+beta) / 2^(E+25+beta) = 2^-49.
//     The nearest midpoints of the neighbouring binades are farther than q 2^-26 from q. So every
//     midpoint is farther than q 2^-49 from q while |p - q| < q 2^-51.9: RN32(p) = RN32(q).
// (4) Subnormal quotients, q < 2^-126: spacing 2^-149, midpoints M = (2K+1) 2^-150 (up to 2^-126,
//     where the normal binade's midpoints begin). a - bM = A 2^alpha - B (2K+1) 2^(beta-150) is a
//     multiple of 2^min(alpha, beta-150). If it is not zero, |q - M| = |a - bM| / b is at least
//     2^alpha / b = q / A > q 2^-24 (minimum alpha), or at least 2^(beta-150) / (B 2^beta) > 2^-174
//     (minimum beta-150), while |p - q| < q 2^-51.9 < 2^-177.9: again RN32(p) = RN32(q).
//     If it is zero, q is a midpoint (a tie, which RN32 breaks to even while p, off by d, may fall
//     on either side). Then a = B (2K+1) 2^(beta-150) with B (2K+1) odd, and a is a multiple of
//     2^-149, so beta >= 1: b = B 2^beta is an even integer. Such a q is at most 2^-126 - 2^-150,
//     so p < 2^-126: the rule above sends every such case to the division. (Example: b = 3994,
//     a = 5991 * 2^-149, q = 1.5 * 2^-149 rounds to even, 2^-148, but p < q rounds to 2^-149.)
// (5) a = 0 gives p = +0 and y = +0, as the division does.
// The rounding of p to binary32 is one correctly rounded conversion (cvt.rn.f32.f64 on the GPU,
// the compiler's double -> float conversion on the host), subnormal results included; or, in
// div_by_reciprocal_bits, integer operations on the bits (no conversion instruction, which runs
// at a quarter of the binary64 multiply rate on sm_90):
// (6) a reaches binary64 on its bits (normal a: exponent rebiased, significand moved up 29 bits;
//     subnormal a: the bits of the normal number 2^-126 + a, less 2^-126, an exact subtraction).
//     p >= 2^-126 is rounded by keeping its top 24 significand bits and adding the first dropped
//     bit (round half up): by (3) p is never a midpoint, so this is RN32(p). p < 2^-126 is first
//     moved to v = RN64(p + 2^-126) in [2^-126, 2^-125), where binary32's spacing is 2^-149 as for
//     subnormals, rounded the same way, and 2^-126 taken off (one exponent step on the bits).
//     The extra rounding moves v by at most 2^-179. For q <= 2^-151, v and q + 2^-126 both lie
//     below the first midpoint 2^-126 + 2^-150. For q > 2^-151, (4) puts every midpoint farther
//     than min(q 2^-24, 2^-174) > 2^-175 from q (when q is no tie), while
//     |v - (q + 2^-126)| < q 2^-51.9 + 2^-179 < 2^-177: same rounding. Ties below 2^-126 need b
//     an even integer and are divided as in (4).
// Evidence: tests/conformance/test_div_by_reciprocal.cpp (dense sets of a for many b, memcmp
// against the hardware division; sabotage arms: a binary32 reciprocal, no tie rule).
#pragma once

#include "contract/arith.h"
#include "contract/math/exp_f64.h"

namespace bl {

// The divisor b of a row prepared once: r = RN64(1/b), and whether b is an even integer (only
// then can a quotient below 2^-126 be a tie that p cannot break).
struct Reciprocal {
  double r;
  float b;
  bool even_integer;
};

// Whether the binary32 b is an even integer (b in 2Z, b != 0), from its bits.
BL_HD bool is_even_integer(float b) {
  const uint32_t u = bits_of(b) & 0x7FFFFFFFu;
  const int e = static_cast<int>(u >> 23) - 127;  // b = 1.f * 2^e for normal b
  if (e < 1 || e > 127) return false;             // |b| < 2, or inf / NaN
  if (e >= 24) return true;                       // the last place is 2 or more
  const uint32_t below_two = (1u << (24 - e)) - 1u;  // significand bits worth less than 2
  return ((u & 0x007FFFFFu) & below_two) == 0;
}

// b prepared for div_by_reciprocal: b finite and >= 1.
BL_HD Reciprocal reciprocal_of(float b) {
  Reciprocal d;
  d.r = 1.0 / static_cast<double>(b);  // binary64 division is correctly rounded on every target
  d.b = b;
  d.even_integer = is_even_integer(b);
  return d;
}

// RN32(RN64(a * r)): the quotient's bits for every a when the divisor is not an even integer.
BL_HD float div_by_reciprocal_fast(float a, double r) {
#if BL_DEVICE_PASS
  return __double2float_rn(__dmul_rn(static_cast<double>(a), r));
#else
  const double p = static_cast<double>(a) * r;
  return static_cast<float>(p);
#endif
}

// RN32(RN64(a * r)) as div_by_reciprocal_fast, on the bits (see (6) above): same value for every
// finite a >= 0 and r = RN64(1/b), b >= 1 finite, whenever a / b is not a tie below 2^-126.
BL_HD float div_by_reciprocal_fast_bits(float a, double r) {
  const uint32_t u = bits_of(a);
  const bool subnormal_a = u < 0x00800000u;
  const uint32_t v = subnormal_a ? (u | 0x00800000u) : u;  // subnormal a: 2^-126 + a
  const uint32_t a_hi = (v >> 3) + (896u << 20), a_lo = v << 29;
  double a64 = exp_f64_detail::f64_of_bits((static_cast<uint64_t>(a_hi) << 32) | a_lo);
  a64 = subnormal_a ? exp_f64_detail::f64_add(a64, -0x1p-126) : a64;
#if BL_DEVICE_PASS
  const double p = __dmul_rn(a64, r);
#else
  const double p = a64 * r;
#endif
  const bool small = p < 0x1p-126;
  const uint64_t b = exp_f64_detail::bits_of_f64(small ? exp_f64_detail::f64_add(p, 0x1p-126) : p);
  const uint32_t hi = static_cast<uint32_t>(b >> 32), lo = static_cast<uint32_t>(b);
  uint32_t f = ((hi - (896u << 20)) << 3) | (lo >> 29);
  f += (lo >> 28) & 1u;
  f -= small ? 0x00800000u : 0u;
  return float_of(f);
}

// a / b correctly rounded (bl::div's bits) for finite a >= 0 and the prepared finite b >= 1.
BL_HD float div_by_reciprocal(float a, const Reciprocal& d) {
#if BL_DEVICE_PASS
  const double p = __dmul_rn(static_cast<double>(a), d.r);
  if (d.even_integer && p < 0x1p-126) return div(a, d.b);
  return __double2float_rn(p);
#else
  const double p = static_cast<double>(a) * d.r;
  if (d.even_integer && p < 0x1p-126) return div(a, d.b);
  return static_cast<float>(p);
#endif
}

// div_by_reciprocal with the product rounded on the bits (div_by_reciprocal_fast_bits): the same
// bits.
BL_HD float div_by_reciprocal_bits(float a, const Reciprocal& d) {
  if (d.even_integer && static_cast<double>(a) * d.r < 0x1p-126) return div(a, d.b);
  return div_by_reciprocal_fast_bits(a, d.r);
}

}  // namespace bl
