// registry.cpp: the neighbors estimators (see src/ml/registry.h).
#include "ml/neighbors/kneighbors.h"
#include "ml/registry.h"

namespace bl::ml {

void add_neighbors_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"kneighbors_classifier", make_kneighbors_classifier});
  out.push_back({"kneighbors_regressor", make_kneighbors_regressor});
  out.push_back({"nearest_centroid", make_nearest_centroid});
}

}  // namespace bl::ml
