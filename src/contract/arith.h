// arith.h: the contract's elementary operations on binary32.
//
// Every operation here is one IEEE-754 operation with round-to-nearest-even, or a fixed
// composition of such operations. Kernels spell multiply-adds with bl::fma (one rounding) or with
// bl::mul then bl::add (two roundings); the build turns contraction off so the compiler cannot turn
// one into the other (docs/contract.md, "Arithmetic").
#pragma once

#include "contract/compat.h"

namespace bl {

// The one NaN pattern every kernel stores (quiet, positive, zero payload).
constexpr uint32_t kCanonicalNanBits = 0x7FC00000u;

BL_HD float canonical_nan() { return float_of(kCanonicalNanBits); }

BL_HD bool is_nan(float x) { return (bits_of(x) & 0x7FFFFFFFu) > 0x7F800000u; }
BL_HD bool is_inf(float x) { return (bits_of(x) & 0x7FFFFFFFu) == 0x7F800000u; }
BL_HD bool is_finite(float x) { return (bits_of(x) & 0x7F800000u) != 0x7F800000u; }
BL_HD bool sign_bit(float x) { return (bits_of(x) >> 31) != 0; }

// Any NaN becomes the canonical NaN; every other value is returned unchanged.
BL_HD float canonicalize(float x) { return is_nan(x) ? canonical_nan() : x; }

BL_HD float add(float a, float b) { return a + b; }
BL_HD float sub(float a, float b) { return a - b; }
BL_HD float mul(float a, float b) { return a * b; }
// Correctly rounded division (hardware on CPUs; nvcc is run with -prec-div=true).
BL_HD float div(float a, float b) { return a / b; }

// Fused multiply-add: a*b+c with a single rounding.
BL_HD float fma(float a, float b, float c) {
  return BL_DEVICE_OR_HOST(__fmaf_rn(a, b, c), __builtin_fmaf(a, b, c));
}

// Correctly rounded square root.
BL_HD float sqrt(float x) {
  return BL_DEVICE_OR_HOST(__fsqrt_rn(x), __builtin_sqrtf(x));
}

BL_HD float abs(float x) { return float_of(bits_of(x) & 0x7FFFFFFFu); }
BL_HD float neg(float x) { return float_of(bits_of(x) ^ 0x80000000u); }
BL_HD float copysign(float magnitude, float sign_source) {
  return float_of((bits_of(magnitude) & 0x7FFFFFFFu) | (bits_of(sign_source) & 0x80000000u));
}

// max and min as the contract defines them (IEEE 754-2019 maximum/minimum):
// a NaN operand gives the canonical NaN; +0 is greater than -0.
BL_HD float max(float a, float b) {
  if (is_nan(a) || is_nan(b)) return canonical_nan();
  if (a == b) return sign_bit(a) ? b : a;  // equal values: prefer +0 over -0
  return a > b ? a : b;
}

BL_HD float min(float a, float b) {
  if (is_nan(a) || is_nan(b)) return canonical_nan();
  if (a == b) return sign_bit(a) ? a : b;  // equal values: prefer -0 over +0
  return a < b ? a : b;
}

// Total order key: maps a float to an unsigned integer whose order is -NaN < -inf < ... < -0 < +0
// < ... < +inf < +NaN. Used by sort, top-k and arg-reductions for a defined order of every value.
BL_HD uint32_t total_order_key(float x) {
  uint32_t u = bits_of(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace bl
