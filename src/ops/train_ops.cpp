// train_ops.cpp: the fused training-pass ops of bitlearn/ops_train.h.
#include "bitlearn/ops_train.h"

#include <vector>

#include "bitlearn/ops.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/norm_backward.h"
#include "kernels/train_maps.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {
namespace {

const float* cptr(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }
float* mptr(Tensor& t) { return static_cast<float*>(t.raw_data()); }

// Checks that every operand is a defined f32 tensor on the first one's device, the first of the
// shape `shape` where given; returns contiguous copies (or the operands themselves).
std::vector<Tensor> operands(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> list) {
  std::vector<Tensor> out;
  const Tensor* first = nullptr;
  for (const auto& [name, t] : list) {
    check_defined(*t, op, name);
    BL_CHECK(t->dtype() == DType::f32, op, ": operand ", name, " has dtype ", dtype_name(t->dtype()),
             "; expected f32");
    if (first) check_same_device(*first, *t, op, list.begin()->first, name);
    else first = t;
    out.push_back(t->contiguous());
  }
  check_device_usable(first->device(), op);
  return out;
}

void check_same_shape(const char* op, const Tensor& a, const char* name_a, const Tensor& b, const char* name_b) {
  BL_CHECK(a.shape() == b.shape(), op, ": operand ", name_b, " has shape ", shape_str(b.shape()),
           "; expected the shape of ", name_a, " ", shape_str(a.shape()));
}

// The composed form of norm_backward (the definition, op by op), for rows wider than the fused
// kernels take.
std::pair<Tensor, Tensor> composed_norm_backward(const Tensor& x, const Tensor& g, const Tensor& w, float eps,
                                                 bool layer_norm) {
  const Tensor e = Tensor::scalar(eps, DType::f32, x.device());
  const Tensor c = layer_norm ? sub(x, mean(x, {-1}, true)) : x;
  const Tensor r = rsqrt(add(mean(square(c), {-1}, true), e));
  const Tensor xhat = mul(c, r);
  const Tensor d = mul(g, w);
  Tensor inner = sub(d, mul(xhat, mean(mul(d, xhat), {-1}, true)));
  if (layer_norm) inner = sub(inner, mean(d, {-1}, true));
  return {mul(r, inner), mul(g, xhat)};
}

}  // namespace

std::pair<Tensor, Tensor> norm_backward(const Tensor& x, const Tensor& g, const Tensor& w, float eps,
                                        bool layer_norm) {
  const char* op = "norm_backward";
  std::vector<Tensor> in = operands(op, {{"x", &x}, {"g", &g}, {"w", &w}});
  BL_CHECK(x.ndim() >= 1, op, ": x must have at least one dimension");
  check_same_shape(op, x, "x", g, "g");
  const int64_t n = x.dim(-1);
  BL_CHECK(w.ndim() == 1 && w.dim(0) == n, op, ": operand w has shape ", shape_str(w.shape()), "; expected [", n, "]");
  if (n > kNormBackwardMaxWidth) return composed_norm_backward(in[0], in[1], in[2], eps, layer_norm);
  Tensor dx = Tensor::empty(x.shape(), DType::f32, x.device());
  Tensor gx = Tensor::empty(x.shape(), DType::f32, x.device());
  NormBackwardArgs a;
  a.n = n;
  a.rows = n == 0 ? 0 : x.numel() / n;
  a.eps = eps;
  a.layer_norm = layer_norm;
  if (a.rows > 0) dispatch::norm_backward(x.device(), a, cptr(in[0]), cptr(in[1]), cptr(in[2]), mptr(dx), mptr(gx));
  return {dx, gx};
}

Tensor rope(const Tensor& x, const Tensor& cos_rows, const Tensor& sin_rows, int64_t head_dim, bool backward) {
  const char* op = backward ? "rope_backward" : "rope";
  std::vector<Tensor> in = operands(op, {{"x", &x}, {"cos", &cos_rows}, {"sin", &sin_rows}});
  BL_CHECK(head_dim >= 2 && head_dim % 2 == 0, op, ": head_dim ", head_dim, " must be even and >= 2");
  BL_CHECK(x.ndim() == 2 && x.dim(1) % head_dim == 0, op, ": x has shape ", shape_str(x.shape()),
           "; expected [rows, heads * ", head_dim, "]");
  const Shape table{x.dim(0), head_dim};
  BL_CHECK(cos_rows.shape() == table && sin_rows.shape() == table, op, ": cos and sin have shapes ",
           shape_str(cos_rows.shape()), " and ", shape_str(sin_rows.shape()), "; expected ", shape_str(table));
  Tensor y = Tensor::empty(x.shape(), DType::f32, x.device());
  RopeArgs a;
  a.rows = x.dim(0);
  a.heads = x.dim(1) / head_dim;
  a.head_dim = head_dim;
  a.backward = backward;
  if (y.numel() > 0) dispatch::rope(x.device(), a, cptr(in[0]), cptr(in[1]), cptr(in[2]), mptr(y));
  return y;
}

Tensor swiglu(const Tensor& a, const Tensor& b) {
  const char* op = "swiglu";
  std::vector<Tensor> in = operands(op, {{"a", &a}, {"b", &b}});
  check_same_shape(op, a, "a", b, "b");
  Tensor y = Tensor::empty(a.shape(), DType::f32, a.device());
  if (y.numel() > 0)
    dispatch::train_map(a.device(), TrainMap::swiglu_forward, y.numel(), cptr(in[0]), cptr(in[1]), nullptr, mptr(y),
                        nullptr);
  return y;
}

std::pair<Tensor, Tensor> swiglu_backward(const Tensor& a, const Tensor& b, const Tensor& dy) {
  const char* op = "swiglu_backward";
  std::vector<Tensor> in = operands(op, {{"a", &a}, {"b", &b}, {"dy", &dy}});
  check_same_shape(op, a, "a", b, "b");
  check_same_shape(op, a, "a", dy, "dy");
  Tensor da = Tensor::empty(a.shape(), DType::f32, a.device());
  Tensor db = Tensor::empty(a.shape(), DType::f32, a.device());
  if (da.numel() > 0)
    dispatch::train_map(a.device(), TrainMap::swiglu_backward, da.numel(), cptr(in[0]), cptr(in[1]), cptr(in[2]),
                        mptr(da), mptr(db));
  return {da, db};
}

Tensor gelu_tanh_backward(const Tensor& x, const Tensor& g) {
  const char* op = "gelu_tanh_backward";
  std::vector<Tensor> in = operands(op, {{"x", &x}, {"g", &g}});
  check_same_shape(op, x, "x", g, "g");
  Tensor dx = Tensor::empty(x.shape(), DType::f32, x.device());
  if (dx.numel() > 0)
    dispatch::train_map(x.device(), TrainMap::gelu_tanh_backward, dx.numel(), cptr(in[0]), cptr(in[1]), nullptr,
                        mptr(dx), nullptr);
  return dx;
}

}  // namespace bl
