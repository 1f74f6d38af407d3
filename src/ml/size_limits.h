// size_limits.h: how large a dense [d, d] matrix (a Gram or covariance matrix) an estimator may form
// for a table of n rows and d features.
//
// Such a matrix grows with d * d while the table grows with n * d, so a small file of few rows and
// many columns (3 rows x 20,001 columns is 120 KB) would ask for gigabytes. It is formed only when
// d <= max(kSquareFeaturesFloor, kSquareFeaturesPerRow * n): then it is never more than 16 times the
// table's own size, or at most 4096 x 4096 floats (64 MiB).
#pragma once

#include <cstdint>

#include "core/error.h"

namespace bl::ml {

constexpr int64_t kSquareFeaturesFloor = 4096;
constexpr int64_t kSquareFeaturesPerRow = 16;

// Throws bl::Error (naming `what`, the counts and the limit) when a [d, d] matrix for n rows would
// pass the limit above.
inline void check_square_matrix(int64_t n, int64_t d, const char* what) {
  const int64_t limit = kSquareFeaturesPerRow * n > kSquareFeaturesFloor ? kSquareFeaturesPerRow * n
                                                                          : kSquareFeaturesFloor;
  BL_CHECK(d <= limit, what, ": ", d, " features on ", n, " rows would need a ", d, " x ", d,
           " matrix; refused past max(", kSquareFeaturesFloor, ", ", kSquareFeaturesPerRow,
           " x rows) = ", limit, " features (use fewer columns or more rows)");
}

}  // namespace bl::ml
