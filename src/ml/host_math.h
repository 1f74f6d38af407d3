// host_math.h: e^x and ln x in binary64 for the estimators whose host solvers need binary64
// transcendental functions (the SVM's Platt scaling, Gaussian processes' kernels and likelihood).
//
// The contract's exp and log are binary32 (correctly rounded); these are binary64 evaluations by
// add, sub, mul, div, frexp / ldexp and nearbyint only, in a fixed order, so their bits do not
// depend on the C library and are the same on every machine (the library is built without
// contraction). They are not correctly rounded: within a few binary64 ulps (tests/ml_common/
// test_host_math.cpp measures it against the C library).
//   exp64: x = k ln2 + r with k = nearbyint(x / ln2), |r| <= ln2 / 2, ln2 split in two parts (the
//          first with 32 significant bits, so k * hi is exact); e^r by its Taylor polynomial to
//          r^18 / 18! in Horner order; times 2^k by ldexp. +inf above 709.78, +0 below -745.2.
//   log64: x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1) / (m + 1), by
//          its series to s^27 in Horner order; + e ln2 in the same two parts. -inf at 0, NaN below.
//   digamma64 (x > 0, the variational mixtures' expected log weights): from 10 up, the asymptotic
//          series ln x - 1 / (2x) - sum_{k=1..7} B_2k / (2k x^2k) in Horner order in 1 / x^2;
//          below, psi(x + 1) = psi(x) + 1 / x carries x into [1.5, 2.5) (the reciprocals summed in
//          order) and psi(2 + z) is the derivative of lgamma64's series below. NaN for x <= 0 or
//          NaN, +inf at +inf.
//   lgamma64 (x > 0): from 15 up, Stirling's series (x - 1/2) ln x - x + ln(2 pi) / 2 +
//          sum_{k=1..7} B_2k / (2k (2k - 1) x^(2k-1)); below, the recurrence carries x into
//          [1.5, 2.5) (ln of the product of the factors, multiplied in order, added or subtracted)
//          and ln Gamma(2 + z) is its Taylor series to z^30 in Horner order (coefficients from
//          zeta(k) - 1); below 2^-52, -ln x. NaN for x <= 0 or NaN.
//   Both are within a few ulps where |result| >= 1/2 (tests/ml_common/test_host_math.cpp); near
//   psi's root (1.4616) the error of digamma64 is a few ulps of the recurrence's terms.
//   sin64 / cos64: x = k pi/2 + r with k = nearbyint(x / (pi/2)), pi/2 in two parts (the first
//          with 33 significant bits, so k * hi is exact for |k| < 2^20), |r| <= pi/4; sin r and
//          cos r by their Taylor polynomials to r^25 / r^24 in Horner order, chosen and signed by
//          k mod 4. For the haversine distance (arguments within a few multiples of pi).
//   asin64 (|x| <= 1, NaN outside): |x| <= 1/2 by its series sum a_n x^(2n+1), a_0 = 1, a_{n+1} =
//          a_n (2n+1)^2 / ((2n+2)(2n+3)), to n = 40 in Horner order in x^2; above, pi/2 -
//          2 asin(sqrt((1 - |x|) / 2)) (pi/2 in two parts); odd in x.
#pragma once

namespace bl::ml {

double exp64(double x);
double log64(double x);
double digamma64(double x);
double lgamma64(double x);
double sin64(double x);
double cos64(double x);
double asin64(double x);

}  // namespace bl::ml
