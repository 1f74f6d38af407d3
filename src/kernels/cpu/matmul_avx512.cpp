// AVX-512 tile kernel of the contract GEMM (compiled with -mavx512f -mavx512vl -mavx512bw
// -mavx512dq; see CMakeLists.txt).
//
// A 12 x 32 register tile: 24 accumulators of 16 lanes, lanes over columns, the 32 columns being
// two adjacent packed B panels of kMatmulTileCols. Per k step, two loads of B, twelve broadcasts
// of A and twenty-four vfmadd (one rounding each, acc = a*b + acc), so every output runs exactly
// the reference's fma chain in ascending k; the leaf fold is the AVX2 kernel's, with masked loads
// and stores for the columns of an edge tile.
//
// The contract headers define their functions `inline` (external linkage); compiled here with
// AVX-512 flags, an out-of-line copy could be picked by the linker for baseline callers too. BL_HD
// is redefined as `static inline` before their first inclusion so this file keeps private copies
// (scripts/check_isa_objects.sh, run by ctest, checks that no per-ISA object shares code).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/matmul_tile.h"

// BL_AVX512_EMULATION: a test (tests/isa/) supplies the intrinsics as plain C++ so that machines
// without AVX-512 check this code's logic too; never defined in the library build.
#if defined(BL_AVX512_EMULATION) || (defined(__AVX512F__) && defined(__AVX512VL__))
#if !defined(BL_AVX512_EMULATION)
#include <immintrin.h>
#endif

#include "contract/arith.h"

namespace bl {
namespace matmul_detail {
namespace {

constexpr int kRows = kMatmulTileRowsAvx512;
static_assert(kRows == 12, "the kernel below names twelve rows");
static_assert(kMatmulTileCols == 16, "one packed B panel is one 16-lane vector");

// The leaf fold of one 16-lane row piece: C = partial (first leaf) or C + partial, then the
// canonical NaN after the last leaf. Lanes outside `mask` are neither read nor written.
inline void fold16(float* c, __m512 partial, __mmask16 mask, bool first_leaf, bool last_leaf) {
  __m512 v = first_leaf ? partial : _mm512_add_ps(_mm512_maskz_loadu_ps(mask, c), partial);
  if (last_leaf) {
    const __mmask16 nan_lanes = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    v = _mm512_mask_blend_ps(nan_lanes, v, _mm512_set1_ps(canonical_nan()));
  }
  _mm512_mask_storeu_ps(c, mask, v);
}

__mmask16 lane_mask(int count) {
  if (count <= 0) return 0;
  if (count >= 16) return 0xFFFF;
  return static_cast<__mmask16>((1u << count) - 1u);
}

// One row r of the tile: acc<r>a (+ acc<r>b with two panels) += A value * b0 (b1).
#define BL_AVX512_ROW(r)                                       \
  {                                                            \
    const __m512 a = _mm512_set1_ps(pa[r]);                    \
    acc##r##a = _mm512_fmadd_ps(a, b0, acc##r##a);             \
    if (kPanels == 2) acc##r##b = _mm512_fmadd_ps(a, b1, acc##r##b); \
  }

// The tile over kPanels packed B panels (1 when the tile has at most 16 columns, so the second
// panel, which may not exist, is never read).
template <int kPanels>
void tile_kernel(const float* packed_a, const float* packed_b, int64_t kc, float* c, int64_t ldc,
                 int rows, int cols, bool first_leaf, bool last_leaf) {
  const __m512 z = _mm512_setzero_ps();
  __m512 acc0a = z, acc1a = z, acc2a = z, acc3a = z, acc4a = z, acc5a = z;
  __m512 acc6a = z, acc7a = z, acc8a = z, acc9a = z, acc10a = z, acc11a = z;
  __m512 acc0b = z, acc1b = z, acc2b = z, acc3b = z, acc4b = z, acc5b = z;
  __m512 acc6b = z, acc7b = z, acc8b = z, acc9b = z, acc10b = z, acc11b = z;
  // C is read only after the last k step; ask for its lines now so the fold does not wait on
  // them (rows of C are far apart, beyond what the hardware prefetcher follows).
  for (int r = 0; r < rows; ++r) {
    const char* row = reinterpret_cast<const char*>(c + r * ldc);
    _mm_prefetch(row, _MM_HINT_T0);
    if (cols > 16) _mm_prefetch(row + 16 * sizeof(float), _MM_HINT_T0);
    _mm_prefetch(row + (cols - 1) * sizeof(float), _MM_HINT_T0);
  }
  const float* pa = packed_a;
  const float* pb0 = packed_b;
  const float* pb1 = packed_b + kc * kMatmulTileCols;
  // Unrolled so loop overhead does not compete with the FMAs for dispatch slots.
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(pb0);
    const __m512 b1 = kPanels == 2 ? _mm512_loadu_ps(pb1) : b0;
    BL_AVX512_ROW(0)
    BL_AVX512_ROW(1)
    BL_AVX512_ROW(2)
    BL_AVX512_ROW(3)
    BL_AVX512_ROW(4)
    BL_AVX512_ROW(5)
    BL_AVX512_ROW(6)
    BL_AVX512_ROW(7)
    BL_AVX512_ROW(8)
    BL_AVX512_ROW(9)
    BL_AVX512_ROW(10)
    BL_AVX512_ROW(11)
    pa += kRows;
    pb0 += kMatmulTileCols;
    pb1 += kMatmulTileCols;
  }

  const __m512 acc_a[kRows] = {acc0a, acc1a, acc2a, acc3a, acc4a,  acc5a,
                               acc6a, acc7a, acc8a, acc9a, acc10a, acc11a};
  const __m512 acc_b[kRows] = {acc0b, acc1b, acc2b, acc3b, acc4b,  acc5b,
                               acc6b, acc7b, acc8b, acc9b, acc10b, acc11b};
  const __mmask16 mask_a = lane_mask(cols);
  const __mmask16 mask_b = lane_mask(cols - 16);
  for (int r = 0; r < rows; ++r) {
    fold16(c + r * ldc, acc_a[r], mask_a, first_leaf, last_leaf);
    if (kPanels == 2) fold16(c + r * ldc + 16, acc_b[r], mask_b, first_leaf, last_leaf);
  }
}

#undef BL_AVX512_ROW

}  // namespace

void matmul_tile_avx512(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                        int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf) {
  if (cols > kMatmulTileCols)
    tile_kernel<2>(packed_a, packed_b, kc, c, ldc, rows, cols, first_leaf, last_leaf);
  else
    tile_kernel<1>(packed_a, packed_b, kc, c, ldc, rows, cols, first_leaf, last_leaf);
}

}  // namespace matmul_detail
}  // namespace bl

#else  // not compiled for AVX-512 (non-x86 targets): never called, see bl::isa_supported().

#include "core/error.h"

namespace bl {
namespace matmul_detail {
void matmul_tile_avx512(const float*, const float*, int64_t, float*, int64_t, int, int, bool, bool) {
  throw Error("matmul: the AVX-512 tile kernel was not compiled for this target");
}
}  // namespace matmul_detail
}  // namespace bl

#endif
