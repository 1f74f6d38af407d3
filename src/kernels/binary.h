// binary.h: elementwise binary ops, comparisons and where: element functions (shared by every
// backend) and the scalar reference (the specification). Operands are broadcast by StridedViews.
//
// f32 arithmetic is one IEEE operation (or the contract's bl::max / bl::min / bl::pow), NaN
// results canonical. Integer add/sub/mul wrap modulo 2^bits. Comparisons are IEEE (NaN compares
// false except ne) and give 0 or 1.
#pragma once

#include "contract/math.h"
#include "kernels/strided.h"

namespace bl {

enum class BinaryOp : int { add, sub, mul, div, maximum, minimum, pow, count_ };
enum class CompareOp : int { eq, ne, lt, le, gt, ge, count_ };

// Names used in errors.
const char* binary_op_name(BinaryOp op);
const char* compare_op_name(CompareOp op);
// div and pow are f32 only.
BL_HD bool binary_op_supports_int(BinaryOp op) { return op != BinaryOp::div && op != BinaryOp::pow; }

BL_HD float binary_f32(BinaryOp op, float a, float b) {
  float r;
  switch (op) {
    case BinaryOp::add: r = add(a, b); break;
    case BinaryOp::sub: r = sub(a, b); break;
    case BinaryOp::mul: r = mul(a, b); break;
    case BinaryOp::div: r = div(a, b); break;
    case BinaryOp::maximum: r = max(a, b); break;
    case BinaryOp::minimum: r = min(a, b); break;
    case BinaryOp::pow: r = pow(a, b); break;
    default: r = canonical_nan(); break;
  }
  return canonicalize(r);
}

// Integer arithmetic (I = int32_t / int64_t, U its unsigned twin): wraps modulo 2^bits.
template <typename I, typename U>
BL_HD I binary_int(BinaryOp op, I a, I b) {
  switch (op) {
    case BinaryOp::add: return static_cast<I>(static_cast<U>(a) + static_cast<U>(b));
    case BinaryOp::sub: return static_cast<I>(static_cast<U>(a) - static_cast<U>(b));
    case BinaryOp::mul: return static_cast<I>(static_cast<U>(a) * static_cast<U>(b));
    case BinaryOp::maximum: return a > b ? a : b;
    case BinaryOp::minimum: return a < b ? a : b;
    default: return I(0);
  }
}

// Comparison of two values of one type (float, int32_t, int64_t, uint8_t): 1 or 0.
template <typename T>
BL_HD uint8_t compare_value(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::eq: return a == b ? 1 : 0;
    case CompareOp::ne: return a != b ? 1 : 0;
    case CompareOp::lt: return a < b ? 1 : 0;
    case CompareOp::le: return a <= b ? 1 : 0;
    case CompareOp::gt: return a > b ? 1 : 0;
    case CompareOp::ge: return a >= b ? 1 : 0;
    default: return 0;
  }
}

// REFERENCE: out[i] = binary_f32(op, a[offset_a(i)], b[offset_b(i)]).
inline void binary_f32_reference(BinaryOp op, const float* a, const StridedView& va, const float* b,
                                 const StridedView& vb, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = binary_f32(op, a[strided_offset(va, i)], b[strided_offset(vb, i)]);
}

template <typename I, typename U>
void binary_int_reference(BinaryOp op, const I* a, const StridedView& va, const I* b,
                          const StridedView& vb, I* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = binary_int<I, U>(op, a[strided_offset(va, i)], b[strided_offset(vb, i)]);
}

template <typename T>
void compare_reference(CompareOp op, const T* a, const StridedView& va, const T* b,
                       const StridedView& vb, uint8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = compare_value<T>(op, a[strided_offset(va, i)], b[strided_offset(vb, i)]);
}

// REFERENCE for where: out[i] = cond[i] != 0 ? a[i] : b[i] (T any element type; bits copied).
template <typename T>
void where_reference(const uint8_t* cond, const StridedView& vc, const T* a, const StridedView& va,
                     const T* b, const StridedView& vb, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = cond[strided_offset(vc, i)] != 0 ? a[strided_offset(va, i)] : b[strided_offset(vb, i)];
}

}  // namespace bl
