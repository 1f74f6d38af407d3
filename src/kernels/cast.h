// cast.h: conversion between dtypes: the element function (shared by every backend) and the
// scalar reference. The rules are those of bl::cast in bitlearn/ops_elementwise.h:
//   f32 -> integer: truncation toward zero; NaN -> 0; out of range saturates (u8: [0, 255]).
//   f32 -> boolean and any -> boolean: x != 0 (NaN -> 1).
//   integer -> f32: round to nearest even (the hardware conversion, correctly rounded everywhere).
//   integer -> integer: two's-complement wrap (keeps the low bits).
// Booleans are stored as uint8_t 0 / 1, so boolean -> anything is the 0 / 1 value converted.
#pragma once

#include "contract/arith.h"
#include "kernels/strided.h"

namespace bl {

// Generic: integer -> integer (wrap) and integer -> f32 (round to nearest even).
template <typename From, typename To>
struct CastValue {
  BL_HD static To apply(From x) { return static_cast<To>(x); }
};
// Narrowing between signed types: go through the unsigned type so the wrap is explicit.
template <>
struct CastValue<int64_t, int32_t> {
  BL_HD static int32_t apply(int64_t x) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)));
  }
};
template <>
struct CastValue<int64_t, uint8_t> {
  BL_HD static uint8_t apply(int64_t x) { return static_cast<uint8_t>(static_cast<uint64_t>(x)); }
};
template <>
struct CastValue<int32_t, uint8_t> {
  BL_HD static uint8_t apply(int32_t x) { return static_cast<uint8_t>(static_cast<uint32_t>(x)); }
};
template <>
struct CastValue<float, float> {
  BL_HD static float apply(float x) { return x; }
};
template <>
struct CastValue<float, int32_t> {
  BL_HD static int32_t apply(float x) {
    if (is_nan(x)) return 0;
    if (x >= 2147483648.0f) return 2147483647;
    if (x < -2147483648.0f) return -2147483647 - 1;
    return static_cast<int32_t>(x);  // in range: truncation toward zero
  }
};
template <>
struct CastValue<float, int64_t> {
  BL_HD static int64_t apply(float x) {
    if (is_nan(x)) return 0;
    if (x >= 9223372036854775808.0f) return INT64_MAX;
    if (x < -9223372036854775808.0f) return INT64_MIN;
    return static_cast<int64_t>(x);
  }
};
template <>
struct CastValue<float, uint8_t> {
  BL_HD static uint8_t apply(float x) {
    if (!(x > 0.0f)) return 0;  // NaN, zeros, negatives (truncation of (-1, 0) is 0 anyway)
    if (x >= 255.0f) return 255;
    return static_cast<uint8_t>(static_cast<int32_t>(x));
  }
};

// To boolean: x != 0 (the To type is uint8_t with value 0 or 1).
template <typename From>
BL_HD uint8_t cast_to_bool(From x) {
  return x != From(0) ? 1 : 0;
}

// REFERENCE: out[i] = CastValue<From, To>(in[offset(i)]); to_bool selects cast_to_bool instead.
template <typename From, typename To>
void cast_reference(const From* in, const StridedView& view, To* out, int64_t n, bool to_bool) {
  for (int64_t i = 0; i < n; ++i) {
    From x = in[strided_offset(view, i)];
    out[i] = to_bool ? static_cast<To>(cast_to_bool<From>(x)) : CastValue<From, To>::apply(x);
  }
}

}  // namespace bl
