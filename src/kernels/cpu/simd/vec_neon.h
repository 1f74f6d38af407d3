// vec_neon.h: the vector traits of the AArch64 NEON build (4 floats a register; NEON is in the
// AArch64 baseline). Include only from *_neon.cpp on AArch64. The traits live in an unnamed
// namespace so every leaf instantiated with them stays private to its translation unit.
// vec_scalar.h lists the operation set.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/cpu/simd/vec_types.h"

namespace bl::simd {
namespace {

// N: all-ones in the slots that saw only ordered values.
struct Neon {
  BL_SIMD_VEC_TYPES(4, float32x4_t, int32x4_t, uint32x4_t)
  static F zero() { return vdupq_n_f32(0.0f); }
  static F set1(float v) { return vdupq_n_f32(v); }
  static F loadu(const float* p) { return vld1q_f32(p); }
  static void store(float* aligned, F v) { vst1q_f32(aligned, v); }
  static void storeu(float* p, F v) { vst1q_f32(p, v); }
  // v with every NaN slot replaced by `nan` (the canonical NaN, broadcast).
  static F canonical(F v, F nan) { return vbslq_f32(vceqq_f32(v, v), v, nan); }
  static F add(F a, F b) { return vaddq_f32(a, b); }
  static F sub(F a, F b) { return vsubq_f32(a, b); }
  static F fma(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static F abs(F a) { return vabsq_f32(a); }  // FABS clears the sign bit only, like bl::abs

  // The total-order key of each slot: bits ^ ((bits >> 31) & 0x7FFFFFFF) as a signed integer.
  static I key(F v) {
    const int32x4_t u = vreinterpretq_s32_f32(v);
    return veorq_s32(u, vandq_s32(vshrq_n_s32(u, 31), vdupq_n_s32(0x7FFFFFFF)));
  }
  static I set1_i32(int32_t v) { return vdupq_n_s32(v); }
  static I max_i32(I a, I b) { return vmaxq_s32(a, b); }
  static I min_i32(I a, I b) { return vminq_s32(a, b); }
  static int32_t hmax_i32(I v) { return vmaxvq_s32(v); }
  static int32_t hmin_i32(I v) { return vminvq_s32(v); }

  static N nan_none() { return vdupq_n_u32(0xFFFFFFFFu); }
  static N nan_note(N ordered, F v) { return vandq_u32(ordered, vceqq_f32(v, v)); }
  static N nan_or(N a, N b) { return vandq_u32(a, b); }
  static bool nan_any(N ordered) { return vminvq_u32(ordered) == 0; }
};

}  // namespace
}  // namespace bl::simd
