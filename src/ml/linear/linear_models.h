// linear_models.h: the coefficients of a fitted bayesian_ridge or logistic_regression (neither is a
// HasLinearView estimator), for linear_view (linear_regressors.cpp).
#pragma once

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/linear.h"
#include "core/error.h"

namespace bl::ml {

// The shared body of the two below: est's view() when est is a Model (throwing when it is not
// fitted); false when it is not a Model.
template <class Model>
bool view_if(const Estimator& est, LinearView& out) {
  auto* r = dynamic_cast<const Model*>(&est);
  if (!r) return false;
  BL_CHECK(r->fitted(), est.name(), ": not fitted");
  out = r->view();
  return true;
}

// The coefficients of a fitted bayesian_ridge; false if est is not one.
bool bayesian_ridge_view(const Estimator& est, LinearView& out);
// The coefficients of a fitted logistic_regression, or nullptr-like empty view if est is not one.
bool logistic_view(const Estimator& est, LinearView& out);

}  // namespace bl::ml
