// inputs.h: the inputs the checker and the sweep evaluate: spread samples, special values,
// per-function thresholds, and the pseudo-random (x, y) pairs for pow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/math_map.h"

namespace mathcheck {

// A special input with a short label for the report ("+0", "smallest subnormal", "threshold").
struct Special {
  float x;
  float y;  // used by pow only
  std::string label;
};

// The i-th of n inputs spread over all 2^32 bit patterns (a Weyl sequence with an odd step: all
// distinct, every sign and exponent visited evenly).
inline uint32_t spread_bits(uint64_t i) {
  return static_cast<uint32_t>(i * 0x9E3779B9ull + 0x2545F491ull);
}

// The special values of a unary function: signed zeros, infinities, NaNs, subnormals, extreme
// normals, integers, halves, powers of two, values near multiples of pi/2, and the points where
// the correctly rounded result changes class (overflow, underflow, saturation to +-1, f(x) == x),
// found by bisection on the oracle.
std::vector<Special> unary_specials(bl::MathFn fn);

// The special (x, y) grid for pow.
std::vector<Special> pow_specials();

// The i-th pseudo-random (x, y) pair for pow (deterministic in i and seed): a mix of arbitrary
// bit patterns, moderate bases with moderate exponents, bases near 1 with large exponents,
// negative bases with integer exponents, and pairs whose result is near overflow or underflow.
void pow_pair(uint64_t i, uint64_t seed, float* x, float* y);

}  // namespace mathcheck
