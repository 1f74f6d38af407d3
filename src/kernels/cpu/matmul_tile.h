// matmul_tile.h: the register-tile kernels behind bl::matmul_cpu (internal to src/kernels/cpu/).
//
// The driver (matmul.cpp) packs one k-leaf of op(A) into panels of kMatmulTileRows rows and one
// k-leaf of op(B) into panels of kMatmulTileCols columns, then calls a tile kernel per (row panel,
// column panel). A tile kernel computes the leaf partial of a kMatmulTileRows x kMatmulTileCols
// block from +0.0 in ascending k with one fma per step, then folds it into C:
// C = partial on the first leaf, C = C + partial on later leaves; NaNs are canonicalized after the
// last leaf. Only the `rows` x `cols` top-left part of the tile is written.
#pragma once

#include <stdint.h>

namespace bl {
namespace matmul_detail {

constexpr int kMatmulTileRows = 6;
constexpr int kMatmulTileCols = 16;

// packed_a: kc steps of kMatmulTileRows values (row r of step k at [k * rows + r]).
// packed_b: kc steps of kMatmulTileCols values (column j of step k at [k * cols + j]).
// c: the tile's top-left output, row pitch ldc.
using TileKernel = void (*)(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                            int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf);

// Portable scalar tile kernel (any CPU).
void matmul_tile_portable(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                          int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf);

// AVX2+FMA tile kernel: vector lanes over the 16 columns, so each output still sees its k values
// in ascending order. Call only when bl::cpu_has_avx2_fma() is true.
void matmul_tile_avx2(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                      int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf);

// AVX-512 tile: 12 rows x 32 columns, i.e. two adjacent packed B panels of kMatmulTileCols columns
// (the second at packed_b + kc * kMatmulTileCols, read only when cols > kMatmulTileCols) and A
// packed in panels of kMatmulTileRowsAvx512 rows. 16 lanes over columns, one fma per k step, so
// every output runs the reference's fma chain in ascending k. Call only when bl::active_isa() is
// Isa::avx512.
constexpr int kMatmulTileRowsAvx512 = 12;
constexpr int kMatmulTilePanelsAvx512 = 2;
void matmul_tile_avx512(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                        int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf);

// AArch64 NEON tile kernel (vfmaq_f32, one rounding per step), same lanes-over-columns order.
// Call only when bl::active_isa() is Isa::neon.
void matmul_tile_neon(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                      int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf);

// Folds a full tile partial (row-major kMatmulTileRows x kMatmulTileCols) into the rows x cols
// corner of C by the leaf rule above. Shared by both kernels for edge tiles.
void matmul_fold_partial(const float* partial, float* c, int64_t ldc, int rows, int cols,
                         bool first_leaf, bool last_leaf);

}  // namespace matmul_detail
}  // namespace bl

// The tile kernel `name` where its instruction set is not compiled for this target: never called
// (the dispatch checks the CPU first); it runs the portable kernel. Expanded inside namespace
// bl::matmul_detail.
#define BL_MATMUL_TILE_PORTABLE_FALLBACK(name)                                                         \
  void name(const float* packed_a, const float* packed_b, int64_t kc, float* c, int64_t ldc, int rows, \
            int cols, bool first_leaf, bool last_leaf) {                                               \
    matmul_tile_portable(packed_a, packed_b, kc, c, ldc, rows, cols, first_leaf, last_leaf);           \
  }
