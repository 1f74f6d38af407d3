// kneighbors.h: factories of the neighbors family.
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_kneighbors_classifier();
std::unique_ptr<Estimator> make_kneighbors_regressor();
std::unique_ptr<Estimator> make_nearest_neighbors();  // kneighbors.cpp
std::unique_ptr<Estimator> make_nearest_centroid();  // nearest_centroid.cpp
std::unique_ptr<Estimator> make_radius_neighbors_classifier();  // radius_neighbors.cpp
std::unique_ptr<Estimator> make_radius_neighbors_regressor();
std::unique_ptr<Estimator> make_local_outlier_factor();  // local_outlier_factor.cpp

}  // namespace bl::ml
