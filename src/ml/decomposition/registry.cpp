// registry.cpp: the decomposition estimators (see src/ml/registry.h).
#include "ml/decomposition/pca.h"
#include "ml/registry.h"

namespace bl::ml {

void add_decomposition_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"pca", make_pca});
}

}  // namespace bl::ml
