// cart_builder.h: grows one CART tree (classification or regression) on host data.
//
// Split search (fixed order, documented in docs/ml-trees.md):
//   * candidate features are visited in ascending index, or, when max_features < n_features, in the
//     order of a Philox permutation drawn for the node; drawn constant features do not count
//     against max_features;
//   * for one feature the node's rows are sorted by (value, row index) and every boundary between
//     two distinct values that leaves min_samples_leaf rows on each side is a candidate, scanned in
//     ascending order; the threshold is the midpoint of the two values (the lower value when the
//     midpoint rounds up to the upper one);
//   * the best split maximises the impurity proxy; ties go to the feature visited first, then to
//     the lowest threshold (a later candidate must be strictly better).
// Classification counts are exact integers (int64; binary64 sums in the same order with real sample
// weights, see CartData::sample_weight); the gini proxy sum(c^2)/w is then formed in
// float64, entropy uses the contract's log; regression sums run in float64 in sorted order. Every
// sum has a fixed order, so the tree is the same for every thread count.
#pragma once

#include <cstdint>

#include "ml/tree/tree_model.h"

namespace bl::ml {

enum class Criterion { gini, entropy, squared_error };

struct CartParams {
  Criterion criterion = Criterion::gini;
  int64_t max_depth = -1;  // -1: unlimited
  int64_t min_samples_split = 2;
  int64_t min_samples_leaf = 1;
  int64_t max_features = 0;  // features searched per node; 0 or >= n_features: all
  bool random_thresholds = false;  // extra trees: one Philox threshold per feature
  uint64_t seed = 0;
  uint64_t stream = 0;  // distinguishes the trees of an ensemble
  bool parallel = true;  // search features on the default thread pool
};

struct CartData {
  const float* X = nullptr;  // [n, d] row-major, finite
  int64_t n = 0, d = 0;
  const int32_t* y_class = nullptr;  // classification: class index per row
  int64_t n_classes = 0;
  const float* y_value = nullptr;  // regression
  const uint32_t* weight = nullptr;  // integer sample weights (bootstrap counts); null: all 1
  // Real sample weights (>= 0; a row's weight is its count times this), or null. With them the
  // weight sums run in binary64 in the same fixed order (gini's sum of squares too, updated per
  // row); without them every sum is an exact integer as before.
  const float* sample_weight = nullptr;
};

// Grows the tree; leaf values are class fractions (n_values = n_classes) or means (n_values = 1).
Tree build_cart(const CartData& data, const CartParams& params);

// Criterion from its name ("gini", "entropy", "log_loss", "squared_error"); bl::Error otherwise.
Criterion criterion_from_name(const std::string& est, const std::string& name);
const char* criterion_name(Criterion c);

}  // namespace bl::ml
