// registry.cpp: the mixture estimators (see src/ml/registry.h).
#include "ml/mixture/gaussian_mixture.h"
#include "ml/registry.h"

namespace bl::ml {

void add_mixture_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"gaussian_mixture", make_gaussian_mixture});
  out.push_back({"bayesian_gaussian_mixture", make_bayesian_gaussian_mixture});
}

}  // namespace bl::ml
