// registry.h: the estimator families; each appends its estimators in src/ml/<family>/registry.cpp.
#pragma once

#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

void add_linear_estimators(std::vector<EstimatorEntry>& out);         // src/ml/linear/
void add_cluster_estimators(std::vector<EstimatorEntry>& out);        // src/ml/cluster/
void add_neighbors_estimators(std::vector<EstimatorEntry>& out);      // src/ml/neighbors/
void add_decomposition_estimators(std::vector<EstimatorEntry>& out);  // src/ml/decomposition/
void add_tree_estimators(std::vector<EstimatorEntry>& out);           // src/ml/tree/ (trees, forests, bagging, ...)
void add_boosting_estimators(std::vector<EstimatorEntry>& out);       // src/ml/boosting/
void add_naive_bayes_estimators(std::vector<EstimatorEntry>& out);    // src/ml/naive_bayes/
void add_discriminant_estimators(std::vector<EstimatorEntry>& out);   // src/ml/discriminant/
void add_kernel_estimators(std::vector<EstimatorEntry>& out);         // src/ml/kernel/
void add_mixture_estimators(std::vector<EstimatorEntry>& out);        // src/ml/mixture/
void add_density_estimators(std::vector<EstimatorEntry>& out);        // src/ml/density/
void add_kernel_approximation_estimators(std::vector<EstimatorEntry>& out);  // src/ml/kernel_approximation/
void add_svm_estimators(std::vector<EstimatorEntry>& out);            // src/ml/svm/
void add_gaussian_process_estimators(std::vector<EstimatorEntry>& out);  // src/ml/gaussian_process/
void add_neural_estimators(std::vector<EstimatorEntry>& out);           // src/ml/neural/ (multi-layer perceptrons)

// Every registered estimator, in family order.
const std::vector<EstimatorEntry>& estimator_registry();

}  // namespace bl::ml
