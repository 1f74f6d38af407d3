// registry.cpp: the registry table, one entry per line of ml/estimator_list.h (see registry.h).
#include "ml/registry.h"

namespace bl::ml {

const std::vector<EstimatorEntry>& estimator_registry() {
  static const std::vector<EstimatorEntry> entries = {
#define BL_ML_ESTIMATOR(name) {#name, make_##name},
#include "ml/estimator_list.h"
#undef BL_ML_ESTIMATOR
  };
  return entries;
}

}  // namespace bl::ml
