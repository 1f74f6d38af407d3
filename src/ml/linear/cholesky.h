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

// The factor L (d x d row-major, lower triangle) of A = L L^T, same order as cholesky_solve; false
// when a pivot is not positive.
bool cholesky_factor(const std::vector<float>& A, int64_t d, std::vector<float>& L);
// Solves L L^T x = b for one right-hand side with a factor from cholesky_factor.
std::vector<float> cholesky_solve_factored(const std::vector<float>& L, int64_t d, const std::vector<float>& b);

}  // namespace bl::ml
