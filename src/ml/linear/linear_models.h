// linear_models.h: the coefficients of a fitted bayesian_ridge or logistic_regression (neither is a
// HasLinearView estimator), for linear_view (linear_regressors.cpp).
#pragma once

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/linear.h"

namespace bl::ml {

// The coefficients of a fitted bayesian_ridge; false if est is not one.
bool bayesian_ridge_view(const Estimator& est, LinearView& out);
// The coefficients of a fitted logistic_regression, or nullptr-like empty view if est is not one.
bool logistic_view(const Estimator& est, LinearView& out);

}  // namespace bl::ml
