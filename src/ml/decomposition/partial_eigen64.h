// partial_eigen64.h: the k largest eigenpairs of a dense symmetric binary64 matrix by block Lanczos
// (block Krylov with full reorthogonalization and Rayleigh-Ritz), for callers that need a few
// extreme eigenpairs of a large matrix. Only add, sub, mul, div and sqrt, every sum in a fixed order,
// pool tasks chosen from the problem size and each owning whole outputs: the result is a pure
// function of the matrix on every machine and at every thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ml/decomposition/symmetric_eigen64.h"

namespace bl::ml {

struct PartialEigen64Options {
  double tol = 1e-12;        // each pair's ||A v - lambda v|| <= tol * ||A||_inf (row-sum bound)
  int64_t max_basis = -1;    // the most Krylov basis vectors (-1: min(n, max(80 k, 320)))
  bool fallback = true;      // not converged within max_basis: symmetric_eigen64 (always right)
};

struct PartialEigen64Result {
  SymmetricEigen64 eig;      // values [k] descending, vectors [k, n]
  double max_residual = 0.0; // the largest ||A v - lambda v|| / ||A||_inf of the returned pairs
  bool converged = false;    // false: fell back to symmetric_eigen64, or (no fallback) not converged
  int64_t basis = 0;         // Krylov basis size used
};

// The k largest (algebraically) eigenpairs of the symmetric n x n row-major matrix a (only the lower
// triangle, j <= i, is read), 0 <= k <= n. Block size k; the start block is a fixed formula of the
// indices. Same sign rule as symmetric_eigen64 (each vector's entry of largest magnitude, lowest
// index among ties, positive). Non-finite entries or a size mismatch are a bl::Error naming `who`.
PartialEigen64Result partial_eigen64_run(const std::vector<double>& a, int64_t n, int64_t k, const char* who,
                                         const PartialEigen64Options& opt);

// As above with the default options; only values and vectors.
SymmetricEigen64 partial_eigen64(const std::vector<double>& a, int64_t n, int64_t k,
                                 const char* who = "partial_eigen64");

// The rule of the call sites: the partial solver when n >= 256 and k <= n / 8, else the dense one.
// Values hold k entries with the partial solver (n with the dense one); callers read only the first k.
SymmetricEigen64 top_eigen64(const std::vector<double>& a, int64_t n, int64_t k, const char* who);

// y = Op x for `count` vectors at once: x and y are [count][n] row-major. Must be a fixed function
// of x (the same bits at every thread count).
using BlockOperator64 = std::function<void(const double* x, double* y, int64_t count)>;

// The k largest eigenpairs of a symmetric operator given only by its action, by the same block
// Lanczos. Convergence: every ||Op y - theta y|| <= tol * |theta| (for a shift-invert operator this
// bounds the residual on the shifted matrix by tol times its norm). There is no matrix to fall back on: not converged within
// max_basis gives the last Ritz pairs with converged = false and the caller decides.
PartialEigen64Result partial_eigen64_op_run(const BlockOperator64& op, int64_t n, int64_t k, const char* who,
                                            const PartialEigen64Options& opt);

// The k largest eigenpairs of the symmetric matrix a (lower triangle read) by shift-invert: given
// sigma above its largest eigenvalue, B = sigma I - a is factored once by cholesky64 and the block
// Lanczos runs on B^-1, whose largest eigenvalues 1 / (sigma - lambda) are the wanted ones pulled
// apart. Each returned value is the Rayleigh quotient v^T a v of its vector; the pairs are accepted
// when every ||a v - lambda v|| <= 1e-11 ||a||_inf, else (or when B is not positive definite, or
// for n < 256 or k > n / 8) symmetric_eigen64 gives them. Values hold k entries on the Lanczos path
// (n with the dense one); callers read only the first k.
SymmetricEigen64 shift_invert_top_eigen64(const std::vector<double>& a, int64_t n, int64_t k, double sigma,
                                          const char* who, bool* used_lanczos = nullptr);

// Cholesky B = L L^T of the symmetric positive definite n x n row-major b (lower triangle read) in
// binary64: L_ij = (b_ij - dot64(L_i[0, j), L_j[0, j))) / L_jj, L_jj = sqrt(b_jj - dot64(L_j, L_j)),
// the same bits whatever the order of evaluation (column panels, rows split among tasks). L is
// [n, n] row-major, zero above the diagonal. False when a pivot is not positive.
bool cholesky64(const std::vector<double>& b, int64_t n, std::vector<double>& L);

}  // namespace bl::ml
