// registry.cpp: the kernel approximation estimators (see src/ml/registry.h).
#include "ml/kernel_approximation/kernel_approximation.h"
#include "ml/registry.h"

namespace bl::ml {

void add_kernel_approximation_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"nystroem", make_nystroem});
  out.push_back({"rbf_sampler", make_rbf_sampler});
}

}  // namespace bl::ml
