// linear_svm.h: factories of the linear support vector machines (linear_svm.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_linear_svc();
std::unique_ptr<Estimator> make_linear_svr();

}  // namespace bl::ml
