// cholesky.h: solving a small symmetric positive definite system A x = b by Cholesky (A = L L^T),
// in the contract's binary32 operations in a fixed order (row by row, fma chains ascending in k).
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml {

// Solves A x = b for d x d row-major A (lower triangle read) and m right-hand sides b [d, m]
// row-major. Returns false (x untouched) when a pivot is not positive (A not positive definite).
bool cholesky_solve(const std::vector<float>& A, int64_t d, const std::vector<float>& b, int64_t m,
                    std::vector<float>& x);

}  // namespace bl::ml
