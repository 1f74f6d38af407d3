// dense64.h: small dense binary64 host routines and the randomized SVD shared by the decomposition
// estimators of truncated_svd.cpp, kernel_pca.cpp, factor_analysis.cpp and nmf.cpp. Only add, sub,
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

// Population variance (divisor n) of each column of a [n, d] row-major: the mean summed in row order,
// then the squared deviations summed in row order.
std::vector<double> column_variances(const std::vector<double>& a, int64_t n, int64_t d);

// The lower triangle (entries (a, b) with b <= a; the rest +0) of A A^T for A [k, d] row-major, each
// entry summed over j in ascending order: the input symmetric_eigen64 reads.
std::vector<double> row_gram_lower(const std::vector<double>& a, int64_t k, int64_t d);

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
