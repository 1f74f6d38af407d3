// unsupervised_fit.h: the input check that opens fit in the estimators that learn from X alone
// (decomposition and manifold).
#pragma once

#include <cstdint>
#include <string>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"

namespace bl::ml {

// Checks X; a y given with it (the command line's --target) is checked against X and ignored. With
// min_rows > 0, X must also have at least min_rows rows.
inline void check_unsupervised_X(const std::string& est, const Tensor& X, const Tensor& y, int64_t min_rows = 0) {
  if (y.defined()) check_Xy(est, X, y);
  else check_X(est, X);
  BL_CHECK(X.dim(0) >= min_rows, est, ": X needs at least ", min_rows, " rows, got n_samples=", X.dim(0));
}

}  // namespace bl::ml
