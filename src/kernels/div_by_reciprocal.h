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
// the compiler's double -> float conversion on the host), subnormal results included.
// Evidence: tests/conformance/test_div_by_reciprocal.cpp (dense sets of a for many b, memcmp
// against the hardware division; sabotage arms: a binary32 reciprocal, no tie rule).
#pragma once

#include "contract/arith.h"

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

}  // namespace bl
