// kernel_approximation.h: the kernel approximation family (rbf_sampler.cpp, nystroem.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_rbf_sampler();
std::unique_ptr<Estimator> make_nystroem();

}  // namespace bl::ml
