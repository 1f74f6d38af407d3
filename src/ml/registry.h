// registry.h: the factory of every estimator (one per line of ml/estimator_list.h) and the registry
// built from them (registry.cpp).
#pragma once

#include <memory>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

#define BL_ML_ESTIMATOR(name) std::unique_ptr<Estimator> make_##name();
#include "ml/estimator_list.h"
#undef BL_ML_ESTIMATOR

// Every registered estimator, in the order of ml/estimator_list.h.
const std::vector<EstimatorEntry>& estimator_registry();

}  // namespace bl::ml
