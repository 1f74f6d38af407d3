// partial_eigen64.h: the k largest eigenpairs of a dense symmetric binary64 matrix by block Lanczos
// (block Krylov with full reorthogonalization and Rayleigh-Ritz), for callers that need a few
// extreme eigenpairs of a large matrix. Only add, sub, mul, div and sqrt, every sum in a fixed order,
// pool tasks chosen from the problem size and each owning whole outputs: the result is a pure
// function of the matrix on every machine and at every thread count.
#pragma once

#include <cstdint>
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

}  // namespace bl::ml
