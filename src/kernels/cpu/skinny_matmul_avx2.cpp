// AVX2+FMA columns of the skinny contract GEMM (compiled with -mavx2 -mfma). Lanes run over 8
// columns; per k, one load of B's row piece, one broadcast of A[i][k] per row and one vfmadd per
// row (one rounding: acc = a*b + acc), so each lane is exactly the reference's fma chain.
//
// The contract headers define their functions `inline` (external linkage); compiled here with
// -mavx2 -mfma, an out-of-line copy could be picked by the linker for baseline callers too. BL_HD
// is redefined as `static inline` before their first inclusion so this file keeps private copies
// (scripts/check_isa_objects.sh, run by ctest, checks that no AVX2 object shares code).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/skinny_matmul.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "contract/arith.h"

namespace bl::skinny_detail {

void columns_avx2(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                  int64_t n1) {
  const __m256 nan = _mm256_set1_ps(canonical_nan());
  for (int64_t j = n0; j < n1; j += 8) {
    __m256 total[kSkinnyMaxRows];
    for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kGemmKLeaf) {
      const int64_t k_end = k0 + kGemmKLeaf < k ? k0 + kGemmKLeaf : k;
      __m256 acc[kSkinnyMaxRows];
      for (int64_t i = 0; i < m; ++i) acc[i] = _mm256_setzero_ps();
      for (int64_t kk = k0; kk < k_end; ++kk) {
        const __m256 bv = _mm256_loadu_ps(b + kk * n + j);
        for (int64_t i = 0; i < m; ++i) acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(a[i * k + kk]), bv, acc[i]);
      }
      for (int64_t i = 0; i < m; ++i) total[i] = k0 == 0 ? acc[i] : _mm256_add_ps(total[i], acc[i]);
      if (k == 0) break;
    }
    for (int64_t i = 0; i < m; ++i) {
      const __m256 v = total[i];
      _mm256_storeu_ps(c + i * n + j, _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
  }
}

}  // namespace bl::skinny_detail

#else

#include "core/error.h"

namespace bl::skinny_detail {
void columns_avx2(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  throw Error("skinny_matmul: the AVX2 columns were not compiled for this target");
}
}  // namespace bl::skinny_detail

#endif
