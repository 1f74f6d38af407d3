// tree_shap.h: exact SHAP values of tree ensembles (Lundberg, Erion and Lee 2018, "Consistent
// individualized feature attribution for tree ensembles", Algorithm 2), with the path-dependent
// feature perturbation: a feature outside the coalition follows both children of a split, weighted
// by the training cover (hessian sums or row counts) that the model file stores per node.
//
// Everything is binary64 on the host. One row's values are accumulated tree by tree in the model's
// tree order, and within a tree in a fixed depth-first order (the row's own child first), so they do
// not depend on the thread count; rows are independent tasks of the thread pool.
//
// Output per row and output group k: d feature contributions then the expected value (the base
// margin plus each tree's cover-weighted mean leaf value), columns k * (d + 1) .. k * (d + 1) + d;
// they add up to the group's margin (up to binary64 rounding).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "ml/tree/tree_model.h"

namespace bl::ml {

// One tree in TreeSHAP's form. Node 0 is the root; children come after their parent.
struct ShapTree {
  std::vector<int32_t> feature;      // -1 for a leaf
  std::vector<int32_t> left, right;  // child ids (-1 for a leaf)
  std::vector<double> cover;         // training cover of each node (> 0 at internal nodes)
  std::vector<double> value;         // leaf output (read at leaves only)
};

// Throws bl::Error (prefixed by `what`) unless the arrays have equal lengths, children lie after
// their parent and in range, features lie in [0, d) and every internal node has cover > 0.
void check_shap_tree(const ShapTree& tree, int64_t d, const std::string& what);

// Sum over leaves, in node order, of (cover[leaf] / cover[0]) * value[leaf]; a single leaf: its value.
double shap_expected_value(const ShapTree& tree);

// One entry of TreeSHAP's path (tree_shap.cpp).
struct ShapPathEntry {
  int32_t feature;
  double zero, one, weight;
};

// Depth of the deepest leaf (root alone: 0).
int64_t shap_tree_depth(const ShapTree& tree);

// Adds one row's contributions of `tree` to phi[0 .. d): goes_left[node] (read at internal nodes)
// says where the row goes. scratch is reused between calls; depth: shap_tree_depth(tree), or -1 to
// compute it here.
void tree_shap_add(const ShapTree& tree, const uint8_t* goes_left, double* phi,
                   std::vector<ShapPathEntry>& scratch, int64_t depth = -1);

// SHAP values of an ensemble for n rows: trees in iteration-major order (tree t adds to group
// t % n_groups), base[k] the base margin of group k. decide(t, i, goes_left) fills goes_left for tree
// t and row i. Returns [n * n_groups * (d + 1)] as described above.
std::vector<double> ensemble_shap(const std::vector<ShapTree>& trees, int64_t n_groups,
                                  const std::vector<double>& base, int64_t n, int64_t d,
                                  const std::function<void(size_t, int64_t, uint8_t*)>& decide);

// SHAP values of bitlearn's own trees (their cover recorded at fit, tree_model.h) for the rows of X
// (host f32 [n, d], NaN follows default_left). Each tree's n_values outputs become one ShapTree per
// output, in tree-major order; output s goes to group s % n_groups, and a leaf's value counts as
// value / divisor (a forest's mean: divisor = the tree count; boosting: 1). base: one margin per
// group. A tree without cover throws bl::Error naming `what` (a model file written before the
// cover was recorded: refit). Returns [n * n_groups * (d + 1)] as ensemble_shap.
std::vector<double> own_trees_shap(const std::vector<Tree>& trees, int64_t n_groups, const std::vector<double>& base,
                                   double divisor, const Tensor& X, int64_t d, const std::string& what);

// An estimator that can explain its margins (the imported XGBoost and LightGBM models, bitlearn's
// CART trees and forests).
class ShapExplainer {
 public:
  virtual ~ShapExplainer() = default;
  // [n, n_groups * (d + 1)] row-major in binary64; *n_cols receives n_groups * (d + 1).
  virtual std::vector<double> shap_values(const Tensor& X, int64_t* n_cols) const = 0;
};

// The SHAP values of `est` (see ShapExplainer; the histogram gradient boosting estimators are
// explained from their model state: margin = base + the sum of the trees); an estimator without
// them throws bl::Error.
std::vector<double> estimator_shap_values(const Estimator& est, const Tensor& X, int64_t* n_cols);

}  // namespace bl::ml
