// gaussian_mixture.h: factories of the mixture family (gaussian_mixture.cpp,
// bayesian_gaussian_mixture.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_gaussian_mixture();
std::unique_ptr<Estimator> make_bayesian_gaussian_mixture();

}  // namespace bl::ml
