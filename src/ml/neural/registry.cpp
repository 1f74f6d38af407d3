// registry.cpp: the neural-network estimators (see src/ml/registry.h).
#include "ml/neural/mlp_estimators.h"
#include "ml/registry.h"

namespace bl::ml {

void add_neural_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"mlp_classifier", make_mlp_classifier});
  out.push_back({"mlp_regressor", make_mlp_regressor});
}

}  // namespace bl::ml
