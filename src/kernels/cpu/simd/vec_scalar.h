// vec_scalar.h: the vector traits with one float a "register", in plain C++. It documents the
// operation set every traits header of this folder provides (vec_avx2.h, vec_avx512.h,
// vec_neon.h), and lets the tests run the generic leaves (reduce_leaf.h) on any machine.
//   kLanes                    floats per register
//   F, I, N                   float register, int32 register, NaN accumulator
//   zero, set1, loadu, store, storeu (store: to an address aligned to the register size)
//   canonical(v, nan)         v with its NaN slots replaced by nan
//   add, sub, fma(a, b, c)    a + b, a - b, a * b + c rounded once; abs clears the sign bit
//   key                       the total-order key bits ^ ((bits >> 31) & 0x7FFFFFFF), signed
//   set1_i32, max_i32, min_i32, hmax_i32, hmin_i32 (horizontal, in a fixed order)
//   nan_none, nan_note, nan_or, nan_any: whether any slot saw a NaN
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/simd/vec_types.h"

namespace bl::simd {
namespace {

struct Scalar {
  BL_SIMD_VEC_TYPES(1, float, int32_t, bool)
  static F zero() { return 0.0f; }
  static F set1(float v) { return v; }
  static F loadu(const float* p) { return *p; }
  static void store(float* aligned, F v) { *aligned = v; }
  static void storeu(float* p, F v) { *p = v; }
  static F canonical(F v, F nan) { return v != v ? nan : v; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F fma(F a, F b, F c) { return std::fma(a, b, c); }
  static F abs(F a) {
    uint32_t u;
    std::memcpy(&u, &a, 4);
    u &= 0x7FFFFFFFu;
    std::memcpy(&a, &u, 4);
    return a;
  }

  static I key(F v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return static_cast<int32_t>(u ^ ((u >> 31) ? 0x7FFFFFFFu : 0u));
  }
  static I set1_i32(int32_t v) { return v; }
  static I max_i32(I a, I b) { return a > b ? a : b; }
  static I min_i32(I a, I b) { return a < b ? a : b; }
  static int32_t hmax_i32(I v) { return v; }
  static int32_t hmin_i32(I v) { return v; }

  static N nan_none() { return false; }
  static N nan_note(N seen, F v) { return seen || v != v; }
  static N nan_or(N a, N b) { return a || b; }
  static bool nan_any(N seen) { return seen; }
};

}  // namespace
}  // namespace bl::simd
