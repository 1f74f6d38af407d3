// ops_reduce.h: Tensor-level reductions, softmax, normalizations, cumulative sum, sort and top-k.
//
// All take f32 tensors on any device and run there (no fallback). The numerics are those of the
// kernel headers, which define each op exactly: src/kernels/reduce.h (sum schedule, var two-pass,
// arg ties), softmax.h, norm.h, cumsum.h, sort.h. A reduction over several dimensions takes its
// elements in row-major order over the reduced dimensions, as one array of their product length.
// Dimensions may be negative (counted from the end). Errors name the op and the operand.
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl {

// Reductions over dims (empty = every dimension), dropping them unless keepdim (then extent 1).
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Variance and standard deviation with divisor n - ddof (NaN when n - ddof <= 0), two-pass.
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t ddof = 0, bool keepdim = false);
Tensor stddev(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t ddof = 0, bool keepdim = false);
// Maximum / minimum by bl::max / bl::min (NaN propagates, +0 > -0); the reduced extent must be >= 1.
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Sum of |x| and sqrt of the sum of squares (dot schedule).
Tensor l1_norm(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor l2_norm(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);

// Index (i64) of the greatest / least element along dim: lowest index among ties, first NaN wins.
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);

// Softmax and log-softmax along dim (max-subtracted; see src/kernels/softmax.h).
Tensor softmax(const Tensor& x, int64_t dim = -1);
Tensor log_softmax(const Tensor& x, int64_t dim = -1);

// Layer norm over the last dimension; gamma and beta are undefined Tensors or 1-d of that extent.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f);
// RMS norm over the last dimension; gamma is an undefined Tensor or 1-d of that extent.
Tensor rms_norm(const Tensor& x, const Tensor& gamma, float eps = 1e-6f);

// Inclusive cumulative sum along dim on the block schedule of src/kernels/cumsum.h.
Tensor cumsum(const Tensor& x, int64_t dim);

// Stable sort along dim: values (NaN canonical, NaN after +inf) and i64 source indices.
struct SortResult {
  Tensor values;
  Tensor indices;
};
SortResult sort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest along dim, in descending order, ties to the lowest index (NaN counts as largest).
SortResult topk(const Tensor& x, int64_t k, int64_t dim = -1);

}  // namespace bl
