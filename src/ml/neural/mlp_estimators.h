// mlp_estimators.h: factories of the neural-network family (mlp_estimators.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_mlp_classifier();
std::unique_ptr<Estimator> make_mlp_regressor();

}  // namespace bl::ml
