// ops_elementwise.h: elementwise unary, binary (numpy broadcasting), comparison, where and cast.
//
// Results are bitwise identical on every device and thread count: each output element is a fixed
// function of its inputs (src/kernels/unary.h, binary.h, cast.h hold the reference). Every f32
// result that is a NaN is the canonical NaN 0x7FC00000.
//
// Dtypes: arithmetic ops take f32, i32 or i64 (div, pow and the math functions take f32 only);
// both operands of a binary op must have the same dtype (no implicit promotion: use cast) and the
// same device. Integer add/sub/mul/neg/abs wrap modulo 2^bits. Comparisons accept every dtype and
// return boolean. Broadcasting follows numpy: shapes are aligned at the trailing dimension and an
// extent of 1 stretches.
#pragma once

#include "bitlearn/tensor.h"

namespace bl {

// ---- contract math functions (f32 only; src/contract/math.h) ----
Tensor exp(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor gelu(const Tensor& x);       // erf form: x * 0.5 * (1 + erf(x / sqrt 2)) as the contract defines
Tensor gelu_tanh(const Tensor& x);  // tanh approximation as the contract defines
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor rsqrt(const Tensor& x);  // correctly rounded 1 / sqrt(x) (contract bl::rsqrt)

// ---- simple unary ops ----
Tensor abs(const Tensor& x);         // f32: clears the sign bit (NaN -> canonical); ints: wraps
Tensor neg(const Tensor& x);         // f32: flips the sign bit (NaN -> canonical); ints: wraps
Tensor sqrt(const Tensor& x);        // f32, correctly rounded
Tensor relu(const Tensor& x);        // x > 0 ? x : +0 (f32: NaN -> canonical NaN, -0 -> +0); ints
Tensor square(const Tensor& x);      // x * x (one rounding); ints wrap
Tensor reciprocal(const Tensor& x);  // 1 / x, correctly rounded (f32)
Tensor sign(const Tensor& x);        // -1, 0 or +1; f32 zeros keep their sign, NaN -> canonical NaN
Tensor floor(const Tensor& x);       // f32, exact, by integer bit manipulation
Tensor ceil(const Tensor& x);        // f32, exact
Tensor round(const Tensor& x);       // f32, to nearest, ties to even (numpy / IEEE roundeven)
Tensor logical_not(const Tensor& x); // boolean (or any dtype: x == 0) -> boolean

// ---- binary arithmetic with broadcasting ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);      // f32 only, correctly rounded
Tensor maximum(const Tensor& a, const Tensor& b);  // bl::max: NaN wins (canonical), +0 > -0
Tensor minimum(const Tensor& a, const Tensor& b);  // bl::min: NaN wins (canonical), -0 < +0
Tensor pow(const Tensor& a, const Tensor& b);      // f32 only, contract bl::pow

// ---- comparisons with broadcasting -> boolean (IEEE: any comparison with NaN is false, except ne) ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

// cond ? a : b elementwise, with the three operands broadcast together. cond must be boolean;
// a and b must share dtype and device.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// Converts x to dtype. Rules (identical on every device):
//   f32 -> integer: truncation toward zero; NaN -> 0; values beyond the target range saturate to
//                   its minimum / maximum (u8: [0, 255]).
//   f32 -> boolean: x != 0 (NaN -> true, -0 -> false).
//   integer -> f32: rounded to nearest, ties to even.
//   integer -> narrower integer: two's-complement wrap (the low bits).
//   any -> boolean: x != 0;  boolean -> any: 0 or 1.
Tensor cast(const Tensor& x, DType dtype);

// Operators for the binary ops.
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

// The shape numpy broadcasting gives for a and b; bl::Error naming op and both shapes if they do
// not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace bl
