// svm.h: factories of the support vector machines (svm.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_svc();
std::unique_ptr<Estimator> make_svr();
std::unique_ptr<Estimator> make_nu_svc();
std::unique_ptr<Estimator> make_nu_svr();
std::unique_ptr<Estimator> make_one_class_svm();

}  // namespace bl::ml
