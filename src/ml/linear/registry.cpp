// registry.cpp: the linear estimators (see src/ml/registry.h).
#include "ml/linear/linear_models.h"
#include "ml/registry.h"

namespace bl::ml {

void add_linear_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"linear_regression", make_linear_regression});
  out.push_back({"ridge", make_ridge});
  out.push_back({"lasso", make_lasso});
  out.push_back({"elastic_net", make_elastic_net});
  out.push_back({"logistic_regression", make_logistic_regression});
  out.push_back({"bayesian_ridge", make_bayesian_ridge});
  out.push_back({"isotonic_regression", make_isotonic_regression});
  out.push_back({"sgd_classifier", make_sgd_classifier});
  out.push_back({"sgd_regressor", make_sgd_regressor});
  out.push_back({"huber_regressor", make_huber_regressor});
  out.push_back({"quantile_regressor", make_quantile_regressor});
  out.push_back({"ard_regression", make_ard_regression});
  out.push_back({"lars", make_lars});
  out.push_back({"lasso_lars", make_lasso_lars});
  out.push_back({"poisson_regressor", make_poisson_regressor});
  out.push_back({"gamma_regressor", make_gamma_regressor});
  out.push_back({"tweedie_regressor", make_tweedie_regressor});
}

}  // namespace bl::ml
