// exp_vec_avx512.h: the traits of the table-driven binary64 exp (exp_f64_table.h) for AVX-512
// (F, VL, DQ): blocks of 16 floats evaluated as two halves of 8 doubles; the 16-entry table sits
// in two registers and is read by one two-source permute (vpermt2pd) instead of a gather. Include
// only from *_avx512.cpp; unnamed namespace, as in vec_avx512.h. The float operations common to
// every leaf (set1, zero, loadu, store, storeu, add, sub) come from the Avx512 traits of vec_avx512.h,
// the members spelled alike for both widths from vec_x86.h.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/simd/vec_avx512.h"

namespace bl::simd {
namespace {

struct Avx512Exp : Avx512 {
  using M = __mmask16;
  using H = __m256;
  using D = __m512d;
  using Q = __m512i;
  struct Table {
    __m512d lo, hi;  // entries 0..7 and 8..15
  };

  // load, stream, stream_fence, prefetch; set1_d, fma_d, fnma_d, sub_d, mul_d; as_q, as_d, and_q,
  // add_q, sub_q, shl48_q.
  BL_SIMD_X86_EXP_OPS(_mm512, si512)
  static __mmask16 first_bits(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  // p[0..n) into the first n lanes, zeros in the others (0 <= n < kLanes); reads only p[0..n).
  static F load_first(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first_bits(n), p); }
  // The first n lanes of v into p[0..n); writes nothing else.
  static void store_first(float* p, int64_t n, F v) { _mm512_mask_storeu_ps(p, first_bits(n), v); }

  static M first(int64_t n) { return first_bits(n); }
  static M ge(F a, float b) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(b), _CMP_GE_OQ); }
  static M le(F a, float b) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(b), _CMP_LE_OQ); }
  static M lt(F a, float b) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(b), _CMP_LT_OQ); }
  static M gt(F a, float b) { return _mm512_cmp_ps_mask(a, _mm512_set1_ps(b), _CMP_GT_OQ); }
  static M both(M a, M b) { return static_cast<M>(a & b); }
  static M either(M a, M b) { return static_cast<M>(a | b); }
  static int bits(M m) { return static_cast<int>(m); }
  static F keep(M m, F v) { return _mm512_maskz_mov_ps(m, v); }
  static F put(F v, M m, F w) { return _mm512_mask_mov_ps(v, m, w); }
  static F clear(M m, F v) { return _mm512_mask_mov_ps(v, m, _mm512_setzero_ps()); }
  static F add_where(M m, F acc, F v) { return _mm512_mask_add_ps(acc, m, acc, v); }

  static H lo(F v) { return _mm512_castps512_ps256(v); }
  static H hi(F v) { return _mm512_extractf32x8_ps(v, 1); }
  static F join(H lo, H hi) { return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1); }
  static D widen(H v) { return _mm512_cvtps_pd(v); }
  static H narrow(D v) { return _mm512_cvtpd_ps(v); }

  static Q set1_q(int64_t v) { return _mm512_set1_epi64(v); }
  // The rounding window's width as within() reads it.
  static Q window_width(int64_t width) { return _mm512_set1_epi64(width); }
  // Bit l set where 0 <= d[l] <= width (window: window_width(width); as unsigned, a negative d is
  // above any width).
  static int within(Q d, Q window) { return static_cast<int>(_mm512_cmple_epu64_mask(d, window)); }

  static Table load_table(const double* table) { return {_mm512_load_pd(table), _mm512_load_pd(table + 8)}; }
  // table[bits & 15] for each 64-bit slot of idx (the permute reads bits 0-3 only).
  static D lookup(const Table& table, Q idx) { return _mm512_permutex2var_pd(table.lo, idx, table.hi); }
};

}  // namespace
}  // namespace bl::simd
