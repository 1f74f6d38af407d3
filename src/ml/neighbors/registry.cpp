// registry.cpp: the neighbors estimators (see src/ml/registry.h).
#include "ml/neighbors/kneighbors.h"
#include "ml/registry.h"

namespace bl::ml {

void add_neighbors_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"kneighbors_classifier", make_kneighbors_classifier});
  out.push_back({"kneighbors_regressor", make_kneighbors_regressor});
  out.push_back({"nearest_neighbors", make_nearest_neighbors});
  out.push_back({"nearest_centroid", make_nearest_centroid});
  out.push_back({"radius_neighbors_classifier", make_radius_neighbors_classifier});
  out.push_back({"radius_neighbors_regressor", make_radius_neighbors_regressor});
  out.push_back({"local_outlier_factor", make_local_outlier_factor});
}

}  // namespace bl::ml
