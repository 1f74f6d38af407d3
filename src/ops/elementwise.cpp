// elementwise.cpp: the Tensor-level elementwise ops: checks, broadcasting, then the CPU or CUDA
// kernels of src/kernels/backend.h.
#include <algorithm>
#include <string>

#include "bitlearn/ops_elementwise.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/math_map.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t nd = std::max(a.size(), b.size());
  Shape out(nd);
  for (size_t o = 0; o < nd; ++o) {
    int64_t ea = o + a.size() >= nd ? a[o + a.size() - nd] : 1;
    int64_t eb = o + b.size() >= nd ? b[o + b.size() - nd] : 1;
    BL_CHECK(ea == eb || ea == 1 || eb == 1, op, ": shapes ", shape_str(a), " and ", shape_str(b),
             " do not broadcast (dimension ", o, ": ", ea, " vs ", eb, ")");
    out[o] = ea == 1 ? eb : ea;
  }
  return out;
}

namespace {

// The contract math functions run through the shared math map (src/kernels/math_map.h), which
// has the vectorized CPU loops; its bits equal unary_f32's (both canonicalize the contract
// function's result). Returns false for the ops that are not contract math functions.
bool math_fn_of(UnaryOp op, MathFn& fn) {
  switch (op) {
    case UnaryOp::exp: fn = MathFn::exp; return true;
    case UnaryOp::expm1: fn = MathFn::expm1; return true;
    case UnaryOp::log: fn = MathFn::log; return true;
    case UnaryOp::log1p: fn = MathFn::log1p; return true;
    case UnaryOp::log2: fn = MathFn::log2; return true;
    case UnaryOp::tanh: fn = MathFn::tanh; return true;
    case UnaryOp::sigmoid: fn = MathFn::sigmoid; return true;
    case UnaryOp::erf: fn = MathFn::erf; return true;
    case UnaryOp::gelu: fn = MathFn::gelu; return true;
    case UnaryOp::gelu_tanh: fn = MathFn::gelu_tanh; return true;
    case UnaryOp::silu: fn = MathFn::silu; return true;
    case UnaryOp::softplus: fn = MathFn::softplus; return true;
    case UnaryOp::sin: fn = MathFn::sin; return true;
    case UnaryOp::cos: fn = MathFn::cos; return true;
    case UnaryOp::rsqrt: fn = MathFn::rsqrt; return true;
    default: return false;
  }
}

Tensor run_unary(UnaryOp op, const Tensor& x) {
  const char* name = unary_op_name(op);
  check_defined(x, name, "x");
  bool ok = x.dtype() == DType::f32 ||
            ((x.dtype() == DType::i32 || x.dtype() == DType::i64) && unary_op_supports_int(op));
  BL_CHECK(ok, name, ": operand x has dtype ", dtype_name(x.dtype()), "; expected ",
           unary_op_supports_int(op) ? "f32, i32 or i64" : "f32");
  check_device_usable(x.device(), name);
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  int64_t n = out.numel();
  if (n == 0) return out;
  MathFn fn;
  if (x.dtype() == DType::f32 && math_fn_of(op, fn)) {
    Tensor xc = x.contiguous();
    const float* in = static_cast<const float*>(xc.raw_data());
    float* o = static_cast<float*>(out.raw_data());
    dispatch::math_map(x.device(), fn, in, o, n);
    return out;
  }
  auto views = make_views(x.shape(), {x.strides()}, name);
  dispatch::unary(x.device(), op, x.dtype(), x.raw_data(), views[0], out.raw_data(), n);
  return out;
}

struct Broadcast2 {
  Shape shape;
  std::vector<StridedView> views;
};

Broadcast2 broadcast2(const Tensor& a, const Tensor& b, const char* op) {
  Broadcast2 r;
  r.shape = broadcast_shapes(a.shape(), b.shape(), op);
  r.views = make_views(r.shape, {broadcast_strides(a, r.shape), broadcast_strides(b, r.shape)}, op);
  return r;
}

void check_binary_operands(const Tensor& a, const Tensor& b, const char* op) {
  check_defined(a, op, "a");
  check_defined(b, op, "b");
  BL_CHECK(a.dtype() == b.dtype(), op, ": operands a (", a.str(), ") and b (", b.str(),
           ") must have the same dtype (use cast)");
  check_same_device(a, b, op, "a", "b");
  check_device_usable(a.device(), op);
}

Tensor run_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_op_name(op);
  check_binary_operands(a, b, name);
  bool ok = a.dtype() == DType::f32 ||
            ((a.dtype() == DType::i32 || a.dtype() == DType::i64) && binary_op_supports_int(op));
  BL_CHECK(ok, name, ": operands have dtype ", dtype_name(a.dtype()), "; expected ",
           binary_op_supports_int(op) ? "f32, i32 or i64" : "f32");
  Broadcast2 bc = broadcast2(a, b, name);
  Tensor out = Tensor::empty(bc.shape, a.dtype(), a.device());
  int64_t n = out.numel();
  if (n == 0) return out;
  if (op == BinaryOp::pow && a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous()) {
    // pow of equal shapes through the shared math map (same bits as binary_f32).
    const float* x = static_cast<const float*>(a.raw_data());
    const float* y = static_cast<const float*>(b.raw_data());
    float* o = static_cast<float*>(out.raw_data());
    dispatch::math_map(a.device(), MathFn::pow, x, y, o, n);
    return out;
  }
  dispatch::binary(a.device(), op, a.dtype(), a.raw_data(), bc.views[0], b.raw_data(), bc.views[1],
                   out.raw_data(), n);
  return out;
}

Tensor run_compare(CompareOp op, const Tensor& a, const Tensor& b) {
  const char* name = compare_op_name(op);
  check_binary_operands(a, b, name);
  Broadcast2 bc = broadcast2(a, b, name);
  Tensor out = Tensor::empty(bc.shape, DType::boolean, a.device());
  int64_t n = out.numel();
  if (n == 0) return out;
  uint8_t* o = static_cast<uint8_t*>(out.raw_data());
  dispatch::compare(a.device(), op, a.dtype(), a.raw_data(), bc.views[0], b.raw_data(), bc.views[1], o, n);
  return out;
}

}  // namespace

Tensor exp(const Tensor& x) { return run_unary(UnaryOp::exp, x); }
Tensor expm1(const Tensor& x) { return run_unary(UnaryOp::expm1, x); }
Tensor log(const Tensor& x) { return run_unary(UnaryOp::log, x); }
Tensor log1p(const Tensor& x) { return run_unary(UnaryOp::log1p, x); }
Tensor log2(const Tensor& x) { return run_unary(UnaryOp::log2, x); }
Tensor tanh(const Tensor& x) { return run_unary(UnaryOp::tanh, x); }
Tensor sigmoid(const Tensor& x) { return run_unary(UnaryOp::sigmoid, x); }
Tensor erf(const Tensor& x) { return run_unary(UnaryOp::erf, x); }
Tensor gelu(const Tensor& x) { return run_unary(UnaryOp::gelu, x); }
Tensor gelu_tanh(const Tensor& x) { return run_unary(UnaryOp::gelu_tanh, x); }
Tensor silu(const Tensor& x) { return run_unary(UnaryOp::silu, x); }
Tensor softplus(const Tensor& x) { return run_unary(UnaryOp::softplus, x); }
Tensor sin(const Tensor& x) { return run_unary(UnaryOp::sin, x); }
Tensor cos(const Tensor& x) { return run_unary(UnaryOp::cos, x); }
Tensor rsqrt(const Tensor& x) { return run_unary(UnaryOp::rsqrt, x); }
Tensor abs(const Tensor& x) { return run_unary(UnaryOp::abs, x); }
Tensor neg(const Tensor& x) { return run_unary(UnaryOp::neg, x); }
Tensor sqrt(const Tensor& x) { return run_unary(UnaryOp::sqrt, x); }
Tensor relu(const Tensor& x) { return run_unary(UnaryOp::relu, x); }
Tensor square(const Tensor& x) { return run_unary(UnaryOp::square, x); }
Tensor reciprocal(const Tensor& x) { return run_unary(UnaryOp::reciprocal, x); }
Tensor sign(const Tensor& x) { return run_unary(UnaryOp::sign, x); }
Tensor floor(const Tensor& x) { return run_unary(UnaryOp::floor, x); }
Tensor ceil(const Tensor& x) { return run_unary(UnaryOp::ceil, x); }
Tensor round(const Tensor& x) { return run_unary(UnaryOp::round, x); }

Tensor logical_not(const Tensor& x) {
  check_defined(x, "logical_not", "x");
  return eq(x, Tensor::zeros({}, x.dtype(), x.device()));
}

Tensor add(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::div, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::minimum, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::pow, a, b); }

Tensor eq(const Tensor& a, const Tensor& b) { return run_compare(CompareOp::eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return run_compare(CompareOp::ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return run_compare(CompareOp::lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return run_compare(CompareOp::le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return run_compare(CompareOp::gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return run_compare(CompareOp::ge, a, b); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined(cond, "where", "cond");
  check_binary_operands(a, b, "where");
  BL_CHECK(cond.dtype() == DType::boolean, "where: operand cond must be bool, got ", cond.str());
  check_same_device(cond, a, "where", "cond", "a");
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  auto views = make_views(shape,
                          {broadcast_strides(cond, shape), broadcast_strides(a, shape),
                           broadcast_strides(b, shape)},
                          "where");
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());
  int64_t n = out.numel();
  if (n == 0) return out;
  const uint8_t* c = static_cast<const uint8_t*>(cond.raw_data());
  dispatch::where(a.device(), a.element_size(), c, views[0], a.raw_data(), views[1], b.raw_data(), views[2],
                  out.raw_data(), n);
  return out;
}

Tensor cast(const Tensor& x, DType dtype) {
  check_defined(x, "cast", "x");
  check_device_usable(x.device(), "cast");
  Tensor out = Tensor::empty(x.shape(), dtype, x.device());
  int64_t n = out.numel();
  if (n == 0) return out;
  auto views = make_views(x.shape(), {x.strides()}, "cast");
  dispatch::cast(x.device(), x.dtype(), dtype, x.raw_data(), views[0], out.raw_data(), n);
  return out;
}

}  // namespace bl
