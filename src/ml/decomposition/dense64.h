// dense64.h: small dense binary64 host routines and the randomized SVD shared by the decomposition
// estimators (truncated_svd.cpp, kernel_pca.cpp, factor_analysis.cpp, fast_ica.cpp, incremental_pca.cpp,
// nmf.cpp) and the estimators that decompose a host matrix alike (isomap, mds, discriminant). Only add, sub,
// mul, div and sqrt, every sum in ascending index order on one thread (products with X by the
// contract GEMM), so each result is a pure function of its inputs on every machine and at every
// thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml::dec {

// A host f32 tensor (any device, any layout) widened to binary64, row-major.
std::vector<double> to_host64(const Tensor& t);

// v rounded once to binary32 (a contiguous [shape] tensor on dev).
Tensor to_tensor32(const std::vector<double>& v, const Shape& shape, Device dev);

// Orthonormalizes the columns of a [n, l] row-major in place by modified Gram-Schmidt run twice
// (columns left to right; each projection's dot product summed over rows in ascending order). A
// column whose norm after the projections is at most 1e-10 of its norm before them (a rank
// deficiency) becomes zero.
void orthonormalize_columns(std::vector<double>& a, int64_t n, int64_t l);

// A [r, k] times B [k, c], both row-major: each entry summed over k in ascending order from +0.
std::vector<double> mul64(const std::vector<double>& a, const std::vector<double>& b, int64_t r, int64_t k, int64_t c);

// A^T B [r, c] for A [k, r] and B [k, c], both row-major: each entry summed over k in ascending order
// from +0 (with b = a, the Gram matrix A^T A).
std::vector<double> mul64_tn(const std::vector<double>& a, const std::vector<double>& b, int64_t k, int64_t r, int64_t c);

// The transpose [c, r] of a [r, c] row-major.
std::vector<double> transposed(const std::vector<double>& a, int64_t r, int64_t c);

// Each value rounded once to binary32.
std::vector<float> rounded32(const std::vector<double>& v);

// Column means of a [n, d] row-major (each column summed over rows in ascending order, then / n).
std::vector<double> column_means(const std::vector<double>& a, int64_t n, int64_t d);

// Row means of a [n, d] row-major (each row summed over columns in ascending order, then / d).
std::vector<double> row_means(const std::vector<double>& a, int64_t n, int64_t d);

// The mean of v (summed in ascending order, then / its size).
double mean64(const std::vector<double>& v);

// Double centering of the lower triangle (j <= i) of the [n, n] row-major m in place:
// m_ij <- ((m_ij - col_means_j) - row_means_i) + grand; the upper triangle is left as it is (the
// part symmetric_eigen64 does not read).
void center_lower(std::vector<double>& m, int64_t n, const std::vector<double>& row_means,
                  const std::vector<double>& col_means, double grand);

// Population variance (divisor n) of each column of a [n, d] row-major: the mean summed in row order,
// then the squared deviations summed in row order.
std::vector<double> column_variances(const std::vector<double>& a, int64_t n, int64_t d);

// The lower triangle (entries (p, q) with q <= p; the rest +0) of A^T A [d, d] for A [n, d] row-major,
// each entry summed over the rows in ascending order: the input symmetric_eigen64 reads.
std::vector<double> column_gram_lower(const std::vector<double>& a, int64_t n, int64_t d);

// The lower triangle (entries (a, b) with b <= a; the rest +0) of A A^T for A [k, d] row-major, each
// entry summed over j in ascending order: the input symmetric_eigen64 reads.
std::vector<double> row_gram_lower(const std::vector<double>& a, int64_t k, int64_t d);

// v [d] += sum over i in ascending order of u_i B_i (B [l, d] row-major, each entry in ascending i),
// then v /= s: the right singular vector B^T u / s of a left one u of singular value s.
void right_vector_from_left(const double* u, const std::vector<double>& b, int64_t l, int64_t d, double s, double* v);

// Scales row t of v [k, d] so that its entry of largest magnitude (lowest index among ties) is
// positive (scikit-learn's svd_flip with the decision on the right singular vectors).
void flip_rows_by_largest(std::vector<double>& v, int64_t k, int64_t d);

// The k largest singular values of X [n, d] (values, descending) and their right singular vectors
// (vectors [k, d], unit rows, no sign rule) by a randomized range finder with l >= k sketch columns
// (k <= l <= min(n, d)): Omega [d, l], entry (i, j) the Philox normal_element(seed, stream 1, i * l + j);
// Y = X Omega (contract GEMM on X's device), then n_iter power iterations Z = X^T Q(Y), Y = X Q(Z),
// each Q(.) orthonormalize_columns in binary64 rounded once to binary32 for the next GEMM;
// B = Q^T X (GEMM) [l, d]; M = B B^T in binary64 (sums in ascending order), decomposed by
// symmetric_eigen64: s_t = sqrt(max(mu_t, 0)), vector t = u_t^T B / s_t (zero where s_t = 0).
void randomized_svd(const Tensor& X, int64_t k, int64_t l, int64_t n_iter, uint64_t seed,
                    std::vector<double>& values, std::vector<double>& vectors);

}  // namespace bl::ml::dec
