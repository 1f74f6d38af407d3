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

#include "kernels/cpu/simd/vec_types.h"
#include "kernels/cpu/simd/vec_x86.h"

namespace bl::simd {
namespace {

// N: a bit per slot that saw a NaN.
struct Avx512 {
  BL_SIMD_VEC_TYPES(16, __m512, __m512i, __mmask16)
  // zero, set1, loadu, store, storeu, add, sub, fma; key (the total-order key of each slot:
  // bits ^ ((bits >> 31) & 0x7FFFFFFF) as a signed integer), set1_i32, max_i32, min_i32.
  BL_SIMD_X86_VEC_OPS(_mm512, si512)
  // v with every NaN slot replaced by `nan` (the canonical NaN, broadcast).
  static F canonical(F v, F nan) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v, nan); }
  static F abs(F a) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7FFFFFFF)));
  }

  // Horizontal steps, fixed: slot 0, then slots 1..15 in ascending order; keep(s, b) says whether
  // slot value s replaces the running value b.
  template <typename Keep>
  static int32_t hreduce_i32(I v, Keep keep) {
    alignas(64) int32_t s[16];
    _mm512_store_si512(s, v);
    int32_t b = s[0];
    for (int k = 1; k < 16; ++k) b = keep(s[k], b) ? s[k] : b;
    return b;
  }
  static int32_t hmax_i32(I v) {
    return hreduce_i32(v, [](int32_t s, int32_t b) { return s > b; });
  }
  static int32_t hmin_i32(I v) {
    return hreduce_i32(v, [](int32_t s, int32_t b) { return s < b; });
  }

  static N nan_none() { return 0; }
  static N nan_note(N seen, F v) { return static_cast<N>(seen | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)); }
  static N nan_or(N a, N b) { return static_cast<N>(a | b); }
  static bool nan_any(N seen) { return seen != 0; }
};

}  // namespace
}  // namespace bl::simd
