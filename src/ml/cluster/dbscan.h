// dbscan.h: the density-based clusterer of the cluster family (dbscan.cpp).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_dbscan();

}  // namespace bl::ml
