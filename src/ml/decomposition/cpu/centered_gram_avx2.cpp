// centered_gram_avx2.cpp: the AVX2+FMA leaf of centered_gram (compiled with -mavx2 -mfma).
//
// Tiles of 8 output rows x 8 lanes (lanes over columns j): per k step one load of row k's columns
// and eight broadcasts of its row entries, eight vfmadd (acc = a * b + acc, one rounding), so each
// output runs exactly the reference fma chain in ascending k. Tiles wholly below the diagonal are
// skipped. No contract header or other inline helper is used here (plain IEEE subtraction for the
// centering), so this object shares no code with the baseline build (scripts/check_isa_objects.sh).
#include "ml/decomposition/centered_gram.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace bl::ml {

void centered_gram_leaf_avx2(const float* x, int64_t kc, int64_t d, const float* mean,
                             float* scratch, float* partial) {
  const int64_t pitch = (d + 7) / 8 * 8;  // centered_gram_pitch(d)
  for (int64_t k = 0; k < kc; ++k) {
    const float* row = x + k * d;
    float* s = scratch + k * pitch;
    for (int64_t j = 0; j < d; ++j) s[j] = row[j] - mean[j];
    for (int64_t j = d; j < pitch; ++j) s[j] = 0.0f;
  }
  for (int64_t i0 = 0; i0 < d; i0 += 8) {
    for (int64_t j0 = i0; j0 < pitch; j0 += 8) {
      __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps();
      __m256 a3 = _mm256_setzero_ps(), a4 = _mm256_setzero_ps(), a5 = _mm256_setzero_ps();
      __m256 a6 = _mm256_setzero_ps(), a7 = _mm256_setzero_ps();
      const float* s = scratch;
#pragma GCC unroll 2
      for (int64_t k = 0; k < kc; ++k, s += pitch) {
        __m256 b = _mm256_loadu_ps(s + j0);
        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 0), b, a0);
        a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 1), b, a1);
        a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 2), b, a2);
        a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 3), b, a3);
        a4 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 4), b, a4);
        a5 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 5), b, a5);
        a6 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 6), b, a6);
        a7 = _mm256_fmadd_ps(_mm256_broadcast_ss(s + i0 + 7), b, a7);
      }
      float* p = partial + i0 * pitch + j0;
      _mm256_storeu_ps(p + 0 * pitch, a0);
      _mm256_storeu_ps(p + 1 * pitch, a1);
      _mm256_storeu_ps(p + 2 * pitch, a2);
      _mm256_storeu_ps(p + 3 * pitch, a3);
      _mm256_storeu_ps(p + 4 * pitch, a4);
      _mm256_storeu_ps(p + 5 * pitch, a5);
      _mm256_storeu_ps(p + 6 * pitch, a6);
      _mm256_storeu_ps(p + 7 * pitch, a7);
    }
  }
}

}  // namespace bl::ml

#else

#include "core/error.h"

namespace bl::ml {

void centered_gram_leaf_avx2(const float*, int64_t, int64_t, const float*, float*, float*) {
  BL_CHECK(false, "centered_gram_leaf_avx2: built without AVX2+FMA");
}

}  // namespace bl::ml

#endif
