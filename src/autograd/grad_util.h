// grad_util.h: helpers shared by the backward rules.
#pragma once

#include "bitlearn/tensor.h"

namespace bl::ag {

// A 0-d f32 tensor holding v on x's device.
Tensor scalar_like(const Tensor& x, double v);
// Sums a broadcast gradient g back to shape (over leading dims and dims of extent 1 in shape),
// with the contract reduction.
Tensor reduce_to_shape(const Tensor& g, const Shape& shape);

}  // namespace bl::ag
