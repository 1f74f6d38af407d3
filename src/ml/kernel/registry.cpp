// registry.cpp: the kernel estimators (see src/ml/registry.h).
#include "ml/kernel/kernel_ridge.h"
#include "ml/registry.h"

namespace bl::ml {

void add_kernel_estimators(std::vector<EstimatorEntry>& out) { out.push_back({"kernel_ridge", make_kernel_ridge}); }

}  // namespace bl::ml
