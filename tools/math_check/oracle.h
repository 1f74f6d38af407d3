// oracle.h: the exact value of each contract math function, correctly rounded to binary32.
//
// The fast path evaluates the function in float64 (glibc, or a stable float64 formula for the
// composites). When that value lies within a small relative margin of a binary32 rounding
// boundary (a midpoint between two floats, or the overflow threshold), the function is evaluated
// again with MPFR at 256 bits and rounded from there, with subnormals rounded on the binary32 grid.
#pragma once

#include <cstdint>

#include "kernels/math_map.h"

namespace mathcheck {

struct Exact {
  double value = 0;      // the exact value as a double (for error measurement); NaN when undefined
  float rounded = 0;     // the exact value rounded to nearest binary32 (ties to even)
  bool used_mpfr = false;
};

// f(x) for a unary function, f(x, y) for pow. force_mpfr skips the float64 fast path.
Exact exact_value(bl::MathFn fn, float x, float y, bool force_mpfr);

// Error of `ours` against the exact value in ulps of the exact value (binary32 ulp, subnormal ulp
// 2^-149 below 2^-126; infinities count as 2^128). 0 when the bits match the rounded value.
// Infinite when one of them is NaN and the other is not, or the exact value is infinite and
// ours differs.
double error_ulps(float ours, const Exact& exact);

}  // namespace mathcheck
