// registry.cpp: the neighbors estimators (see src/ml/registry.h).
#include "ml/registry.h"

namespace bl::ml {

void add_neighbors_estimators(std::vector<EstimatorEntry>& out) {
  (void)out;
}

}  // namespace bl::ml
