// ops_math.cpp: differentiable elementwise ops, reductions, softmax and matmul.
//
// Each backward rule is a fixed sequence of bitlearn ops, so its bits are the same on every device.
#include <algorithm>

#include "autograd/grad_util.h"
#include "bitlearn/autograd.h"
#include "core/error.h"

namespace bl::ag {

Tensor scalar_like(const Tensor& x, double v) { return Tensor::scalar(v, DType::f32, x.device()); }

Tensor reduce_to_shape(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  int64_t lead = g.ndim() - static_cast<int64_t>(shape.size());
  BL_CHECK(lead >= 0, "autograd: gradient of shape ", shape_str(g.shape()),
           " cannot be reduced to ", shape_str(shape));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.ndim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[d - lead] == 1 && g.shape()[d] != 1) {
      dims.push_back(d);
    }
  }
  Tensor s = dims.empty() ? g : bl::sum(g, dims, true);
  return s.reshape(shape);
}

namespace {

std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
  } else {
    for (int64_t d : dims) out.push_back(d < 0 ? d + ndim : d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Broadcasts the gradient of a reduction back over the reduced dims.
Tensor expand_reduced(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims,
                      bool keepdim) {
  Tensor t = g;
  if (!keepdim) {
    std::vector<int64_t> nd = normalize_dims(dims, static_cast<int64_t>(in_shape.size()));
    Shape kept = in_shape;
    for (int64_t d : nd) kept[d] = 1;
    t = t.reshape(kept);
  }
  return t.expand(in_shape);
}

}  // namespace

Var add(const Var& a, const Var& b) {
  Shape sa = a.shape(), sb = b.shape();
  return record("add", bl::add(a.value(), b.value()), {a, b}, [sa, sb](const Tensor& g) {
    return std::vector<Tensor>{reduce_to_shape(g, sa), reduce_to_shape(g, sb)};
  });
}

Var sub(const Var& a, const Var& b) {
  Shape sa = a.shape(), sb = b.shape();
  return record("sub", bl::sub(a.value(), b.value()), {a, b}, [sa, sb](const Tensor& g) {
    return std::vector<Tensor>{reduce_to_shape(g, sa), reduce_to_shape(bl::neg(g), sb)};
  });
}

Var mul(const Var& a, const Var& b) {
  Tensor av = a.value(), bv = b.value();
  bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("mul", bl::mul(av, bv), {a, b}, [av, bv, ga, gb](const Tensor& g) {
    std::vector<Tensor> r(2);
    if (ga) r[0] = reduce_to_shape(bl::mul(g, bv), av.shape());
    if (gb) r[1] = reduce_to_shape(bl::mul(g, av), bv.shape());
    return r;
  });
}

Var div(const Var& a, const Var& b) {
  Tensor av = a.value(), bv = b.value();
  Tensor y = bl::div(av, bv);
  bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("div", y, {a, b}, [av, bv, y, ga, gb](const Tensor& g) {
    std::vector<Tensor> r(2);
    Tensor gq = bl::div(g, bv);
    if (ga) r[0] = reduce_to_shape(gq, av.shape());
    if (gb) r[1] = reduce_to_shape(bl::neg(bl::mul(gq, y)), bv.shape());
    return r;
  });
}

Var neg(const Var& x) {
  return record("neg", bl::neg(x.value()), {x},
                [](const Tensor& g) { return std::vector<Tensor>{bl::neg(g)}; });
}

Var scale(const Var& x, float s) {
  Tensor sv = scalar_like(x.value(), s);
  return record("scale", bl::mul(x.value(), sv), {x},
                [sv](const Tensor& g) { return std::vector<Tensor>{bl::mul(g, sv)}; });
}

Var add_scalar(const Var& x, float s) {
  return record("add_scalar", bl::add(x.value(), scalar_like(x.value(), s)), {x},
                [](const Tensor& g) { return std::vector<Tensor>{g}; });
}

Var relu(const Var& x) {
  Tensor xv = x.value();
  return record("relu", bl::relu(xv), {x}, [xv](const Tensor& g) {
    Tensor zero = scalar_like(g, 0.0);
    return std::vector<Tensor>{bl::where(bl::gt(xv, zero), g, zero)};
  });
}

Var tanh(const Var& x) {
  Tensor y = bl::tanh(x.value());
  return record("tanh", y, {x}, [y](const Tensor& g) {
    Tensor d = bl::sub(scalar_like(y, 1.0), bl::square(y));
    return std::vector<Tensor>{bl::mul(g, d)};
  });
}

Var sigmoid(const Var& x) {
  Tensor y = bl::sigmoid(x.value());
  return record("sigmoid", y, {x}, [y](const Tensor& g) {
    Tensor d = bl::mul(y, bl::sub(scalar_like(y, 1.0), y));
    return std::vector<Tensor>{bl::mul(g, d)};
  });
}

Var gelu(const Var& x) {
  Tensor xv = x.value();
  return record("gelu", bl::gelu(xv), {x}, [xv](const Tensor& g) {
    // d/dx x Phi(x) = Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
    // phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
    const double inv_sqrt2 = 0.70710678118654752440;
    const double inv_sqrt_2pi = 0.39894228040143267794;
    Tensor cdf = bl::mul(scalar_like(xv, 0.5),
                         bl::add(scalar_like(xv, 1.0), bl::erf(bl::mul(xv, scalar_like(xv, inv_sqrt2)))));
    Tensor pdf = bl::mul(bl::exp(bl::mul(bl::square(xv), scalar_like(xv, -0.5))),
                         scalar_like(xv, inv_sqrt_2pi));
    Tensor d = bl::add(cdf, bl::mul(xv, pdf));
    return std::vector<Tensor>{bl::mul(g, d)};
  });
}

Var silu(const Var& x) {
  Tensor xv = x.value();
  return record("silu", bl::silu(xv), {x}, [xv](const Tensor& g) {
    // d/dx x s(x) = s (1 + x (1 - s)).
    Tensor s = bl::sigmoid(xv);
    Tensor one = scalar_like(xv, 1.0);
    Tensor d = bl::mul(s, bl::add(one, bl::mul(xv, bl::sub(one, s))));
    return std::vector<Tensor>{bl::mul(g, d)};
  });
}

Var exp(const Var& x) {
  Tensor y = bl::exp(x.value());
  return record("exp", y, {x}, [y](const Tensor& g) { return std::vector<Tensor>{bl::mul(g, y)}; });
}

Var log(const Var& x) {
  Tensor xv = x.value();
  return record("log", bl::log(xv), {x},
                [xv](const Tensor& g) { return std::vector<Tensor>{bl::div(g, xv)}; });
}

Var square(const Var& x) {
  Tensor xv = x.value();
  return record("square", bl::square(xv), {x}, [xv](const Tensor& g) {
    return std::vector<Tensor>{bl::mul(g, bl::mul(xv, scalar_like(xv, 2.0)))};
  });
}

Var sqrt(const Var& x) {
  Tensor y = bl::sqrt(x.value());
  return record("sqrt", y, {x}, [y](const Tensor& g) {
    return std::vector<Tensor>{bl::div(bl::mul(g, scalar_like(y, 0.5)), y)};
  });
}

Var rsqrt(const Var& x) {
  Tensor y = bl::rsqrt(x.value());
  return record("rsqrt", y, {x}, [y](const Tensor& g) {
    // d/dx x^-1/2 = -x^-3/2 / 2 = -y^3 / 2.
    Tensor d = bl::mul(bl::mul(bl::square(y), y), scalar_like(y, -0.5));
    return std::vector<Tensor>{bl::mul(g, d)};
  });
}

Var sum(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  Shape s = x.shape();
  return record("sum", bl::sum(x.value(), dims, keepdim), {x}, [s, dims, keepdim](const Tensor& g) {
    return std::vector<Tensor>{expand_reduced(g, s, dims, keepdim)};
  });
}

Var mean(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  Shape s = x.shape();
  int64_t n = 1;
  for (int64_t d : normalize_dims(dims, x.value().ndim())) n *= s[d];
  return record("mean", bl::mean(x.value(), dims, keepdim), {x},
                [s, dims, keepdim, n](const Tensor& g) {
                  Tensor gd = bl::div(g, scalar_like(g, static_cast<double>(n)));
                  return std::vector<Tensor>{expand_reduced(gd, s, dims, keepdim)};
                });
}

Var softmax(const Var& x, int64_t dim) {
  Tensor y = bl::softmax(x.value(), dim);
  return record("softmax", y, {x}, [y, dim](const Tensor& g) {
    Tensor dot = bl::sum(bl::mul(g, y), {dim}, true);
    return std::vector<Tensor>{bl::mul(y, bl::sub(g, dot))};
  });
}

Var log_softmax(const Var& x, int64_t dim) {
  Tensor y = bl::log_softmax(x.value(), dim);
  return record("log_softmax", y, {x}, [y, dim](const Tensor& g) {
    Tensor gs = bl::sum(g, {dim}, true);
    return std::vector<Tensor>{bl::sub(g, bl::mul(bl::exp(y), gs))};
  });
}

namespace {

// The gradients of op(a) x op(b) under the product `mm` (bl::matmul or bl::bmm, the same transposes):
// each is one product of g with the other operand, the transposes chosen so that nothing is copied;
// an operand without requires_grad gets none.
std::vector<Tensor> product_grads(Tensor (*mm)(const Tensor&, const Tensor&, bool, bool), const Tensor& g,
                                  const Tensor& av, const Tensor& bv, bool ga, bool gb, bool trans_a, bool trans_b) {
  std::vector<Tensor> r(2);
  if (!trans_a && !trans_b) {
    if (ga) r[0] = mm(g, bv, false, true);
    if (gb) r[1] = mm(av, g, true, false);
  } else if (!trans_a && trans_b) {
    if (ga) r[0] = mm(g, bv, false, false);
    if (gb) r[1] = mm(g, av, true, false);
  } else if (trans_a && !trans_b) {
    if (ga) r[0] = mm(bv, g, false, true);
    if (gb) r[1] = mm(av, g, false, false);
  } else {
    if (ga) r[0] = mm(bv, g, true, true);
    if (gb) r[1] = mm(g, av, true, true);
  }
  return r;
}

}  // namespace

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  Tensor av = a.value(), bv = b.value();
  bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("matmul", bl::matmul(av, bv, trans_a, trans_b), {a, b},
                [av, bv, ga, gb, trans_a, trans_b](const Tensor& g) {
                  return product_grads(bl::matmul, g, av, bv, ga, gb, trans_a, trans_b);
                });
}

Var amax(const Var& x, int64_t dim) {
  Tensor xv = x.value();
  int64_t d = dim < 0 ? dim + xv.ndim() : dim;
  return record("amax", bl::amax(xv, {d}, false), {x}, [xv, d](const Tensor& g) {
    Tensor idx = bl::argmax(xv, d, true);
    Shape ar_shape(static_cast<size_t>(xv.ndim()), 1);
    ar_shape[d] = xv.shape()[d];
    Tensor ar = Tensor::arange(xv.shape()[d], DType::i64, xv.device()).reshape(ar_shape);
    Tensor hit = bl::eq(ar, idx);
    Tensor gk = g.unsqueeze(d);
    return std::vector<Tensor>{bl::where(hit, gk, scalar_like(g, 0.0))};
  });
}

}  // namespace bl::ag

namespace bl::ag {

Var bmm(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  Tensor av = a.value(), bv = b.value();
  BL_CHECK(av.ndim() == 3 && bv.ndim() == 3 && av.dim(0) == bv.dim(0),
           "ag::bmm: operands must be 3-d with one batch extent, got ", av.str(), " and ", bv.str());
  bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("bmm", bl::bmm(av, bv, trans_a, trans_b), {a, b},
                [av, bv, ga, gb, trans_a, trans_b](const Tensor& g) {
                  return product_grads(bl::bmm, g, av, bv, ga, gb, trans_a, trans_b);
                });
}

}  // namespace bl::ag

namespace bl::ag {

Var abs(const Var& x) {
  Tensor xv = x.value();
  return record("abs", bl::abs(xv), {x}, [xv](const Tensor& g) {
    Tensor zero = scalar_like(xv, 0.0);
    Tensor s = bl::where(bl::eq(xv, zero), zero, bl::sign(xv));
    return std::vector<Tensor>{bl::mul(g, s)};
  });
}

}  // namespace bl::ag
