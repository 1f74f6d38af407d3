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
}

}  // namespace bl::ml
