// AArch64 NEON tile kernel of the contract GEMM (NEON is part of the AArch64 baseline, so this
// file needs no extra compiler flags; on other targets it compiles to a fallback never called).
//
// The same 6 x 16 register tile as the AVX2 kernel: 24 accumulators of 4 lanes, lanes over
// columns. Per k step, four loads of B, two loads of the 6 A values and twenty-four FMLA by element
// (vfmaq_laneq_f32: one rounding each, acc = a*b + acc), so every output runs exactly the reference's fma
// chain in ascending k.
#include "kernels/cpu/matmul_tile.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

#include "contract/arith.h"

namespace bl {
namespace matmul_detail {
namespace {

// The leaf fold of one 4-lane row piece: C = partial (first leaf) or C + partial, then the
// canonical NaN after the last leaf.
void fold4(float* c, float32x4_t partial, bool first_leaf, bool last_leaf) {
  float32x4_t v = first_leaf ? partial : vaddq_f32(vld1q_f32(c), partial);
  if (last_leaf) {
    const uint32x4_t ordered = vceqq_f32(v, v);  // all ones where v is not a NaN
    v = vbslq_f32(ordered, v, vdupq_n_f32(canonical_nan()));
  }
  vst1q_f32(c, v);
}

// One row r of the tile: c<r>0..c<r>3 += A value * b0..b3, the A value being lane `lane` of the
// register `a` (FMLA by element: one fused rounding per lane).
#define BL_NEON_ROW(r, fmla, a, lane)  \
  c##r##0 = fmla(c##r##0, b0, a, lane); \
  c##r##1 = fmla(c##r##1, b1, a, lane); \
  c##r##2 = fmla(c##r##2, b2, a, lane); \
  c##r##3 = fmla(c##r##3, b3, a, lane)

}  // namespace

void matmul_tile_neon(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                      int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf) {
  // Named accumulators (not an array) so the compiler keeps all 24 in registers.
  const float32x4_t z = vdupq_n_f32(0.0f);
  float32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
  float32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
  float32x4_t c40 = z, c41 = z, c42 = z, c43 = z, c50 = z, c51 = z, c52 = z, c53 = z;
  const float* pa = packed_a;
  const float* pb = packed_b;
  for (int64_t k = 0; k < kc; ++k) {
    // 24 accumulators + 4 B registers + 2 A registers: 30 of the 32 vector registers.
    const float32x4_t b0 = vld1q_f32(pb), b1 = vld1q_f32(pb + 4);
    const float32x4_t b2 = vld1q_f32(pb + 8), b3 = vld1q_f32(pb + 12);
    const float32x4_t a03 = vld1q_f32(pa);     // rows 0..3 of step k
    const float32x2_t a45 = vld1_f32(pa + 4);  // rows 4..5
    BL_NEON_ROW(0, vfmaq_laneq_f32, a03, 0);
    BL_NEON_ROW(1, vfmaq_laneq_f32, a03, 1);
    BL_NEON_ROW(2, vfmaq_laneq_f32, a03, 2);
    BL_NEON_ROW(3, vfmaq_laneq_f32, a03, 3);
    BL_NEON_ROW(4, vfmaq_lane_f32, a45, 0);
    BL_NEON_ROW(5, vfmaq_lane_f32, a45, 1);
    pa += kMatmulTileRows;
    pb += kMatmulTileCols;
  }

  const float32x4_t acc[kMatmulTileRows][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13},
                                               {c20, c21, c22, c23}, {c30, c31, c32, c33},
                                               {c40, c41, c42, c43}, {c50, c51, c52, c53}};
  if (rows == kMatmulTileRows && cols == kMatmulTileCols) {
    for (int r = 0; r < kMatmulTileRows; ++r)
      for (int q = 0; q < 4; ++q) fold4(c + r * ldc + 4 * q, acc[r][q], first_leaf, last_leaf);
    return;
  }
  // Edge tile: spill the partial and fold only the part inside C.
  float partial[kMatmulTileRows * kMatmulTileCols];
  for (int r = 0; r < kMatmulTileRows; ++r)
    for (int q = 0; q < 4; ++q) vst1q_f32(partial + r * kMatmulTileCols + 4 * q, acc[r][q]);
  matmul_fold_partial(partial, c, ldc, rows, cols, first_leaf, last_leaf);
}

#undef BL_NEON_ROW

}  // namespace matmul_detail
}  // namespace bl

#else  // not an AArch64 build: never called (active_isa() is never neon here).

namespace bl::matmul_detail {
BL_MATMUL_TILE_PORTABLE_FALLBACK(matmul_tile_neon)
}  // namespace bl::matmul_detail

#endif
