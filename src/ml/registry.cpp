// registry.cpp: collects every family's estimators (see registry.h).
#include "ml/registry.h"

namespace bl::ml {

const std::vector<EstimatorEntry>& estimator_registry() {
  static const std::vector<EstimatorEntry> entries = [] {
    std::vector<EstimatorEntry> e;
    add_linear_estimators(e);
    add_cluster_estimators(e);
    add_neighbors_estimators(e);
    add_decomposition_estimators(e);
    add_tree_estimators(e);
    add_boosting_estimators(e);
    add_naive_bayes_estimators(e);
    add_discriminant_estimators(e);
    add_kernel_estimators(e);
    add_mixture_estimators(e);
    add_density_estimators(e);
    add_kernel_approximation_estimators(e);
    add_svm_estimators(e);
    add_gaussian_process_estimators(e);
    add_neural_estimators(e);
    return e;
  }();
  return entries;
}

}  // namespace bl::ml
