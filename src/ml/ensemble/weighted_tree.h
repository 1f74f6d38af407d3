// weighted_tree.h: a classification tree on real-valued sample weights (AdaBoost's SAMME).
//
// Same fixed search order as cart_builder.h (features ascending, rows sorted by (value, row index),
// candidate thresholds ascending, midpoints, strictly better wins), with the weighted gini proxy
// sum_c W_lc^2 / W_l + sum_c W_rc^2 / W_r formed from float64 class weights summed in the sorted
// order. Leaves hold the weighted class fractions.
#pragma once

#include <cstdint>
#include <vector>

#include "ml/tree/tree_model.h"

namespace bl::ml {

// X host [n, d] (finite), y class indices in [0, n_classes), w >= 0 (rows of weight 0 are left
// out). max_depth -1: unlimited.
Tree build_weighted_tree(const float* X, int64_t n, int64_t d, const int32_t* y, int64_t n_classes,
                         const std::vector<double>& w, int64_t max_depth, int64_t min_samples_leaf);

}  // namespace bl::ml
