// shape.cpp: the Tensor-level copy, concat and index ops: checks, views, then the CPU or CUDA
// kernels of src/kernels/backend.h.
#include <algorithm>

#include "bitlearn/ops_shape.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {

namespace {

bool is_index_dtype(DType d) { return d == DType::i32 || d == DType::i64; }

void run_strided_copy(const Tensor& src, Tensor& dst, const char* op) {
  int64_t n = src.numel();
  if (n == 0) return;
  auto views = make_views(src.shape(), {src.strides(), dst.strides()}, op);
  dispatch::strided_copy(src.device(), src.element_size(), src.raw_data(), views[0], dst.raw_data(), views[1],
                         n);
}

[[noreturn]] void throw_bad_index(const char* op, const char* operand, int64_t position,
                                  int64_t extent) {
  throw Error(detail::concat(op, ": operand ", operand, " holds a value outside [0, ", extent,
                             ") at position ", position));
}

}  // namespace

Tensor copy(const Tensor& x) {
  check_defined(x, "copy", "x");
  check_device_usable(x.device(), "copy");
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  run_strided_copy(x, out, "copy");
  return out;
}

void copy_into(Tensor& dst, const Tensor& src) {
  check_defined(dst, "copy_into", "dst");
  check_defined(src, "copy_into", "src");
  BL_CHECK(dst.shape() == src.shape(), "copy_into: dst ", dst.str(), " and src ", src.str(),
           " must have the same shape");
  BL_CHECK(dst.dtype() == src.dtype(), "copy_into: dst ", dst.str(), " and src ", src.str(),
           " must have the same dtype");
  check_same_device(dst, src, "copy_into", "dst", "src");
  check_device_usable(dst.device(), "copy_into");
  for (size_t d = 0; d < dst.shape().size(); ++d)
    BL_CHECK(dst.shape()[d] <= 1 || dst.strides()[d] != 0, "copy_into: dst ", dst.str(),
             " is a broadcast view (stride 0 in dimension ", d, ") and cannot be written");
  run_strided_copy(src, dst, "copy_into");
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) {
  BL_CHECK(!tensors.empty(), "concat: needs at least one tensor");
  const Tensor& first = tensors[0];
  check_defined(first, "concat", "tensors[0]");
  int64_t nd = first.ndim();
  BL_CHECK(nd >= 1, "concat: tensors must have at least one dimension, got ", first.str());
  int64_t d = normalize_dim(dim, nd, "concat");
  Shape shape = first.shape();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    BL_CHECK(t.defined(), "concat: tensors[", i, "] is undefined");
    BL_CHECK(t.dtype() == first.dtype() && t.device() == first.device() && t.ndim() == nd,
             "concat: tensors[", i, "] (", t.str(), ") must match tensors[0] (", first.str(),
             ") in dtype, device and number of dimensions");
    for (int64_t k = 0; k < nd; ++k)
      BL_CHECK(k == d || t.shape()[k] == shape[k], "concat: tensors[", i, "] (", t.str(),
               ") differs from tensors[0] (", first.str(), ") in dimension ", k);
    total += t.shape()[d];
  }
  shape[d] = total;
  check_device_usable(first.device(), "concat");
  Tensor out = Tensor::empty(shape, first.dtype(), first.device());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    int64_t len = t.shape()[d];
    if (len > 0) {
      Tensor part = out.slice(d, at, at + len);
      run_strided_copy(t, part, "concat");
    }
    at += len;
  }
  return out;
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) { return x.transpose(d0, d1); }
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) { return x.permute(dims); }
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return x.slice(dim, start, end, step);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  check_defined(x, "index_select", "x");
  check_defined(index, "index_select", "index");
  BL_CHECK(is_index_dtype(index.dtype()), "index_select: operand index must be i32 or i64, got ",
           index.str());
  BL_CHECK(index.ndim() <= 1, "index_select: operand index must be 1-d, got ", index.str());
  check_same_device(x, index, "index_select", "x", "index");
  BL_CHECK(x.ndim() >= 1, "index_select: operand x must have at least one dimension, got ", x.str());
  int64_t d = normalize_dim(dim, x.ndim(), "index_select");
  check_device_usable(x.device(), "index_select");
  Tensor xc = x.contiguous();
  Tensor ic = index.contiguous();
  int64_t extent = x.shape()[d], count = ic.numel();
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.shape()[k];
  for (int64_t k = d + 1; k < x.ndim(); ++k) inner *= x.shape()[k];
  Shape shape = x.shape();
  shape[d] = count;
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  if (count == 0) return out;
  if (extent == 0) throw_bad_index("index_select", "index", 0, extent);
  int64_t bad;
  bad = dispatch::index_select(x.device(), x.element_size(), ic.dtype(), xc.raw_data(), outer, extent, inner,
                               ic.raw_data(), count, out.raw_data());
  if (bad >= 0) throw_bad_index("index_select", "index", bad, extent);
  return out;
}

namespace {
// Common checks of gather / scatter: index has x's ndim and non-dim extents <= x's.
int64_t check_gather_like(const Tensor& x, int64_t dim, const Tensor& index, const char* op) {
  check_defined(x, op, "x");
  check_defined(index, op, "index");
  BL_CHECK(is_index_dtype(index.dtype()), op, ": operand index must be i32 or i64, got ", index.str());
  check_same_device(x, index, op, "x", "index");
  BL_CHECK(x.ndim() >= 1, op, ": operand x must have at least one dimension, got ", x.str());
  BL_CHECK(index.ndim() == x.ndim(), op, ": operand index (", index.str(),
           ") must have as many dimensions as x (", x.str(), ")");
  int64_t d = normalize_dim(dim, x.ndim(), op);
  for (int64_t k = 0; k < x.ndim(); ++k)
    BL_CHECK(k == d || index.shape()[k] <= x.shape()[k], op, ": operand index (", index.str(),
             ") is larger than x (", x.str(), ") in dimension ", k);
  check_device_usable(x.device(), op);
  return d;
}
}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  int64_t d = check_gather_like(x, dim, index, "gather");
  Tensor out = Tensor::empty(index.shape(), x.dtype(), x.device());
  int64_t n = out.numel();
  if (n == 0) return out;
  int64_t extent = x.shape()[d];
  if (extent == 0) throw_bad_index("gather", "index", 0, extent);
  Shape x_strides = x.strides();
  int64_t dim_stride = x_strides[d];
  x_strides[d] = 0;
  StridedView xv = make_view_exact(index.shape(), x_strides, "gather");
  StridedView iv = make_view_exact(index.shape(), index.strides(), "gather");
  int64_t bad;
  bad = dispatch::gather(x.device(), x.element_size(), index.dtype(), x.raw_data(), xv, dim_stride, extent,
                         index.raw_data(), iv, out.raw_data(), n);
  if (bad >= 0) throw_bad_index("gather", "index", bad, extent);
  return out;
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  check_defined(x, "scatter", "x");
  Tensor out = copy(x);
  scatter_into(out, dim, index, src);
  return out;
}

void scatter_into(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  int64_t d = check_gather_like(x, dim, index, "scatter");
  check_defined(src, "scatter", "src");
  BL_CHECK(src.shape() == index.shape(), "scatter: operand src (", src.str(),
           ") must have the shape of index (", index.str(), ")");
  BL_CHECK(src.dtype() == x.dtype(), "scatter: operand src (", src.str(),
           ") must have the dtype of x (", x.str(), ")");
  check_same_device(x, src, "scatter", "x", "src");
  for (size_t k = 0; k < x.shape().size(); ++k)
    BL_CHECK(x.shape()[k] <= 1 || x.strides()[k] != 0, "scatter_into: x ", x.str(),
             " is a broadcast view (stride 0 in dimension ", k, ") and cannot be written");
  if (index.numel() == 0) return;
  int64_t extent = x.shape()[d];
  if (extent == 0) throw_bad_index("scatter", "index", 0, extent);
  // Lines: index's shape without dim.
  Shape line_shape, out_ls, index_ls, src_ls;
  for (int64_t k = 0; k < x.ndim(); ++k) {
    if (k == d) continue;
    line_shape.push_back(index.shape()[k]);
    out_ls.push_back(x.strides()[k]);
    index_ls.push_back(index.strides()[k]);
    src_ls.push_back(src.strides()[k]);
  }
  int64_t n_lines = shape_numel(line_shape), count = index.shape()[d];
  StridedView ov = make_view_exact(line_shape, out_ls, "scatter");
  StridedView iv = make_view_exact(line_shape, index_ls, "scatter");
  StridedView sv = make_view_exact(line_shape, src_ls, "scatter");
  int64_t bad;
  bad = dispatch::scatter(x.device(), x.element_size(), index.dtype(), x.raw_data(), ov, x.strides()[d],
                          extent, index.raw_data(), iv, index.strides()[d], src.raw_data(), sv,
                          src.strides()[d], count, n_lines);
  if (bad >= 0) throw_bad_index("scatter", "index", bad, extent);
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  check_defined(weight, "embedding", "weight");
  check_defined(ids, "embedding", "ids");
  BL_CHECK(weight.ndim() == 2, "embedding: operand weight must be 2-d [V, D], got ", weight.str());
  BL_CHECK(is_index_dtype(ids.dtype()), "embedding: operand ids must be i32 or i64, got ", ids.str());
  check_same_device(weight, ids, "embedding", "weight", "ids");
  Shape shape = ids.shape();
  shape.push_back(weight.shape()[1]);
  Tensor flat_ids = ids.reshape({ids.numel()});
  Tensor rows;
  try {
    rows = index_select(weight, 0, flat_ids);
  } catch (const Error& e) {
    throw Error(detail::concat("embedding: operand ids holds a value outside [0, ", weight.shape()[0],
                               ") (", e.what(), ")"));
  }
  return rows.reshape(shape);
}

Tensor embedding_backward(const Tensor& grad_out, const Tensor& ids, int64_t num_embeddings) {
  check_defined(grad_out, "embedding_backward", "grad_out");
  check_defined(ids, "embedding_backward", "ids");
  BL_CHECK(grad_out.dtype() == DType::f32, "embedding_backward: operand grad_out must be f32, got ",
           grad_out.str());
  BL_CHECK(is_index_dtype(ids.dtype()), "embedding_backward: operand ids must be i32 or i64, got ",
           ids.str());
  check_same_device(grad_out, ids, "embedding_backward", "grad_out", "ids");
  BL_CHECK(num_embeddings >= 0, "embedding_backward: num_embeddings must be >= 0, got ",
           num_embeddings);
  BL_CHECK(grad_out.ndim() == ids.ndim() + 1, "embedding_backward: operand grad_out (",
           grad_out.str(), ") must have the shape of ids (", ids.str(), ") plus one last dimension");
  for (int64_t k = 0; k < ids.ndim(); ++k)
    BL_CHECK(grad_out.shape()[k] == ids.shape()[k], "embedding_backward: operand grad_out (",
             grad_out.str(), ") must have the shape of ids (", ids.str(), ") plus one last dimension");
  check_device_usable(grad_out.device(), "embedding_backward");
  int64_t width = grad_out.shape().back(), n = ids.numel();
  Tensor g = grad_out.contiguous();
  Tensor ic = ids.contiguous();
  Tensor out = Tensor::zeros({num_embeddings, width}, DType::f32, grad_out.device());
  if (num_embeddings == 0 || width == 0) {
    // Still validate ids: every id must name a row.
    BL_CHECK(n == 0 || num_embeddings > 0, "embedding_backward: operand ids holds values but num_embeddings is 0");
    if (width == 0) return out;
  }
  int64_t bad;
  const float* gp = static_cast<const float*>(g.raw_data());
  float* op = static_cast<float*>(out.raw_data());
  bad = dispatch::embedding_backward(grad_out.device(), ic.dtype(), gp, ic.raw_data(), n, width,
                                     num_embeddings, op);
  if (bad >= 0) throw_bad_index("embedding_backward", "ids", bad, num_embeddings);
  return out;
}

}  // namespace bl
