// exact_gemm_tile.h: the micro-tile of the CPU exact-integer GEMM (cpu/exact_gemm.cpp) and its
// variants. One call computes, for 4 rows and 8 columns, the exact sums
//   T[r][c] = sum over k < len of x[r * ldx + k] * y[k * 8 + c]
// as 128-bit integers (hi[r][c] * 2^64 + lo[r][c], two's complement), where x holds 28-bit
// integers (int32) and y the packed columns (int64 lanes holding 28-bit integers). Products are
// summed in int64 over chunks of kChunk = 64 (below 2^62), each chunk then added into the 128-bit
// sum. Integer sums are exact: every variant gives the same values.
#pragma once

#include <stdint.h>

namespace bl::exact_gemm_detail {

constexpr int64_t kTileRows = 4;
constexpr int64_t kTileCols = 8;
constexpr int64_t kChunk = 64;

using TileFn = void (*)(const int32_t* x, int64_t ldx, const int64_t* y, int64_t len, uint64_t lo[4][8],
                        int64_t hi[4][8]);

// AVX2 (cpu/exact_gemm_avx2.cpp): vpmuldq, four 32 x 32 -> 64-bit products a register; the 128-bit
// sums kept in vector registers too (carry by unsigned comparison).
void tile_avx2(const int32_t* x, int64_t ldx, const int64_t* y, int64_t len, uint64_t lo[4][8], int64_t hi[4][8]);

}  // namespace bl::exact_gemm_detail
