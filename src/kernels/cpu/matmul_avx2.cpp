// AVX2+FMA tile kernel of the contract GEMM (compiled with -mavx2 -mfma; see CMakeLists.txt).
//
// A 6 x 16 register tile: 12 accumulators of 8 lanes, lanes over columns. Per k step, two loads of
// B, six broadcasts of A and twelve vfmadd (one rounding each, acc = a*b + acc), so every output
// runs exactly the reference's fma chain in ascending k.
//
// The contract headers define their functions `inline` (external linkage); compiled here with
// -mavx2 -mfma, an out-of-line copy could be picked by the linker for baseline callers too. BL_HD
// is redefined as `static inline` before their first inclusion so this file keeps private copies
// (scripts/check_isa_objects.sh, run by ctest, checks that no AVX2 object shares code).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/matmul_tile.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "contract/arith.h"

namespace bl {
namespace matmul_detail {
namespace {

// The leaf fold of one 8-lane row piece: C = partial (first leaf) or C + partial, then the
// canonical NaN after the last leaf.
inline void fold8(float* c, __m256 partial, bool first_leaf, bool last_leaf) {
  __m256 v = first_leaf ? partial : _mm256_add_ps(_mm256_loadu_ps(c), partial);
  if (last_leaf) {
    __m256 nan_mask = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    v = _mm256_blendv_ps(v, _mm256_set1_ps(canonical_nan()), nan_mask);
  }
  _mm256_storeu_ps(c, v);
}

}  // namespace

void matmul_tile_avx2(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                      int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  // C is read only after the last k step; ask for its lines now so the fold does not wait on
  // them (rows of C are far apart, beyond what the hardware prefetcher follows).
  for (int r = 0; r < rows; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kMatmulTileCols - 1), _MM_HINT_T0);
  }
  const float* pa = packed_a;
  const float* pb = packed_b;
  // Unrolled so loop overhead does not compete with the FMAs for dispatch slots.
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    __m256 b0 = _mm256_loadu_ps(pb);
    __m256 b1 = _mm256_loadu_ps(pb + 8);
    __m256 a;
    a = _mm256_broadcast_ss(pa + 0);
    c00 = _mm256_fmadd_ps(a, b0, c00);
    c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(pa + 1);
    c10 = _mm256_fmadd_ps(a, b0, c10);
    c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(pa + 2);
    c20 = _mm256_fmadd_ps(a, b0, c20);
    c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(pa + 3);
    c30 = _mm256_fmadd_ps(a, b0, c30);
    c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(pa + 4);
    c40 = _mm256_fmadd_ps(a, b0, c40);
    c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(pa + 5);
    c50 = _mm256_fmadd_ps(a, b0, c50);
    c51 = _mm256_fmadd_ps(a, b1, c51);
    pa += kMatmulTileRows;
    pb += kMatmulTileCols;
  }

  if (rows == kMatmulTileRows && cols == kMatmulTileCols) {
    fold8(c + 0 * ldc, c00, first_leaf, last_leaf);
    fold8(c + 0 * ldc + 8, c01, first_leaf, last_leaf);
    fold8(c + 1 * ldc, c10, first_leaf, last_leaf);
    fold8(c + 1 * ldc + 8, c11, first_leaf, last_leaf);
    fold8(c + 2 * ldc, c20, first_leaf, last_leaf);
    fold8(c + 2 * ldc + 8, c21, first_leaf, last_leaf);
    fold8(c + 3 * ldc, c30, first_leaf, last_leaf);
    fold8(c + 3 * ldc + 8, c31, first_leaf, last_leaf);
    fold8(c + 4 * ldc, c40, first_leaf, last_leaf);
    fold8(c + 4 * ldc + 8, c41, first_leaf, last_leaf);
    fold8(c + 5 * ldc, c50, first_leaf, last_leaf);
    fold8(c + 5 * ldc + 8, c51, first_leaf, last_leaf);
    return;
  }
  // Edge tile: spill the partial and fold only the part inside C.
  alignas(32) float partial[kMatmulTileRows * kMatmulTileCols];
  _mm256_store_ps(partial + 0, c00);
  _mm256_store_ps(partial + 8, c01);
  _mm256_store_ps(partial + 16, c10);
  _mm256_store_ps(partial + 24, c11);
  _mm256_store_ps(partial + 32, c20);
  _mm256_store_ps(partial + 40, c21);
  _mm256_store_ps(partial + 48, c30);
  _mm256_store_ps(partial + 56, c31);
  _mm256_store_ps(partial + 64, c40);
  _mm256_store_ps(partial + 72, c41);
  _mm256_store_ps(partial + 80, c50);
  _mm256_store_ps(partial + 88, c51);
  matmul_fold_partial(partial, c, ldc, rows, cols, first_leaf, last_leaf);
}

}  // namespace matmul_detail
}  // namespace bl

#else  // not compiled for AVX2+FMA (non-x86 targets): never called, see cpu_has_avx2_fma().

namespace bl {
namespace matmul_detail {
void matmul_tile_avx2(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                      int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf) {
  matmul_tile_portable(packed_a, packed_b, kc, c, ldc, rows, cols, first_leaf, last_leaf);
}
}  // namespace matmul_detail
}  // namespace bl

#endif
