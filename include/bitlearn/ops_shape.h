// ops_shape.h: shape and index operations: copies, concat, index_select, gather, scatter,
// embedding and its backward.
//
// Views that need no copy (reshape, transpose, permute, slice, squeeze, unsqueeze, expand) are
// Tensor methods (bitlearn/tensor.h). The ops here move data; apart from embedding_backward, none
// does arithmetic, so their results are exact copies of input elements (NaN payloads included,
// except that embedding_backward canonicalizes its sums).
// Index tensors are i32 or i64; an index outside [0, extent) throws bl::Error naming the op (on
// CUDA the check runs on the device and is reported when the op returns).
#pragma once

#include <vector>

#include "bitlearn/tensor.h"

namespace bl {

// A contiguous copy of x on the same device (a strided-copy kernel on CUDA).
Tensor copy(const Tensor& x);
// Copies src into dst element by element (shapes must be equal, dtypes and devices too).
// dst may be any strided view that does not overlap itself (no zero strides).
void copy_into(Tensor& dst, const Tensor& src);

// Joins tensors along dim; all must share dtype, device and every other extent.
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim);

// Free-function forms of the views, for symmetry with other frameworks (return views).
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);

// Selects entries along dim: out has x's shape with extent dim replaced by index.numel();
// out[..., i, ...] = x[..., index[i], ...]. index is 1-d (or 0-d) i32/i64.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);

// out[i][j][k] = x[index[i][j][k]][j][k] for dim 0 (likewise for other dims): out has index's
// shape; index has x's ndim and every non-dim extent of index <= x's.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);

// A copy of x with out[index[i][j][k]][j][k] = src[i][j][k] for dim 0 (likewise for other dims).
// index and src have the same shape, ndim of x, non-dim extents <= x's. When several elements
// target the same position, the one latest in row-major order over index wins (defined, on every
// device).
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// scatter in place: x[index[i][j][k]][j][k] = src[i][j][k] for dim 0 (likewise for other dims), the
// same checks and order; x may be a view but not a broadcast one, and src must not overlap x.
void scatter_into(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

// Embedding lookup: weight [V, D] (f32), ids of any shape (i32/i64, values in [0, V)) ->
// out of shape ids.shape + [D], out[..., :] = weight[ids[...], :].
Tensor embedding(const Tensor& weight, const Tensor& ids);

// Gradient of embedding with respect to weight: grad_out of shape ids.shape + [D] ->
// grad_weight [num_embeddings, D] (f32). Without atomics, in a defined order: for each row v and
// column d, the contributions grad_out[p][d] of every flat ids position p with ids[p] == v are
// taken in ascending p and summed by the contract's reduction schedule (src/contract/schedule.h:
// leaves of kReduceLeaf, kReduceLanes lanes, pairwise tree), as if they formed one array. Rows
// without contributions are +0. NaN sums are canonical.
Tensor embedding_backward(const Tensor& grad_out, const Tensor& ids, int64_t num_embeddings);

}  // namespace bl
