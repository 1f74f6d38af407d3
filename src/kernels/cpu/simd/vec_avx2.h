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

namespace bl::simd {
namespace {

struct Avx2 {
  static constexpr int kLanes = 8;
  using F = __m256;
  using I = __m256i;
  using N = __m256;  // all-ones in the slots that saw a NaN

  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* aligned, F v) { _mm256_store_ps(aligned, v); }
  static void storeu(float* p, F v) { _mm256_storeu_ps(p, v); }
  // v with every NaN slot replaced by `nan` (the canonical NaN, broadcast).
  static F canonical(F v, F nan) { return _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  // v with every NaN slot replaced by the canonical NaN of contract/arith.h.
  static F canonical(F v) { return canonical(v, set1(canonical_nan())); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F abs(F a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }

  // The total-order key of each slot: bits ^ ((bits >> 31) & 0x7FFFFFFF) as a signed integer.
  static I key(F v) {
    const __m256i u = _mm256_castps_si256(v);
    return _mm256_xor_si256(u, _mm256_and_si256(_mm256_srai_epi32(u, 31), _mm256_set1_epi32(0x7FFFFFFF)));
  }
  static I set1_i32(int32_t v) { return _mm256_set1_epi32(v); }
  static I max_i32(I a, I b) { return _mm256_max_epi32(a, b); }
  static I min_i32(I a, I b) { return _mm256_min_epi32(a, b); }
  // Horizontal steps, fixed: the two halves, then slots 2 apart, then 1 apart.
  static int32_t hmax_i32(I v) {
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(m);
  }
  static int32_t hmin_i32(I v) {
    __m128i m = _mm_min_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(m);
  }

  static N nan_none() { return _mm256_setzero_ps(); }
  static N nan_note(N seen, F v) { return _mm256_or_ps(seen, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  static N nan_or(N a, N b) { return _mm256_or_ps(a, b); }
  static bool nan_any(N seen) { return _mm256_movemask_ps(seen) != 0; }
};

}  // namespace
}  // namespace bl::simd
