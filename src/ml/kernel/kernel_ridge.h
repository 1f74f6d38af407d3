// kernel_ridge.h: the kernel family (kernel_ridge.cpp); its kernel matrices are in ml/kernel/kernels.h.
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_kernel_ridge();

}  // namespace bl::ml
