// vec_avx512.h: the vector traits of the AVX-512 build (16 floats a register). Include only from
// *_avx512.cpp (compiled with AVX-512 F, VL, BW, DQ), or from a test that defines
// BL_AVX512_EMULATION and supplies the intrinsics itself (tests/isa/avx512_emulation.h). The
// traits live in an unnamed namespace so every leaf instantiated with them stays private to its
// translation unit (scripts/check_isa_objects.sh). vec_scalar.h lists the operation set.
#pragma once

#if !defined(BL_AVX512_EMULATION)
#include <immintrin.h>
#endif

#include <cstdint>

namespace bl::simd {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  using F = __m512;
  using I = __m512i;
  using N = __mmask16;  // a bit per slot that saw a NaN

  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* aligned, F v) { _mm512_store_ps(aligned, v); }
  static void storeu(float* p, F v) { _mm512_storeu_ps(p, v); }
  // v with every NaN slot replaced by `nan` (the canonical NaN, broadcast).
  static F canonical(F v, F nan) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v, nan); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F abs(F a) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7FFFFFFF)));
  }

  // The total-order key of each slot: bits ^ ((bits >> 31) & 0x7FFFFFFF) as a signed integer.
  static I key(F v) {
    const __m512i u = _mm512_castps_si512(v);
    return _mm512_xor_si512(u, _mm512_and_si512(_mm512_srai_epi32(u, 31), _mm512_set1_epi32(0x7FFFFFFF)));
  }
  static I set1_i32(int32_t v) { return _mm512_set1_epi32(v); }
  static I max_i32(I a, I b) { return _mm512_max_epi32(a, b); }
  static I min_i32(I a, I b) { return _mm512_min_epi32(a, b); }
  // Horizontal steps, fixed: slot 0, then slots 1..15 in ascending order.
  static int32_t hmax_i32(I v) {
    alignas(64) int32_t s[16];
    _mm512_store_si512(s, v);
    int32_t b = s[0];
    for (int k = 1; k < 16; ++k) b = s[k] > b ? s[k] : b;
    return b;
  }
  static int32_t hmin_i32(I v) {
    alignas(64) int32_t s[16];
    _mm512_store_si512(s, v);
    int32_t b = s[0];
    for (int k = 1; k < 16; ++k) b = s[k] < b ? s[k] : b;
    return b;
  }

  static N nan_none() { return 0; }
  static N nan_note(N seen, F v) { return static_cast<N>(seen | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)); }
  static N nan_or(N a, N b) { return static_cast<N>(a | b); }
  static bool nan_any(N seen) { return seen != 0; }
};

}  // namespace
}  // namespace bl::simd
