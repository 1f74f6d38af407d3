// matmul_blocks.h: the task partition helpers of the CPU GEMMs (matmul.cpp, matmul_packed.cpp).
// Baseline objects only: no *_avx2.cpp / *_avx512.cpp includes this (scripts/check_isa_objects.sh).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

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

}  // namespace bl::cpu
