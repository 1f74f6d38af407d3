// tree_estimators.h: decision trees, random forests and extra trees (classifier and regressor),
// all one estimator class configured by its kind (see include/bitlearn/ml/tree.h for parameters).
#pragma once

#include <memory>

#include "bitlearn/ml/estimator.h"
#include "ml/tree/tree_model.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_decision_tree_classifier();
std::unique_ptr<Estimator> make_decision_tree_regressor();
std::unique_ptr<Estimator> make_extra_tree_classifier();
std::unique_ptr<Estimator> make_extra_tree_regressor();
std::unique_ptr<Estimator> make_random_forest_classifier();
std::unique_ptr<Estimator> make_random_forest_regressor();
std::unique_ptr<Estimator> make_extra_trees_classifier();
std::unique_ptr<Estimator> make_extra_trees_regressor();

// Sum of the trees' value vectors for every row of X (host f32 [n, d]), in tree order, each sum
// divided by the number of trees: forest averaging. Rows run in parallel; each row's order is fixed.
std::vector<float> average_tree_values(const std::vector<Tree>& trees, int64_t n_values,
                                       const float* X, int64_t n, int64_t d);

}  // namespace bl::ml
