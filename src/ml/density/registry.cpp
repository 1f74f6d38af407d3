// registry.cpp: the density estimators (see src/ml/registry.h).
#include "ml/density/kernel_density.h"
#include "ml/registry.h"

namespace bl::ml {

void add_density_estimators(std::vector<EstimatorEntry>& out) { out.push_back({"kernel_density", make_kernel_density}); }

}  // namespace bl::ml
