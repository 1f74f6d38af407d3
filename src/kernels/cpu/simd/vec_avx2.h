// vec_avx2.h: the vector traits of the AVX2+FMA build (8 floats a register). Include only from
// *_avx2.cpp (compiled with -mavx2 -mfma). The traits live in an unnamed namespace so every leaf
// instantiated with them stays private to its translation unit (scripts/check_isa_objects.sh).
// The operation set is the one of every traits header in this folder (vec_scalar.h lists it), plus
// canonical(v) with the contract's canonical NaN: include after BL_HD is redefined as
// `static inline`, as every *_avx2.cpp does before its first contract header.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "contract/arith.h"
#include "kernels/cpu/simd/vec_types.h"
#include "kernels/cpu/simd/vec_x86.h"

namespace bl::simd {
namespace {

// N: all-ones in the slots that saw a NaN.
struct Avx2 {
  BL_SIMD_VEC_TYPES(8, __m256, __m256i, __m256)
  // zero, set1, loadu, store, storeu, add, sub, fma; key (the total-order key of each slot:
  // bits ^ ((bits >> 31) & 0x7FFFFFFF) as a signed integer), set1_i32, max_i32, min_i32.
  BL_SIMD_X86_VEC_OPS(_mm256, si256)
  // v with every NaN slot replaced by `nan` (the canonical NaN, broadcast).
  static F canonical(F v, F nan) { return _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  // v with every NaN slot replaced by the canonical NaN of contract/arith.h.
  static F canonical(F v) { return canonical(v, set1(canonical_nan())); }
  static F abs(F a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }

  // Horizontal steps, fixed: the two halves, then slots 2 apart, then 1 apart; step(a, b) is the
  // 128-bit max or min.
  template <typename Step>
  static int32_t hreduce_i32(I v, Step step) {
    __m128i m = step(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = step(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = step(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(m);
  }
  static int32_t hmax_i32(I v) {
    return hreduce_i32(v, [](__m128i a, __m128i b) { return _mm_max_epi32(a, b); });
  }
  static int32_t hmin_i32(I v) {
    return hreduce_i32(v, [](__m128i a, __m128i b) { return _mm_min_epi32(a, b); });
  }

  static N nan_none() { return _mm256_setzero_ps(); }
  static N nan_note(N seen, F v) { return _mm256_or_ps(seen, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  static N nan_or(N a, N b) { return _mm256_or_ps(a, b); }
  static bool nan_any(N seen) { return _mm256_movemask_ps(seen) != 0; }
};

}  // namespace
}  // namespace bl::simd
