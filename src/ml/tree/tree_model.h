// tree_model.h: the fitted binary tree shared by every tree estimator (CART, forests, boosting,
// imported XGBoost models), and the label encoding of the tree classifiers.
//
// A tree is a set of parallel arrays indexed by node id; node 0 is the root. An internal node sends
// a row left when x[feature] <= threshold, right otherwise; a NaN goes to the left child when
// default_left is 1. A leaf has feature == -1 and holds n_values floats in value[node * n_values ..]
// (class fractions for classifiers, one mean or one score otherwise). cover[node], when present, is
// the training cover TreeSHAP weighs both children by (tree_shap.h): CART's weighted row count
// reaching the node (scikit-learn's weighted_n_node_samples), boosting's hessian sum (XGBoost's
// cover); it is empty for trees that do not record it (imported models, older model files).
// A categorical node (histogram boosting's categorical_features; categorical[node] == 1) sends a
// row left when its value is a category code c (an integer in [0, 256)) whose bit is set in the
// 256-bit set cat_left[node * 4 ..]; NaN and any other value go where default_left says. Both
// arrays are empty in a tree without categorical nodes.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml {

struct Tree {
  int64_t n_values = 1;
  std::vector<int32_t> feature;       // -1 for a leaf
  std::vector<float> threshold;       // x <= threshold goes left
  std::vector<int32_t> left, right;   // child ids (-1 for a leaf)
  std::vector<uint8_t> default_left;  // where NaN goes
  std::vector<float> value;           // [n_nodes * n_values]
  std::vector<double> cover;          // [n_nodes] training cover, or empty (not recorded)
  std::vector<uint8_t> categorical;   // [n_nodes] 1: categorical split, or empty (none)
  std::vector<uint64_t> cat_left;     // [n_nodes * 4] category codes going left, or empty

  int64_t n_nodes() const { return static_cast<int64_t>(feature.size()); }
  // Appends a node (a leaf until set_split) and returns its id; cover is left alone (a builder that
  // records it appends one entry per node).
  int32_t add_node();
  // Makes node a categorical split sending the codes of the 256-bit set `bits` left.
  void set_categorical(int32_t node, const uint64_t bits[4]);
  bool is_categorical(int32_t node) const { return !categorical.empty() && categorical[node] != 0; }
  // Whether value x of the node's feature goes to the left child.
  bool goes_left(int32_t node, float x) const {
    if (is_categorical(node)) {
      // NaN fails the range test; a non-integer fails the round trip through the code.
      if (!(x >= 0.0f && x < 256.0f)) return default_left[node] != 0;
      const uint32_t c = static_cast<uint32_t>(x);
      if (static_cast<float>(c) != x) return default_left[node] != 0;
      return ((cat_left[static_cast<size_t>(node) * 4 + c / 64] >> (c % 64)) & 1u) != 0;
    }
    return (x != x) ? default_left[node] != 0 : x <= threshold[node];
  }
  // The leaf reached by one row of n_features floats.
  int32_t leaf_of(const float* row) const;
  // Depth of the deepest leaf (root alone: 0).
  int64_t depth() const;
};

// Writes a tree as JSON (int arrays as lists, floats as f32 hex, the cover, when recorded, as f64 hex
// under "cover") and reads it back; load validates every index (children in range and after their
// parent, features < n_features) and names the field (prefix) on error. "cover" is optional: a file
// without it loads and predicts as before (its trees then have no cover). "categorical" (a 0/1 list)
// and "cat_left" (u64 hex, 4 per node) are written only for a tree with categorical nodes.
void tree_to_json(const Tree& tree, nlohmann::json& out);
Tree tree_from_json(const nlohmann::json& in, int64_t n_features, const std::string& prefix);
// The trees as a JSON list of tree_to_json objects, in order.
nlohmann::json trees_to_json(const std::vector<Tree>& trees);

// Host copy of X as contiguous f32 (moves CUDA inputs to the host).
Tensor host_f32(const Tensor& X);

// Class labels of a classifier: the sorted distinct labels and, for each row, its class index.
struct LabelEncoding {
  std::vector<double> classes;  // ascending
  std::vector<int32_t> y_index;
};
// Encodes y (f32 integral, i32 or i64); a single class or a non-integral f32 label throws
// bl::Error naming the estimator.
LabelEncoding encode_labels(const std::string& est, const Tensor& y);
// Labels of class indices, in y's f32 form.
Tensor decode_labels(const std::vector<double>& classes, const std::vector<int32_t>& index);
// Regression targets as host floats.
std::vector<float> regression_targets(const Tensor& y);

// Index of the largest value in p[0..k); ties go to the lowest index.
int32_t argmax_row(const float* p, int64_t k);

// Class probabilities [n, k] on the host from p (row-major [n, k]); a single column (k = 1, the
// positive class of a binary model) becomes the two columns 1 - p, p.
Tensor probability_columns(const std::vector<float>& p, int64_t n, int64_t k);

// Accuracy (classifiers) and R^2 (regressors) in float64 on the host.
// y (f32, i32 or i64, any device) as host doubles; another dtype throws naming `caller`.
std::vector<double> labels_as_doubles(const Tensor& y, const std::string& caller);
double accuracy_score(const Tensor& y_true, const Tensor& y_pred);
double r2_score(const Tensor& y_true, const Tensor& y_pred);
// The same with a weight per row (validated by the caller: finite, >= 0, not all 0), as
// scikit-learn's sample_weight: sum_i w_i [equal] / sum_i w_i, and R^2 with the weighted mean, SS_res
// and SS_tot; binary64 in row order, so all-ones weights give the unweighted bits.
double accuracy_score(const Tensor& y_true, const Tensor& y_pred, const std::vector<float>& w);
double r2_score(const Tensor& y_true, const Tensor& y_pred, const std::vector<float>& w);

// A Philox word for (seed, stream, i) mapped to [0, n) by the multiply-high rule (exact integers).
uint32_t random_below(uint64_t seed, uint64_t stream, uint64_t i, uint32_t n);

}  // namespace bl::ml
