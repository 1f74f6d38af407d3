// gaussian_mixture.h: factory of the mixture family (gaussian_mixture.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_gaussian_mixture();

}  // namespace bl::ml
