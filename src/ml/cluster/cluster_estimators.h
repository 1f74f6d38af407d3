// cluster_estimators.h: factories of the exact host-side clusterers (agglomerative.cpp,
// mean_shift.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_agglomerative_clustering();
std::unique_ptr<Estimator> make_mean_shift();
std::unique_ptr<Estimator> make_spectral_clustering();  // spectral.cpp

}  // namespace bl::ml
