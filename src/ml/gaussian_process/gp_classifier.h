// gp_classifier.h: gaussian_process_classifier (gp_classifier.cpp), the Laplace-approximation
// Gaussian process classifier; kernel expressions of gp_kernel_expr.h.
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_gaussian_process_classifier();

}  // namespace bl::ml
