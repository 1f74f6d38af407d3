// distances.h: squared Euclidean distances between row sets through the contract GEMM, shared by
// k-means and k-NN. D[i, j] = max(0, |x_i|^2 - 2 x_i . c_j + |c_j|^2), every part a Tensor op, so
// the bits are the same on every device and thread count.
#pragma once

#include "bitlearn/tensor.h"

namespace bl::ml {

// |x_i|^2 of each row of X [n, d] as [n, 1] (sum of squares in the reduction schedule).
Tensor row_sq_norms(const Tensor& X);
// D [n, k] for X [n, d] and C [k, d] with precomputed norms xx [n, 1] and cc [k, 1].
Tensor sq_distances(const Tensor& X, const Tensor& xx, const Tensor& C, const Tensor& cc);

// The row index i in [0, n) of a 32-bit Philox word: (word * n) >> 32.
int64_t philox_index(uint32_t word, int64_t n);

}  // namespace bl::ml
