// registry.cpp: the decomposition estimators (see src/ml/registry.h).
#include "ml/registry.h"

namespace bl::ml {

void add_decomposition_estimators(std::vector<EstimatorEntry>& out) {
  (void)out;
}

}  // namespace bl::ml
