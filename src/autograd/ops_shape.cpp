// ops_shape.cpp: differentiable views, copies, embedding lookup and constant masks.
#include "autograd/grad_util.h"
#include "bitlearn/autograd.h"
#include "core/error.h"

namespace bl::ag {

Var reshape(const Var& x, const Shape& shape) {
  Shape s = x.shape();
  return record("reshape", x.value().reshape(shape), {x},
                [s](const Tensor& g) { return std::vector<Tensor>{g.reshape(s)}; });
}

Var permute(const Var& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i] < 0 ? dims[i] + static_cast<int64_t>(dims.size()) : dims[i];
    BL_CHECK(d >= 0 && d < static_cast<int64_t>(dims.size()), "permute: bad dimension ", dims[i]);
    inverse[d] = static_cast<int64_t>(i);
  }
  return record("permute", x.value().permute(dims).contiguous(), {x}, [inverse](const Tensor& g) {
    return std::vector<Tensor>{g.permute(inverse).contiguous()};
  });
}

Var slice(const Var& x, int64_t dim, int64_t start, int64_t end) {
  Tensor xv = x.value();
  Shape s = xv.shape();
  Device dev = xv.device();
  return record("slice", xv.slice(dim, start, end), {x}, [s, dev, dim, start, end](const Tensor& g) {
    Tensor z = Tensor::zeros(s, DType::f32, dev);
    Tensor part = z.slice(dim, start, end);
    copy_into(part, g);
    return std::vector<Tensor>{z};
  });
}

Var concat(const std::vector<Var>& xs, int64_t dim) {
  BL_CHECK(!xs.empty(), "concat: no inputs");
  std::vector<Tensor> values;
  std::vector<int64_t> extents;
  for (const Var& x : xs) {
    values.push_back(x.value());
  }
  int64_t d = dim < 0 ? dim + values[0].ndim() : dim;
  for (const Tensor& v : values) extents.push_back(v.shape()[d]);
  return record("concat", bl::concat(values, d), xs, [extents, d](const Tensor& g) {
    std::vector<Tensor> r;
    int64_t at = 0;
    for (int64_t e : extents) {
      r.push_back(g.slice(d, at, at + e).contiguous());
      at += e;
    }
    return r;
  });
}

Var embedding(const Var& weight, const Tensor& ids) {
  int64_t rows = weight.value().dim(0);
  return record("embedding", bl::embedding(weight.value(), ids), {weight},
                [ids, rows](const Tensor& g) {
                  return std::vector<Tensor>{bl::embedding_backward(g, ids, rows)};
                });
}

Var mul_constant(const Var& x, const Tensor& mask) {
  return record("mul_constant", bl::mul(x.value(), mask), {x}, [mask](const Tensor& g) {
    return std::vector<Tensor>{bl::mul(g, mask)};
  });
}

}  // namespace bl::ag
