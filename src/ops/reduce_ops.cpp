// reduce_ops.cpp: Tensor-level wrappers of the reduction kernels: operand checks, moving the
// reduced dimensions into the (outer, n, inner) form, then the CPU or CUDA kernel.
#include <algorithm>
#include <numeric>
#include <vector>

#include "bitlearn/ops_reduce.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/cumsum.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {
namespace {

void check_f32(const Tensor& x, const char* op, const char* name) {
  check_defined(x, op, name);
  BL_CHECK(x.dtype() == DType::f32, op, ": operand ", name, " has dtype ", dtype_name(x.dtype()),
           "; expected f32");
  check_device_usable(x.device(), op);
}

const float* fptr(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }
float* fptr(Tensor& t) { return static_cast<float*>(t.raw_data()); }

// A reduction problem: the contiguous input arranged as (outer, n, inner) and the output shape.
struct Plan {
  Tensor input;
  ReduceShape shape;
  Shape out_shape;
};

Plan plan_reduction(const Tensor& x, std::vector<int64_t> dims, bool keepdim, const char* op) {
  const int64_t nd = x.ndim();
  if (dims.empty()) {
    dims.resize(nd);
    std::iota(dims.begin(), dims.end(), int64_t{0});
  }
  std::vector<bool> reduced(nd, false);
  for (int64_t& d : dims) {
    d = normalize_dim(d, nd, op);
    BL_CHECK(!reduced[d], op, ": dimension ", d, " appears twice in dims");
    reduced[d] = true;
  }
  std::sort(dims.begin(), dims.end());
  Plan p;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) p.out_shape.push_back(x.dim(d));
    else if (keepdim) p.out_shape.push_back(1);
  }
  const bool consecutive = dims.empty() || dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  if (consecutive) {
    p.input = x.contiguous();
    int64_t a = dims.empty() ? nd : dims.front(), b = dims.empty() ? nd : dims.back() + 1;
    p.shape.outer = 1;
    p.shape.n = 1;
    p.shape.inner = 1;
    for (int64_t d = 0; d < a; ++d) p.shape.outer *= x.dim(d);
    for (int64_t d = a; d < b; ++d) p.shape.n *= x.dim(d);
    for (int64_t d = b; d < nd; ++d) p.shape.inner *= x.dim(d);
  } else {
    std::vector<int64_t> order;
    for (int64_t d = 0; d < nd; ++d)
      if (!reduced[d]) order.push_back(d);
    for (int64_t d : dims) order.push_back(d);
    p.input = x.permute(order).contiguous();
    p.shape.outer = 1;
    p.shape.n = 1;
    p.shape.inner = 1;
    for (int64_t d = 0; d < nd; ++d) (reduced[d] ? p.shape.n : p.shape.outer) *= x.dim(d);
  }
  return p;
}

Tensor run_reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, int64_t ddof) {
  const char* name = reduce_op_name(op);
  check_f32(x, name, "x");
  Plan p = plan_reduction(x, dims, keepdim, name);
  Tensor out = Tensor::empty(p.out_shape, DType::f32, x.device());
  dispatch::reduce(x.device(), op, fptr(p.input), p.shape, fptr(out), ddof);
  return out;
}

// Checks that operand x of op `name` is f32 with at least one dimension.
void check_f32_nonscalar(const Tensor& x, const char* name) {
  check_f32(x, name, "x");
  BL_CHECK(x.ndim() >= 1, name, ": operand x must have at least one dimension");
}

Tensor run_arg(ArgReduceOp op, const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = op == ArgReduceOp::argmax ? "argmax" : "argmin";
  check_f32_nonscalar(x, name);
  Plan p = plan_reduction(x, {dim}, keepdim, name);
  Tensor out = Tensor::empty(p.out_shape, DType::i64, x.device());
  int64_t* o = static_cast<int64_t*>(out.raw_data());
  dispatch::arg_reduce(x.device(), op, fptr(p.input), p.shape, o);
  return out;
}

// x with dim moved last, contiguous; rows = numel / extent.
Tensor last_dim_contiguous(const Tensor& x, int64_t dim) {
  return dim == x.ndim() - 1 ? x.contiguous() : x.transpose(dim, x.ndim() - 1).contiguous();
}
Tensor restore_dim(const Tensor& y, int64_t dim, int64_t ndim) {
  return dim == ndim - 1 ? y : y.transpose(dim, ndim - 1).contiguous();
}

// x seen as rows along dim: the normalized dim, x with dim moved last and made contiguous (xc),
// the extent n of dim, and rows = numel / n (0 when n is 0).
struct RowsAlong {
  int64_t dim;
  Tensor xc;
  int64_t n, rows;
};
RowsAlong rows_along(const Tensor& x, int64_t dim, const char* name) {
  check_f32_nonscalar(x, name);
  dim = normalize_dim(dim, x.ndim(), name);
  Tensor xc = last_dim_contiguous(x, dim);
  const int64_t n = xc.dim(-1), rows = n == 0 ? 0 : xc.numel() / n;
  return RowsAlong{dim, xc, n, rows};
}

Tensor run_softmax(const Tensor& x, int64_t dim, bool log_form) {
  const char* name = log_form ? "log_softmax" : "softmax";
  const RowsAlong r = rows_along(x, dim, name);
  Tensor y = Tensor::empty(r.xc.shape(), DType::f32, x.device());
  dispatch::softmax(x.device(), fptr(r.xc), r.rows, r.n, fptr(y), log_form);
  return restore_dim(y, r.dim, x.ndim());
}

const float* optional_param(const Tensor& t, const Tensor& x, int64_t n, const char* op, const char* name) {
  if (!t.defined()) return nullptr;
  BL_CHECK(t.dtype() == DType::f32, op, ": operand ", name, " has dtype ", dtype_name(t.dtype()), "; expected f32");
  BL_CHECK(t.ndim() == 1 && t.dim(0) == n, op, ": operand ", name, " has shape ", shape_str(t.shape()),
           "; expected [", n, "] (the last extent of x)");
  check_same_device(t, x, op, name, "x");
  BL_CHECK(t.is_contiguous(), op, ": operand ", name, " must be contiguous");
  return fptr(t);
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return run_reduce(ReduceOp::sum, x, dims, keepdim, 0);
}
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return run_reduce(ReduceOp::mean, x, dims, keepdim, 0);
}
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t ddof, bool keepdim) {
  return run_reduce(ReduceOp::var, x, dims, keepdim, ddof);
}
Tensor stddev(const Tensor& x, const std::vector<int64_t>& dims, int64_t ddof, bool keepdim) {
  return run_reduce(ReduceOp::std, x, dims, keepdim, ddof);
}
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return run_reduce(ReduceOp::max, x, dims, keepdim, 0);
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return run_reduce(ReduceOp::min, x, dims, keepdim, 0);
}
Tensor l1_norm(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return run_reduce(ReduceOp::l1, x, dims, keepdim, 0);
}
Tensor l2_norm(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return run_reduce(ReduceOp::l2, x, dims, keepdim, 0);
}
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return run_arg(ArgReduceOp::argmax, x, dim, keepdim); }
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) { return run_arg(ArgReduceOp::argmin, x, dim, keepdim); }

Tensor softmax(const Tensor& x, int64_t dim) { return run_softmax(x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return run_softmax(x, dim, true); }

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  const char* name = "layer_norm";
  check_f32_nonscalar(x, name);
  Tensor xc = x.contiguous();
  const int64_t n = xc.dim(-1), rows = n == 0 ? 0 : xc.numel() / n;
  const float* g = optional_param(gamma, x, n, name, "gamma");
  const float* b = optional_param(beta, x, n, name, "beta");
  Tensor y = Tensor::empty(xc.shape(), DType::f32, x.device());
  dispatch::layer_norm(x.device(), fptr(xc), rows, n, g, b, eps, fptr(y), nullptr, nullptr);
  return y;
}

Tensor rms_norm(const Tensor& x, const Tensor& gamma, float eps) {
  const char* name = "rms_norm";
  check_f32_nonscalar(x, name);
  Tensor xc = x.contiguous();
  const int64_t n = xc.dim(-1), rows = n == 0 ? 0 : xc.numel() / n;
  const float* g = optional_param(gamma, x, n, name, "gamma");
  Tensor y = Tensor::empty(xc.shape(), DType::f32, x.device());
  dispatch::rms_norm(x.device(), fptr(xc), rows, n, g, eps, fptr(y), nullptr);
  return y;
}

Tensor cumsum(const Tensor& x, int64_t dim) {
  const char* name = "cumsum";
  check_f32_nonscalar(x, name);
  Plan p = plan_reduction(x, {dim}, true, name);
  Tensor y = Tensor::empty(x.shape(), DType::f32, x.device());
  dispatch::cumsum(x.device(), fptr(p.input), p.shape, fptr(y));
  return y;
}

SortResult sort(const Tensor& x, int64_t dim, bool descending) {
  const char* name = "sort";
  const RowsAlong r = rows_along(x, dim, name);
  Tensor v = Tensor::empty(r.xc.shape(), DType::f32, x.device());
  Tensor i = Tensor::empty(r.xc.shape(), DType::i64, x.device());
  int64_t* ip = static_cast<int64_t*>(i.raw_data());
  dispatch::sort(x.device(), fptr(r.xc), r.rows, r.n, descending, fptr(v), ip);
  return SortResult{restore_dim(v, r.dim, x.ndim()), restore_dim(i, r.dim, x.ndim())};
}

SortResult topk(const Tensor& x, int64_t k, int64_t dim) {
  const char* name = "topk";
  const RowsAlong r = rows_along(x, dim, name);
  BL_CHECK(k >= 0 && k <= r.n, name, ": k must be in [0, ", r.n, "] (the extent of dim ", r.dim, "), got ", k);
  Shape out_shape = r.xc.shape();
  out_shape.back() = k;
  Tensor v = Tensor::empty(out_shape, DType::f32, x.device());
  Tensor i = Tensor::empty(out_shape, DType::i64, x.device());
  int64_t* ip = static_cast<int64_t*>(i.raw_data());
  dispatch::topk(x.device(), fptr(r.xc), r.rows, r.n, k, fptr(v), ip);
  return SortResult{restore_dim(v, r.dim, x.ndim()), restore_dim(i, r.dim, x.ndim())};
}

}  // namespace bl
