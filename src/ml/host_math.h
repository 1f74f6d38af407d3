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
#pragma once

namespace bl::ml {

double exp64(double x);
double log64(double x);

}  // namespace bl::ml
