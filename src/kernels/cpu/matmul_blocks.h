// matmul_blocks.h: what the CPU GEMMs (matmul.cpp, matmul_packed.cpp) share: the task partition
// helpers, the packing of A row panels and the tile sweep of one k leaf.
// Baseline objects only: no *_avx2.cpp / *_avx512.cpp includes this (scripts/check_isa_objects.sh).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "contract/schedule.h"
#include "core/isa.h"
#include "kernels/cpu/matmul_tile.h"

namespace bl::cpu {

// a / b rounded up, for a >= 0 and b > 0.
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The block length that cuts `extent` into as many blocks as blocks of `cap` would, but of about
// equal length (a multiple of `unit`), so the last block is not a sliver that leaves a thread idle.
// A function of the extent alone, like the whole partition.
inline int64_t balanced_block(int64_t extent, int64_t cap, int64_t unit) {
  const int64_t blocks = ceil_div(extent, cap);
  return std::min(cap, ceil_div(ceil_div(extent, blocks), unit) * unit);
}

// Whether task blocks of rows x cols (caps: blocks are cut to multiples of the tile) are whole tiles
// of every ISA variant's tile (matmul_tile.h).
constexpr bool whole_tiles(int64_t rows, int64_t cols) {
  return rows % matmul_detail::kMatmulTileRows == 0 && rows % matmul_detail::kMatmulTileRowsAvx512 == 0 &&
         cols % (matmul_detail::kMatmulTileCols * matmul_detail::kMatmulTilePanelsAvx512) == 0;
}

// Rows [row0, row0 + rows) (rows <= kPanelRows) and k [k0, k0 + kc) of a row-major A of pitch lda
// into one panel at dst, kc steps of kPanelRows values; the panel rows from `rows` on are zero
// (their outputs are never stored). A pure copy. The rows are read along k at once, the panel
// written in k order, one step at a time.
template <int kPanelRows>
inline void pack_a_row_panel(const float* a, int64_t lda, int64_t row0, int rows, int64_t k0, int64_t kc,
                             float* dst) {
  static const float kZeroRow[kGemmKLeaf] = {};
  const float* src[kPanelRows];
  for (int r = 0; r < kPanelRows; ++r) src[r] = r < rows ? a + (row0 + r) * lda + k0 : kZeroRow;
  for (int64_t k = 0; k < kc; ++k) {
    float* out = dst + k * kPanelRows;
    for (int r = 0; r < kPanelRows; ++r) out[r] = src[r][k];
  }
}

// A float buffer aligned to 64 bytes, reused by the thread that owns it.
struct PackBuffer {
  std::vector<float> storage;
  float* get(size_t n) {
    if (storage.size() < n + 16) storage.resize(n + 16);
    uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<float*>((p + 63) & ~static_cast<uintptr_t>(63));
  }
};

// The register tile of one ISA variant (matmul_tile.h): rows per A panel and per tile, packed B
// panels per tile, and the kernel. None of it changes a bit (every output is one fma chain).
struct TileShape {
  int rows;
  int col_panels;
  matmul_detail::TileKernel kernel;
};
constexpr TileShape kPortableTile{matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_portable};

// The tile of the active ISA variant.
inline const TileShape& active_tile() {
  static constexpr TileShape kAvx2{matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_avx2};
  static constexpr TileShape kAvx512{matmul_detail::kMatmulTileRowsAvx512, matmul_detail::kMatmulTilePanelsAvx512,
                                     &matmul_detail::matmul_tile_avx512};
  static constexpr TileShape kNeon{matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_neon};
  return *select_isa<const TileShape*>(&kPortableTile, &kAvx2, &kAvx512, &kNeon);
}

// One k leaf (kc steps) of a task block, rows [m0, m0 + mc) and columns [n0, n0 + nc) of C: the
// tile kernel over groups of tile.col_panels column panels, and in each over the row panels.
// a_panels: the block's packed A row panels of the leaf (panel ip at ip * kc * tile.rows);
// b_panels: its packed B column panels (panel jp at jp * kc * kMatmulTileCols).
inline void leaf_tiles(const TileShape& tile, const float* a_panels, const float* b_panels, int64_t kc, float* c,
                       int64_t ldc, int64_t m0, int64_t mc, int64_t n0, int64_t nc, bool first_leaf,
                       bool last_leaf) {
  using matmul_detail::kMatmulTileCols;
  const int64_t panels_m = ceil_div(mc, tile.rows);
  const int64_t panels_n = ceil_div(nc, kMatmulTileCols);
  const int64_t tile_cols = int64_t{kMatmulTileCols} * tile.col_panels;
  for (int64_t jp = 0; jp < panels_n; jp += tile.col_panels) {
    const int64_t col0 = n0 + jp * kMatmulTileCols;
    const int cols = static_cast<int>(std::min<int64_t>(tile_cols, n0 + nc - col0));
    const float* pb = b_panels + jp * kc * kMatmulTileCols;
    for (int64_t ip = 0; ip < panels_m; ++ip) {
      const int64_t row0 = m0 + ip * tile.rows;
      const int rows = static_cast<int>(std::min<int64_t>(tile.rows, m0 + mc - row0));
      tile.kernel(a_panels + ip * kc * tile.rows, pb, kc, c + row0 * ldc + col0, ldc, rows, cols, first_leaf,
                  last_leaf);
    }
  }
}

}  // namespace bl::cpu
