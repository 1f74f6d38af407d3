// kernel_density.h: the density family (kernel_density.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_kernel_density();

}  // namespace bl::ml
