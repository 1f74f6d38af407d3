// registry.cpp: the boosting estimators (see src/ml/registry.h).
#include "ml/boosting/boosting_estimators.h"
#include "ml/registry.h"

namespace bl::ml {

void add_boosting_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"hist_gradient_boosting_classifier", make_hist_gradient_boosting_classifier});
  out.push_back({"hist_gradient_boosting_regressor", make_hist_gradient_boosting_regressor});
  out.push_back({"xgboost_model", make_xgboost_model});
}

}  // namespace bl::ml
