// exp_vec_avx2.h: the traits of the table-driven binary64 exp (exp_f64_table.h) for AVX2+FMA:
// blocks of 8 floats evaluated as two halves of 4 doubles; the 16-entry table read by a gather.
// Include only from *_avx2.cpp; unnamed namespace, as in vec_avx2.h. The float operations common to
// every leaf (set1, zero, loadu, store, storeu, add, sub) come from the Avx2 traits of vec_avx2.h,
// the members spelled alike for both widths from vec_x86.h.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/simd/vec_avx2.h"

namespace bl::simd {
namespace {

// kLanes: floats per block; each half holds kLanes / 2 doubles. F: a block of floats.
struct Avx2Exp : Avx2 {
  using M = __m256;                 // a lane mask of a block (all-ones lanes)
  using H = __m128;                 // half a block of floats
  using D = __m256d;                // half a block as doubles
  using Q = __m256i;                // the same bits as 64-bit integers
  using Table = const double*;      // where the 16 table entries are

  // load, stream, stream_fence, prefetch; set1_d, fma_d, fnma_d, sub_d, mul_d; as_q, as_d, and_q,
  // add_q, sub_q, shl48_q.
  BL_SIMD_X86_EXP_OPS(_mm256, si256)
  // p[0..n) into the first n lanes, zeros in the others (0 <= n < kLanes); reads only p[0..n).
  static F load_first(const float* p, int64_t n) {
    alignas(32) float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(v, p, static_cast<size_t>(n) * sizeof(float));
    return _mm256_load_ps(v);
  }
  // The first n lanes of v into p[0..n); writes nothing else.
  static void store_first(float* p, int64_t n, F v) {
    alignas(32) float s[8];
    _mm256_store_ps(s, v);
    std::memcpy(p, s, static_cast<size_t>(n) * sizeof(float));
  }

  static M first(int64_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane));
  }
  static M ge(F a, float b) { return _mm256_cmp_ps(a, _mm256_set1_ps(b), _CMP_GE_OQ); }
  static M le(F a, float b) { return _mm256_cmp_ps(a, _mm256_set1_ps(b), _CMP_LE_OQ); }
  static M lt(F a, float b) { return _mm256_cmp_ps(a, _mm256_set1_ps(b), _CMP_LT_OQ); }
  static M gt(F a, float b) { return _mm256_cmp_ps(a, _mm256_set1_ps(b), _CMP_GT_OQ); }
  static M both(M a, M b) { return _mm256_and_ps(a, b); }
  static M either(M a, M b) { return _mm256_or_ps(a, b); }
  static int bits(M m) { return _mm256_movemask_ps(m); }
  static F keep(M m, F v) { return _mm256_and_ps(v, m); }  // v where m, +0 elsewhere
  static F put(F v, M m, F w) { return _mm256_blendv_ps(v, w, m); }  // w where m, v elsewhere
  static F clear(M m, F v) { return _mm256_andnot_ps(m, v); }         // +0 where m, v elsewhere
  static F add_where(M m, F acc, F v) { return _mm256_blendv_ps(acc, _mm256_add_ps(acc, v), m); }

  static H lo(F v) { return _mm256_castps256_ps128(v); }
  static H hi(F v) { return _mm256_extractf128_ps(v, 1); }
  static F join(H lo, H hi) { return _mm256_set_m128(hi, lo); }
  static D widen(H v) { return _mm256_cvtps_pd(v); }
  static H narrow(D v) { return _mm256_cvtpd_ps(v); }

  static Q set1_q(int64_t v) { return _mm256_set1_epi64x(v); }
  // The rounding window's width as within() reads it: width + 1, for a signed "less than".
  static Q window_width(int64_t width) { return _mm256_set1_epi64x(width + 1); }
  // Bit l set where 0 <= d[l] <= width (window: window_width(width); d within [-2^62, 2^62]).
  static int within(Q d, Q window) {
    const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), d), _mm256_cmpgt_epi64(window, d));
    return _mm256_movemask_pd(_mm256_castsi256_pd(in));
  }

  static Table load_table(const double* table) { return table; }
  // table[bits & 15] for each 64-bit slot of idx.
  static D lookup(Table table, Q idx) {
    return _mm256_i64gather_pd(table, _mm256_and_si256(idx, _mm256_set1_epi64x(15)), 8);
  }
};

}  // namespace
}  // namespace bl::simd
