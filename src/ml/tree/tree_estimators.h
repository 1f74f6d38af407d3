// tree_estimators.h: decision trees, random forests and extra trees (classifier and regressor),
// all one estimator class configured by its kind (see include/bitlearn/ml/tree.h for parameters);
// their factories are declared by ml/registry.h, the forest averaging here.
#pragma once

#include <cstdint>
#include <vector>

#include "ml/tree/tree_model.h"

namespace bl::ml {

// Sum of the trees' value vectors for every row of X (host f32 [n, d]), in tree order, each sum
// divided by the number of trees: forest averaging. Rows run in parallel; each row's order is fixed.
std::vector<float> average_tree_values(const std::vector<Tree>& trees, int64_t n_values,
                                       const float* X, int64_t n, int64_t d);

}  // namespace bl::ml
