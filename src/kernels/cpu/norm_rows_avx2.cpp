// AVX2+FMA output pass of layer norm and RMS norm (compiled with -mavx2 -mfma; see CMakeLists.txt).
//
// Eight outputs per step, each with the element function's operations in its order (sub, div,
// then fma / mul / add, one rounding each; kernels/norm.h) and the canonical NaN for any NaN. The
// last n % 8 outputs go through the same vector code on a zero-padded copy. BL_HD is redefined as
// `static inline` before the contract headers so this object keeps private copies
// (scripts/check_isa_objects.sh).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/arith.h"
#include "kernels/cpu/norm_rows.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "kernels/cpu/simd/vec_avx2.h"

namespace bl::cpu {
namespace {

using simd::Avx2;

// Eight layer norm outputs from x, gamma, beta at their first element.
inline __m256 layer_norm8(const float* x, __m256 mean, __m256 den, const float* gamma,
                          const float* beta) {
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(_mm256_loadu_ps(x), mean), den);
  if (gamma && beta) return Avx2::canonical(_mm256_fmadd_ps(t, _mm256_loadu_ps(gamma), _mm256_loadu_ps(beta)));
  if (gamma) return Avx2::canonical(_mm256_mul_ps(t, _mm256_loadu_ps(gamma)));
  if (beta) return Avx2::canonical(_mm256_add_ps(t, _mm256_loadu_ps(beta)));
  return Avx2::canonical(t);
}

inline __m256 rms_norm8(const float* x, __m256 den, const float* gamma) {
  const __m256 t = _mm256_div_ps(_mm256_loadu_ps(x), den);
  return Avx2::canonical(gamma ? _mm256_mul_ps(t, _mm256_loadu_ps(gamma)) : t);
}

// Copies the last `len` (< 8) values of src into an 8-float buffer padded with zeros.
inline const float* padded8(const float* src, int64_t len, float* buf) {
  if (!src) return nullptr;
  for (int j = 0; j < 8; ++j) buf[j] = j < len ? src[j] : 0.0f;
  return buf;
}

}  // namespace

void layer_norm_run_avx2(const float* x, int64_t n, float mean, float den, const float* gamma,
                         const float* beta, float* y) {
  const __m256 m = _mm256_set1_ps(mean), d = _mm256_set1_ps(den);
  int64_t i = 0;
  // The gamma / beta tests are loop-invariant; the compiler unswitches them.
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, layer_norm8(x + i, m, d, gamma ? gamma + i : nullptr, beta ? beta + i : nullptr));
  if (i < n) {
    alignas(32) float bx[8], bg[8], bb[8], out[8];
    const __m256 v = layer_norm8(padded8(x + i, n - i, bx), m, d, padded8(gamma ? gamma + i : nullptr, n - i, bg),
                                 padded8(beta ? beta + i : nullptr, n - i, bb));
    _mm256_store_ps(out, v);
    for (int64_t j = 0; i + j < n; ++j) y[i + j] = out[j];
  }
}

void rms_norm_run_avx2(const float* x, int64_t n, float den, const float* gamma, float* y) {
  const __m256 d = _mm256_set1_ps(den);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, rms_norm8(x + i, d, gamma ? gamma + i : nullptr));
  if (i < n) {
    alignas(32) float bx[8], bg[8], out[8];
    const __m256 v = rms_norm8(padded8(x + i, n - i, bx), d, padded8(gamma ? gamma + i : nullptr, n - i, bg));
    _mm256_store_ps(out, v);
    for (int64_t j = 0; i + j < n; ++j) y[i + j] = out[j];
  }
}

}  // namespace bl::cpu

#else  // not compiled for AVX2+FMA (non-x86 targets): never called there.

namespace bl::cpu {
void layer_norm_run_avx2(const float* x, int64_t n, float mean, float den, const float* gamma,
                         const float* beta, float* y) {
  layer_norm_run_baseline(x, n, mean, den, gamma, beta, y);
}
void rms_norm_run_avx2(const float* x, int64_t n, float den, const float* gamma, float* y) {
  rms_norm_run_baseline(x, n, den, gamma, y);
}
}  // namespace bl::cpu

#endif
