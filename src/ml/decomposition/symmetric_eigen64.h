// symmetric_eigen64.h: eigen-decomposition of a dense symmetric matrix in binary64 on the host, by
// Householder reduction to tridiagonal form followed by the implicit QL algorithm with Wilkinson
// shifts. Only add, sub, mul, div and sqrt (correctly rounded, no contraction), every sum in a fixed
// order; the worker pool's tasks are chosen from the problem size and each owns whole outputs: the
// result is a pure function of the matrix on every machine and at every thread count.
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml {

struct SymmetricEigen64 {
  std::vector<double> values;   // [n], descending (ties keep the lower position of the QL result first)
  std::vector<double> vectors;  // [n_vectors, n] row-major; row k is the unit eigenvector of values[k]
};

// Decomposes the symmetric n x n row-major matrix a (only the lower triangle, j <= i, is read): all
// n eigenvalues and the eigenvectors of the n_vectors largest (all of them when n_vectors < 0 or
// > n). Each eigenvector's bits are the same whatever n_vectors and the thread count (tasks of 16
// vectors, each vector computed alone). Sign rule: each eigenvector's entry of largest magnitude
// (lowest index among ties) is positive. Non-finite entries or a size mismatch are a bl::Error
// naming `who`.
SymmetricEigen64 symmetric_eigen64(const std::vector<double>& a, int64_t n, int64_t n_vectors = -1,
                                   const char* who = "symmetric_eigen64");

// The dot product of x and y [len] in binary64: four partial sums (index mod 4) added as
// ((s0 + s1) + (s2 + s3)), then the tail in order. Shared by the eigensolvers.
double dot64(const double* x, const double* y, int64_t len);

// sqrt(a^2 + b^2) with the larger magnitude factored out (no overflow, basic operations only).
double hypot64(double a, double b);

// The largest magnitude in the lower triangle (j <= i) of the n x n row-major matrix a; a non-finite
// entry there is a bl::Error naming `who` and the entry.
double lower_triangle_max_abs(const std::vector<double>& a, int64_t n, const char* who);

}  // namespace bl::ml
