// ml/decomposition.h, ml/cluster and ml/neighbors estimators of bitlearn (by name through
// bl::ml::make_estimator):
//
//   pca                    n_components=0 (all), whiten=false   covariance GEMM + cyclic Jacobi; each
//                                                               component's largest |entry| positive
//   kmeans                 n_clusters=8, init=k-means++|random, max_iter=300, tol=1e-4, random_state=0
//   minibatch_kmeans       n_clusters=8, batch_size=1024, max_iter=100 (passes), max_no_improvement=10,
//                          random_state=0
//   kneighbors_classifier  n_neighbors=5, weights=uniform|distance   exact, ties to the lowest index
//   kneighbors_regressor   n_neighbors=5, weights=uniform|distance
//
// k-means predict gives i64 cluster ids, transform the distances to the centers, score minus the
// inertia. PCA transform gives [n, n_components]. Distances and covariances are contract GEMMs, so
// every one of these runs on CPU (any threads) and CUDA with the same bits.
#pragma once

#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

// A fitted PCA: components [n_components, n_features] row-major, their variances and ratios,
// and the column means.
struct PcaView {
  std::vector<float> components, explained_variance, explained_variance_ratio, mean;
  int64_t n_components = 0, n_features = 0;
};
// The fitted state of a pca estimator; throws bl::Error for another estimator or before fit.
PcaView pca_view(const Estimator& est);

}  // namespace bl::ml
