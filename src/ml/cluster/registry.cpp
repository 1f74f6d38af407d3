// registry.cpp: the cluster estimators (see src/ml/registry.h).
#include "ml/cluster/cluster_estimators.h"
#include "ml/cluster/dbscan.h"
#include "ml/cluster/density_clustering.h"
#include "ml/cluster/kmeans.h"
#include "ml/registry.h"

namespace bl::ml {

void add_cluster_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"affinity_propagation", make_affinity_propagation});
  out.push_back({"agglomerative_clustering", make_agglomerative_clustering});
  out.push_back({"birch", make_birch});
  out.push_back({"bisecting_kmeans", make_bisecting_kmeans});
  out.push_back({"dbscan", make_dbscan});
  out.push_back({"hdbscan", make_hdbscan});
  out.push_back({"kmeans", make_kmeans});
  out.push_back({"mean_shift", make_mean_shift});
  out.push_back({"minibatch_kmeans", make_minibatch_kmeans});
  out.push_back({"optics", make_optics});
  out.push_back({"spectral_clustering", make_spectral_clustering});
}

}  // namespace bl::ml
