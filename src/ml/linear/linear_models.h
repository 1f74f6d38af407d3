// linear_models.h: factories of the linear family (registered in registry.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/linear.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_linear_regression();
std::unique_ptr<Estimator> make_ridge();
std::unique_ptr<Estimator> make_lasso();
std::unique_ptr<Estimator> make_elastic_net();
std::unique_ptr<Estimator> make_logistic_regression();
std::unique_ptr<Estimator> make_bayesian_ridge();
std::unique_ptr<Estimator> make_isotonic_regression();
std::unique_ptr<Estimator> make_sgd_classifier();
std::unique_ptr<Estimator> make_sgd_regressor();
std::unique_ptr<Estimator> make_huber_regressor();
std::unique_ptr<Estimator> make_quantile_regressor();
std::unique_ptr<Estimator> make_poisson_regressor();
std::unique_ptr<Estimator> make_gamma_regressor();
std::unique_ptr<Estimator> make_tweedie_regressor();
std::unique_ptr<Estimator> make_ard_regression();
std::unique_ptr<Estimator> make_lars();
std::unique_ptr<Estimator> make_lasso_lars();
// The coefficients of a fitted bayesian_ridge; false if est is not one.
bool bayesian_ridge_view(const Estimator& est, LinearView& out);
// The coefficients of a fitted logistic_regression, or nullptr-like empty view if est is not one.
bool logistic_view(const Estimator& est, LinearView& out);

}  // namespace bl::ml
