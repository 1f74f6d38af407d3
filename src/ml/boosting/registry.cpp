// registry.cpp: the boosting estimators (see src/ml/registry.h).
#include "ml/registry.h"

namespace bl::ml {

void add_boosting_estimators(std::vector<EstimatorEntry>& out) {
  (void)out;
}

}  // namespace bl::ml
