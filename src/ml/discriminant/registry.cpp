// registry.cpp: the discriminant analysis estimators (see src/ml/registry.h).
#include "ml/discriminant/discriminant.h"
#include "ml/registry.h"

namespace bl::ml {

void add_discriminant_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"linear_discriminant_analysis", make_linear_discriminant_analysis});
  out.push_back({"quadratic_discriminant_analysis", make_quadratic_discriminant_analysis});
}

}  // namespace bl::ml
