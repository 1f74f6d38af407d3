// AVX2+FMA squared distances of a kd-tree leaf (compiled with -mavx2 -mfma; see CMakeLists.txt and
// kd_leaf.h). Each lane runs the scalar chain of one row: vfmadd (one rounding, as bl::fma) over
// the features in ascending order from +0 per leaf of k_leaf features, vaddps folding the leaves,
// then vfmadd(-2, dot, qq), vaddps tt and vmaxps(x, +0), which is exactly relu(x) = x > 0 ? x : +0
// (it returns +0 for a NaN and for -0). The last rows (fewer than 8) run the scalar code.
#include "ml/neighbors/cpu/kd_leaf.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace bl::ml::neighbors_detail {

void kd_leaf_distances_avx2(const float* cols, int64_t pitch, int64_t d, int64_t k_leaf, int64_t count,
                            const float* q, float qq, const float* tt, float* out) {
  const __m256 minus_two = _mm256_set1_ps(-2.0f), zero = _mm256_setzero_ps(), norm = _mm256_set1_ps(qq);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256 dot = zero;
    for (int64_t k0 = 0; k0 < d; k0 += k_leaf) {
      const int64_t k1 = k0 + k_leaf < d ? k0 + k_leaf : d;
      __m256 acc = zero;
      for (int64_t a = k0; a < k1; ++a)
        acc = _mm256_fmadd_ps(_mm256_set1_ps(q[a]), _mm256_loadu_ps(cols + a * pitch + i), acc);
      dot = k0 == 0 ? acc : _mm256_add_ps(dot, acc);
    }
    __m256 dd = _mm256_add_ps(_mm256_fmadd_ps(minus_two, dot, norm), _mm256_loadu_ps(tt + i));
    _mm256_storeu_ps(out + i, _mm256_max_ps(dd, zero));
  }
  if (i < count) kd_leaf_distances_portable(cols + i, pitch, d, k_leaf, count - i, q, qq, tt + i, out + i);
}

}  // namespace bl::ml::neighbors_detail

#else  // not compiled for AVX2+FMA (non-x86 targets): never called, see cpu_has_avx2_fma().

namespace bl::ml::neighbors_detail {

void kd_leaf_distances_avx2(const float* cols, int64_t pitch, int64_t d, int64_t k_leaf, int64_t count,
                            const float* q, float qq, const float* tt, float* out) {
  kd_leaf_distances_portable(cols, pitch, d, k_leaf, count, q, qq, tt, out);
}

}  // namespace bl::ml::neighbors_detail

#endif
