// registry.cpp: the gaussian process estimators (see src/ml/registry.h).
#include "ml/gaussian_process/gp_classifier.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/registry.h"

namespace bl::ml {

void add_gaussian_process_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"gaussian_process_regressor", make_gaussian_process_regressor});
  out.push_back({"gaussian_process_classifier", make_gaussian_process_classifier});
}

}  // namespace bl::ml
