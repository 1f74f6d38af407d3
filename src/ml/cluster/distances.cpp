// distances.cpp: see distances.h.
#include "ml/cluster/distances.h"

#include "bitlearn/ops.h"

namespace bl::ml {

Tensor row_sq_norms(const Tensor& X) { return bl::sum(bl::square(X), {1}, true); }

Tensor sq_distances(const Tensor& X, const Tensor& xx, const Tensor& C, const Tensor& cc) {
  Tensor xc = bl::matmul(X, C, false, true);
  Tensor m2 = Tensor::scalar(-2.0, DType::f32, X.device());
  Tensor d = bl::add(bl::add(bl::mul(xc, m2), xx), cc.reshape({1, C.dim(0)}));
  return bl::relu(d);
}

int64_t philox_index(uint32_t word, int64_t n) {
  return static_cast<int64_t>((static_cast<uint64_t>(word) * static_cast<uint64_t>(n)) >> 32);
}

}  // namespace bl::ml
