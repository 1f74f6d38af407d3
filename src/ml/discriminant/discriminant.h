// discriminant.h: factories of the discriminant analysis family (discriminant.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_linear_discriminant_analysis();
std::unique_ptr<Estimator> make_quadratic_discriminant_analysis();

}  // namespace bl::ml
