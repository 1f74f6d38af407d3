// AVX-512 columns of the skinny contract GEMM (compiled with AVX-512 flags; see CMakeLists.txt).
// Lanes run over 16 columns; per k, one load of B's row piece, one broadcast of A[i][k] per row
// and one vfmadd per row (one rounding: acc = a*b + acc), so each lane is exactly the reference's
// fma chain. The same loop as the AVX2 columns, twice as wide.
//
// BL_HD is redefined as `static inline` before the contract headers so this file keeps private
// copies of their functions (scripts/check_isa_objects.sh, run by ctest, checks it).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/skinny_matmul.h"

// BL_AVX512_EMULATION: a test (tests/isa/) supplies the intrinsics as plain C++ so that machines
// without AVX-512 check this code's logic too; never defined in the library build.
#if defined(BL_AVX512_EMULATION) || (defined(__AVX512F__) && defined(__AVX512VL__))
#if !defined(BL_AVX512_EMULATION)
#include <immintrin.h>
#endif

#include "contract/arith.h"

namespace bl::skinny_detail {

void columns_avx512(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                    int64_t n1) {
  const __m512 nan = _mm512_set1_ps(canonical_nan());
  for (int64_t j = n0; j < n1; j += 16) {
    __m512 total[kSkinnyMaxRows];
    for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kGemmKLeaf) {
      const int64_t k_end = k0 + kGemmKLeaf < k ? k0 + kGemmKLeaf : k;
      __m512 acc[kSkinnyMaxRows];
      for (int64_t i = 0; i < m; ++i) acc[i] = _mm512_setzero_ps();
      for (int64_t kk = k0; kk < k_end; ++kk) {
        const __m512 bv = _mm512_loadu_ps(b + kk * n + j);
        for (int64_t i = 0; i < m; ++i) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * k + kk]), bv, acc[i]);
      }
      for (int64_t i = 0; i < m; ++i) total[i] = k0 == 0 ? acc[i] : _mm512_add_ps(total[i], acc[i]);
      if (k == 0) break;
    }
    for (int64_t i = 0; i < m; ++i) {
      const __m512 v = total[i];
      _mm512_storeu_ps(c + i * n + j, _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v, nan));
    }
  }
}

}  // namespace bl::skinny_detail

#else

#include "core/error.h"

namespace bl::skinny_detail {
void columns_avx512(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  throw Error("skinny_matmul: the AVX-512 columns were not compiled for this target");
}
}  // namespace bl::skinny_detail

#endif
