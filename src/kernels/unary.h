// unary.h: elementwise unary ops: element functions (shared by every backend) and the scalar
// reference, which is the specification.
//
// f32 results: NaN inputs and NaN results give the canonical NaN. floor, ceil and round work on the
// bit pattern (no libm): exact for every input. Integer ops wrap modulo 2^bits.
#pragma once

#include "contract/math.h"
#include "kernels/strided.h"

namespace bl {

enum class UnaryOp : int {
  // contract math functions (f32 only)
  exp, expm1, log, log1p, log2, tanh, sigmoid, erf, gelu, gelu_tanh, silu, softplus, sin, cos, rsqrt,
  // simple ops
  abs, neg, sqrt, relu, square, reciprocal, sign, floor, ceil, round,
  count_
};

constexpr int kUnaryOpCount = static_cast<int>(UnaryOp::count_);

// Name used in errors ("exp", "relu", ...).
const char* unary_op_name(UnaryOp op);
// True for ops that accept i32 / i64 (abs, neg, relu, square, sign).
BL_HD bool unary_op_supports_int(UnaryOp op) {
  return op == UnaryOp::abs || op == UnaryOp::neg || op == UnaryOp::relu || op == UnaryOp::square ||
         op == UnaryOp::sign;
}

// Largest float below 2^23 has no fraction bits beyond; these helpers follow the binary32 layout:
// e = unbiased exponent; for 0 <= e < 23 the low (23 - e) mantissa bits are the fraction.

// Rounds toward -inf. Exact.
BL_HD float floor_bits(float x) {
  uint32_t u = bits_of(x);
  int e = static_cast<int>((u >> 23) & 0xFFu) - 127;
  if (e >= 23) return x;  // already integral, or inf / NaN (NaN is canonicalized by the caller)
  bool negative = (u >> 31) != 0;
  if (e < 0) {  // |x| < 1
    if ((u & 0x7FFFFFFFu) == 0) return x;  // +-0 unchanged
    return negative ? -1.0f : 0.0f;
  }
  uint32_t fraction_mask = 0x007FFFFFu >> e;
  if ((u & fraction_mask) == 0) return x;
  if (negative) u += 0x00800000u >> e;  // one unit away from zero; a carry into the exponent is right
  return float_of(u & ~fraction_mask);
}

// Rounds toward +inf. Exact.
BL_HD float ceil_bits(float x) {
  uint32_t u = bits_of(x);
  int e = static_cast<int>((u >> 23) & 0xFFu) - 127;
  if (e >= 23) return x;
  bool negative = (u >> 31) != 0;
  if (e < 0) {
    if ((u & 0x7FFFFFFFu) == 0) return x;
    return negative ? -0.0f : 1.0f;
  }
  uint32_t fraction_mask = 0x007FFFFFu >> e;
  if ((u & fraction_mask) == 0) return x;
  if (!negative) u += 0x00800000u >> e;
  return float_of(u & ~fraction_mask);
}

// Rounds to the nearest integer, ties to even; keeps the sign of zero results. Exact.
BL_HD float round_bits(float x) {
  uint32_t u = bits_of(x);
  int e = static_cast<int>((u >> 23) & 0xFFu) - 127;
  if (e >= 23) return x;
  uint32_t sign = u & 0x80000000u;
  if (e < -1) return float_of(sign);  // |x| < 0.5 -> +-0
  if (e == -1) {                       // 0.5 <= |x| < 1: 0.5 ties to 0 (even), else 1
    return (u & 0x7FFFFFFFu) == 0x3F000000u ? float_of(sign) : float_of(sign | 0x3F800000u);
  }
  uint32_t unit = 0x00800000u >> e;  // the integer part's lowest bit (e == 0: the exponent's lsb, 1)
  uint32_t fraction_mask = unit - 1u;
  uint32_t half = unit >> 1;
  uint32_t fraction = u & fraction_mask;
  uint32_t base = u & ~fraction_mask;
  if (fraction > half || (fraction == half && (u & unit) != 0)) base += unit;
  return float_of(base);
}

// The f32 element function. op is usually a compile-time constant at the call site.
BL_HD float unary_f32(UnaryOp op, float x) {
  float r;
  switch (op) {
    case UnaryOp::exp: r = exp(x); break;
    case UnaryOp::expm1: r = expm1(x); break;
    case UnaryOp::log: r = log(x); break;
    case UnaryOp::log1p: r = log1p(x); break;
    case UnaryOp::log2: r = log2(x); break;
    case UnaryOp::tanh: r = tanh(x); break;
    case UnaryOp::sigmoid: r = sigmoid(x); break;
    case UnaryOp::erf: r = erf(x); break;
    case UnaryOp::gelu: r = gelu(x); break;
    case UnaryOp::gelu_tanh: r = gelu_tanh(x); break;
    case UnaryOp::silu: r = silu(x); break;
    case UnaryOp::softplus: r = softplus(x); break;
    case UnaryOp::sin: r = sin(x); break;
    case UnaryOp::cos: r = cos(x); break;
    case UnaryOp::rsqrt: r = rsqrt(x); break;
    case UnaryOp::abs: r = abs(x); break;
    case UnaryOp::neg: r = neg(x); break;
    case UnaryOp::sqrt: r = sqrt(x); break;
    case UnaryOp::relu: r = x > 0.0f ? x : (is_nan(x) ? x : 0.0f); break;
    case UnaryOp::square: r = mul(x, x); break;
    case UnaryOp::reciprocal: r = div(1.0f, x); break;
    case UnaryOp::sign: r = x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); break;
    case UnaryOp::floor: r = floor_bits(x); break;
    case UnaryOp::ceil: r = ceil_bits(x); break;
    case UnaryOp::round: r = round_bits(x); break;
    default: r = canonical_nan(); break;
  }
  return canonicalize(r);
}

// The integer element function (I = int32_t or int64_t, U its unsigned twin); wraps.
template <typename I, typename U>
BL_HD I unary_int(UnaryOp op, I x) {
  switch (op) {
    case UnaryOp::abs: return x < 0 ? static_cast<I>(U(0) - static_cast<U>(x)) : x;
    case UnaryOp::neg: return static_cast<I>(U(0) - static_cast<U>(x));
    case UnaryOp::relu: return x > 0 ? x : I(0);
    case UnaryOp::square: return static_cast<I>(static_cast<U>(x) * static_cast<U>(x));
    case UnaryOp::sign: return x > 0 ? I(1) : (x < 0 ? I(-1) : I(0));
    default: return I(0);
  }
}

// REFERENCE: out[i] = unary_f32(op, in[strided_offset(in_view, i)]) for i in [0, n).
inline void unary_f32_reference(UnaryOp op, const float* in, const StridedView& in_view, float* out,
                                int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = unary_f32(op, in[strided_offset(in_view, i)]);
}

// REFERENCE for i32 / i64 inputs.
template <typename I, typename U>
void unary_int_reference(UnaryOp op, const I* in, const StridedView& in_view, I* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = unary_int<I, U>(op, in[strided_offset(in_view, i)]);
}

}  // namespace bl
