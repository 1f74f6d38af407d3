// naive_bayes.h: factories of the naive Bayes family (naive_bayes.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_gaussian_nb();
std::unique_ptr<Estimator> make_multinomial_nb();
std::unique_ptr<Estimator> make_complement_nb();
std::unique_ptr<Estimator> make_bernoulli_nb();
std::unique_ptr<Estimator> make_categorical_nb();

}  // namespace bl::ml
