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

// The tile's rows: X(r) for r = 0..5, in ascending order.
#define BL_AVX2_TILE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

// One k step of row r: c<r>0, c<r>1 += A value r of the step * b0, b1 (one fused rounding each).
#define BL_AVX2_STEP_ROW(r)                       \
  {                                               \
    const __m256 a = _mm256_broadcast_ss(pa + r); \
    c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0);    \
    c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1);    \
  }
// Row r of a full tile folded into C.
#define BL_AVX2_FOLD_ROW(r)                           \
  fold8(c + r * ldc, c##r##0, first_leaf, last_leaf); \
  fold8(c + r * ldc + 8, c##r##1, first_leaf, last_leaf);
// Row r of the partial spilled to `partial` (row-major, kMatmulTileCols floats a row).
#define BL_AVX2_SPILL_ROW(r)                               \
  _mm256_store_ps(partial + r * kMatmulTileCols, c##r##0); \
  _mm256_store_ps(partial + r * kMatmulTileCols + 8, c##r##1);

}  // namespace

void matmul_tile_avx2(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                      int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf) {
  // Named accumulators (not an array) so the compiler keeps all 12 in registers.
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
    const __m256 b0 = _mm256_loadu_ps(pb);
    const __m256 b1 = _mm256_loadu_ps(pb + 8);
    BL_AVX2_TILE_ROWS(BL_AVX2_STEP_ROW)
    pa += kMatmulTileRows;
    pb += kMatmulTileCols;
  }

  if (rows == kMatmulTileRows && cols == kMatmulTileCols) {
    BL_AVX2_TILE_ROWS(BL_AVX2_FOLD_ROW)
    return;
  }
  // Edge tile: spill the partial and fold only the part inside C.
  alignas(32) float partial[kMatmulTileRows * kMatmulTileCols];
  BL_AVX2_TILE_ROWS(BL_AVX2_SPILL_ROW)
  matmul_fold_partial(partial, c, ldc, rows, cols, first_leaf, last_leaf);
}

#undef BL_AVX2_TILE_ROWS
#undef BL_AVX2_STEP_ROW
#undef BL_AVX2_FOLD_ROW
#undef BL_AVX2_SPILL_ROW

}  // namespace matmul_detail
}  // namespace bl

#else  // not compiled for AVX2+FMA (non-x86 targets): never called, see cpu_has_avx2_fma().

namespace bl::matmul_detail {
BL_MATMUL_TILE_PORTABLE_FALLBACK(matmul_tile_avx2)
}  // namespace bl::matmul_detail

#endif
