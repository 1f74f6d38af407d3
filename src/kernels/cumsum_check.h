// cumsum_check.h: the argument checks both cumsum backends make before they launch work (host only).
#pragma once

#include "core/error.h"
#include "kernels/reduce.h"

namespace bl {

// Throws unless shape is non-negative and, for a non-empty shape, x and y are non-null. Returns
// false when the shape holds no element (nothing to compute), true otherwise.
inline bool cumsum_check_args(const float* x, ReduceShape shape, const float* y) {
  BL_CHECK(shape.outer >= 0 && shape.n >= 0 && shape.inner >= 0,
           "cumsum: shape (outer, n, inner) must be non-negative, got (", shape.outer, ", ", shape.n, ", ",
           shape.inner, ")");
  if (shape.outer * shape.n * shape.inner == 0) return false;
  BL_CHECK(x != nullptr && y != nullptr, "cumsum: input or output pointer is null");
  return true;
}

}  // namespace bl
