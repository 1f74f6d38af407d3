// cholesky.h: solving a small symmetric positive definite system A x = b by Cholesky (A = L L^T),
// in the contract's binary32 operations in a fixed order (row by row, fma chains ascending in k).
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml {

// Solves A x = b for d x d row-major A (lower triangle read) and m right-hand sides b [d, m]
// row-major. Returns false (x untouched) when a pivot is not positive (A not positive definite).
bool cholesky_solve(const std::vector<float>& A, int64_t d, const std::vector<float>& b, int64_t m,
                    std::vector<float>& x);

// The factor L (d x d row-major, lower triangle) of A = L L^T, same order as cholesky_solve; false
// when a pivot is not positive.
bool cholesky_factor(const std::vector<float>& A, int64_t d, std::vector<float>& L);
// The factor of a large A [n, n] (a Tensor on any device; the lower triangle is read), blocked so
// that nearly all the work is the contract GEMM on A's device: for the panels of kCholeskyBlock
// columns k = 0, B, 2B, ... (the last one narrower), in order:
//   1. L11 = cholesky_factor of the diagonal block A11 [b, b] (host);
//   2. T = L11^-1 by forward substitution on the host (column by column, fma chains ascending);
//   3. L21 = A21 T^T (contract GEMM);
//   4. the lower triangle of the trailing matrix A22 <- A22 - L21 L21^T (contract GEMM by strips
//      of rows, then the contract sub on the host).
// The schedule depends on n alone, so L is a pure function of A on every device and thread count
// (not the bits of cholesky_factor, whose order differs). L (host, [n, n] row-major, upper part 0)
// is set and -1 returned on success; otherwise the index of the first pivot that is not positive.
// `block` is the panel width: part of the schedule, so the library always uses kCholeskyBlock.
constexpr int64_t kCholeskyBlock = 128;
int64_t cholesky_factor_blocked(const Tensor& A, std::vector<float>& L, int64_t block = kCholeskyBlock);

// Solves L L^T x = b for one right-hand side with a factor from cholesky_factor.
std::vector<float> cholesky_solve_factored(const std::vector<float>& L, int64_t d, const std::vector<float>& b);

}  // namespace bl::ml
