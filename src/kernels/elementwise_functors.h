// elementwise_functors.h: the element functions of unary.h, binary.h and cast.h wrapped as small
// functor types, so the CPU loops and the CUDA kernels instantiate one tight loop per op (the op
// is a template constant, not a per-element branch). Shared by every backend (C++14 subset).
#pragma once

#include "kernels/binary.h"
#include "kernels/cast.h"
#include "kernels/unary.h"

namespace bl {

template <int OP>
struct UnaryF32Fn {
  BL_HD float operator()(float x) const { return unary_f32(static_cast<UnaryOp>(OP), x); }
};

template <int OP, typename I, typename U>
struct UnaryIntFn {
  BL_HD I operator()(I x) const { return unary_int<I, U>(static_cast<UnaryOp>(OP), x); }
};

template <int OP>
struct BinaryF32Fn {
  BL_HD float operator()(float a, float b) const { return binary_f32(static_cast<BinaryOp>(OP), a, b); }
};

template <int OP, typename I, typename U>
struct BinaryIntFn {
  BL_HD I operator()(I a, I b) const { return binary_int<I, U>(static_cast<BinaryOp>(OP), a, b); }
};

template <int OP, typename T>
struct CompareFn {
  BL_HD uint8_t operator()(T a, T b) const { return compare_value<T>(static_cast<CompareOp>(OP), a, b); }
};

template <typename T>
struct WhereFn {
  BL_HD T operator()(uint8_t c, T a, T b) const { return c != 0 ? a : b; }
};

template <typename From, typename To>
struct CastFn {
  BL_HD To operator()(From x) const { return CastValue<From, To>::apply(x); }
};

template <typename From>
struct CastBoolFn {
  BL_HD uint8_t operator()(From x) const { return cast_to_bool<From>(x); }
};

template <typename T>
struct IdentityFn {
  BL_HD T operator()(T x) const { return x; }
};

}  // namespace bl
