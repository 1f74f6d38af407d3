// matmul_blocks.h: the task partition helpers of the CPU GEMMs (matmul.cpp, matmul_packed.cpp).
// Baseline objects only: no *_avx2.cpp / *_avx512.cpp includes this (scripts/check_isa_objects.sh).
#pragma once

#include <algorithm>
#include <cstdint>

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

}  // namespace bl::cpu
