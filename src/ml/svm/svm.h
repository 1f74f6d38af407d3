// svm.h: factories of the support vector machines (svm.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_svc();
std::unique_ptr<Estimator> make_svr();

}  // namespace bl::ml
