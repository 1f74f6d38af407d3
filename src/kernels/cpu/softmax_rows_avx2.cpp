// AVX2 elementwise passes of the CPU softmax (compiled with -mavx2 -mfma; see CMakeLists.txt).
//
// Eight values per step with the operations of softmax_rows.h (vsubps / vdivps: IEEE, rounded
// once, like bl::sub / bl::div) and the canonical NaN where a result is stored; the last n % 8
// values go through the scalar contract functions. BL_HD is redefined as `static inline` before
// the contract headers so this object keeps private copies (scripts/check_isa_objects.sh).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/arith.h"
#include "kernels/cpu/softmax_rows.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "kernels/cpu/simd/vec_avx2.h"

#include <cstdint>

namespace bl::cpu {

using simd::Avx2;

void softmax_shift_avx2(const float* x, int64_t n, float m, float* out) {
  const __m256 mv = _mm256_set1_ps(m);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
  for (; i < n; ++i) out[i] = sub(x[i], m);
}

void softmax_divide_avx2(float* y, int64_t n, float s) {
  const __m256 sv = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Avx2::canonical(_mm256_div_ps(_mm256_loadu_ps(y + i), sv)));
  for (; i < n; ++i) y[i] = canonicalize(div(y[i], s));
}

void log_softmax_finish_avx2(const float* x, int64_t n, float m, float log_s, float* y) {
  const __m256 mv = _mm256_set1_ps(m), lv = _mm256_set1_ps(log_s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, Avx2::canonical(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv), lv)));
  for (; i < n; ++i) y[i] = canonicalize(sub(sub(x[i], m), log_s));
}

// Elements before y + i is 32-byte aligned (at most n).
inline int64_t unaligned_head(const float* y, int64_t n) {
  const uintptr_t misalign = reinterpret_cast<uintptr_t>(y) % 32;
  if (misalign % 4 != 0) return n;  // not float-aligned: no streaming
  const int64_t head = static_cast<int64_t>((32 - misalign) % 32 / 4);
  return head < n ? head : n;
}

void softmax_divide_stream_avx2(const float* e, int64_t n, float s, float* y) {
  const __m256 sv = _mm256_set1_ps(s);
  const int64_t head = unaligned_head(y, n);
  int64_t i = 0;
  for (; i < head; ++i) y[i] = canonicalize(div(e[i], s));
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(y + i, Avx2::canonical(_mm256_div_ps(_mm256_loadu_ps(e + i), sv)));
  for (; i < n; ++i) y[i] = canonicalize(div(e[i], s));
  _mm_sfence();
}

void log_softmax_finish_stream_avx2(const float* x, int64_t n, float m, float log_s, float* y) {
  const __m256 mv = _mm256_set1_ps(m), lv = _mm256_set1_ps(log_s);
  const int64_t head = unaligned_head(y, n);
  int64_t i = 0;
  for (; i < head; ++i) y[i] = canonicalize(sub(sub(x[i], m), log_s));
  for (; i + 8 <= n; i += 8)
    _mm256_stream_ps(y + i, Avx2::canonical(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv), lv)));
  for (; i < n; ++i) y[i] = canonicalize(sub(sub(x[i], m), log_s));
  _mm_sfence();
}

}  // namespace bl::cpu

#else  // not compiled for AVX2+FMA (non-x86 targets): never called there.

namespace bl::cpu {
void softmax_shift_avx2(const float* x, int64_t n, float m, float* out) { softmax_shift_baseline(x, n, m, out); }
void softmax_divide_avx2(float* y, int64_t n, float s) { softmax_divide_baseline(y, n, s); }
void log_softmax_finish_avx2(const float* x, int64_t n, float m, float log_s, float* y) {
  log_softmax_finish_baseline(x, n, m, log_s, y);
}
void softmax_divide_stream_avx2(const float* e, int64_t n, float s, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = canonicalize(div(e[i], s));
}
void log_softmax_finish_stream_avx2(const float* x, int64_t n, float m, float log_s, float* y) {
  log_softmax_finish_baseline(x, n, m, log_s, y);
}
}  // namespace bl::cpu

#endif  // AVX2
