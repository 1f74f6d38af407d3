// avx512_emulation.h: the AVX-512 intrinsics that src/**/cpu/*_avx512.cpp use, written as plain C++
// one lane at a time, with the hardware's documented per-lane semantics (one rounding per fused
// multiply-add, masked loads that leave masked lanes at zero and never touch their memory, masked
// stores that leave them unchanged, 64-byte alignment required by the aligned stores).
//
// The tests in this folder compile the AVX-512 kernel sources against it (BL_AVX512_EMULATION), so
// a machine without AVX-512 checks the kernels' logic: lanes, panels, masks, leaf folds. Whether
// the real instructions behave as documented is checked on an AVX-512 machine by the conformance
// tests under BITLEARN_ISA=avx512 (scripts/gpu-check.sh --only isa).
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>  // _mm_prefetch (SSE, part of the x86-64 baseline)
#else
#define _MM_HINT_T0 3
#define _mm_prefetch(address, hint) __builtin_prefetch((address), 0, 3)
#endif

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

struct __m512 {
  float f[16];
};
struct __m512i {
  int32_t i[16];
};
typedef uint16_t __mmask16;
#define _CMP_UNORD_Q 3

// Sabotage switch for the tests: when true, _mm512_fmadd_ps rounds twice (multiply, then add).
inline bool g_avx512_emulation_unfused = false;

static inline bool bl_emu_lane(__mmask16 m, int l) { return ((m >> l) & 1u) != 0; }
static inline void bl_emu_require_aligned(const void* p) {
  if (reinterpret_cast<uintptr_t>(p) % 64 != 0) std::abort();  // the real aligned store faults
}

static inline __m512 _mm512_setzero_ps() {
  __m512 r;
  for (int l = 0; l < 16; ++l) r.f[l] = 0.0f;
  return r;
}
static inline __m512 _mm512_set1_ps(float v) {
  __m512 r;
  for (int l = 0; l < 16; ++l) r.f[l] = v;
  return r;
}
static inline __m512 _mm512_loadu_ps(const void* p) {
  __m512 r;
  std::memcpy(r.f, p, sizeof r.f);
  return r;
}
static inline void _mm512_storeu_ps(void* p, __m512 v) { std::memcpy(p, v.f, sizeof v.f); }
static inline void _mm512_store_ps(void* p, __m512 v) {
  bl_emu_require_aligned(p);
  std::memcpy(p, v.f, sizeof v.f);
}
static inline __m512 _mm512_fmadd_ps(__m512 a, __m512 b, __m512 c) {
  __m512 r;
  for (int l = 0; l < 16; ++l) {
    if (g_avx512_emulation_unfused) {
      volatile float product = a.f[l] * b.f[l];
      r.f[l] = product + c.f[l];
    } else {
      r.f[l] = std::fma(a.f[l], b.f[l], c.f[l]);
    }
  }
  return r;
}
static inline __m512 _mm512_add_ps(__m512 a, __m512 b) {
  __m512 r;
  for (int l = 0; l < 16; ++l) r.f[l] = a.f[l] + b.f[l];
  return r;
}
static inline __m512 _mm512_sub_ps(__m512 a, __m512 b) {
  __m512 r;
  for (int l = 0; l < 16; ++l) r.f[l] = a.f[l] - b.f[l];
  return r;
}
static inline __m512 _mm512_maskz_loadu_ps(__mmask16 m, const void* p) {
  __m512 r;
  const float* q = static_cast<const float*>(p);
  for (int l = 0; l < 16; ++l) r.f[l] = bl_emu_lane(m, l) ? q[l] : 0.0f;
  return r;
}
static inline void _mm512_mask_storeu_ps(void* p, __mmask16 m, __m512 v) {
  float* q = static_cast<float*>(p);
  for (int l = 0; l < 16; ++l)
    if (bl_emu_lane(m, l)) q[l] = v.f[l];
}
static inline __mmask16 _mm512_cmp_ps_mask(__m512 a, __m512 b, int predicate) {
  if (predicate != _CMP_UNORD_Q) std::abort();  // the only predicate the kernels use
  __mmask16 m = 0;
  for (int l = 0; l < 16; ++l)
    if (std::isnan(a.f[l]) || std::isnan(b.f[l])) m = static_cast<__mmask16>(m | (1u << l));
  return m;
}
static inline __m512 _mm512_mask_blend_ps(__mmask16 m, __m512 a, __m512 b) {
  __m512 r;
  for (int l = 0; l < 16; ++l) r.f[l] = bl_emu_lane(m, l) ? b.f[l] : a.f[l];
  return r;
}
static inline __m512i _mm512_set1_epi32(int32_t v) {
  __m512i r;
  for (int l = 0; l < 16; ++l) r.i[l] = v;
  return r;
}
static inline __m512i _mm512_castps_si512(__m512 v) {
  __m512i r;
  std::memcpy(r.i, v.f, sizeof r.i);
  return r;
}
static inline __m512 _mm512_castsi512_ps(__m512i v) {
  __m512 r;
  std::memcpy(r.f, v.i, sizeof r.f);
  return r;
}
static inline __m512i _mm512_and_si512(__m512i a, __m512i b) {
  __m512i r;
  for (int l = 0; l < 16; ++l) r.i[l] = a.i[l] & b.i[l];
  return r;
}
static inline __m512i _mm512_xor_si512(__m512i a, __m512i b) {
  __m512i r;
  for (int l = 0; l < 16; ++l) r.i[l] = a.i[l] ^ b.i[l];
  return r;
}
static inline __m512i _mm512_srai_epi32(__m512i a, unsigned shift) {
  __m512i r;
  for (int l = 0; l < 16; ++l) r.i[l] = a.i[l] >> shift;  // arithmetic shift (g++, clang)
  return r;
}
static inline __m512i _mm512_max_epi32(__m512i a, __m512i b) {
  __m512i r;
  for (int l = 0; l < 16; ++l) r.i[l] = a.i[l] > b.i[l] ? a.i[l] : b.i[l];
  return r;
}
static inline __m512i _mm512_min_epi32(__m512i a, __m512i b) {
  __m512i r;
  for (int l = 0; l < 16; ++l) r.i[l] = a.i[l] < b.i[l] ? a.i[l] : b.i[l];
  return r;
}
static inline void _mm512_store_si512(void* p, __m512i v) {
  bl_emu_require_aligned(p);
  std::memcpy(p, v.i, sizeof v.i);
}
