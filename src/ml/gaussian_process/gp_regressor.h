// gp_regressor.h: the gaussian process family (gp_regressor.cpp); kernel expressions in
// gp_kernel_expr.h.
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_gaussian_process_regressor();

// The predictive standard deviation of a fitted gaussian_process_regressor at the rows of X (f32
// [m] on X's device); any other estimator is a bl::Error.
Tensor gaussian_process_predict_std(const Estimator& est, const Tensor& X);

}  // namespace bl::ml
