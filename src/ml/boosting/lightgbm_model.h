// lightgbm_model.h: import of LightGBM text models (Booster.save_model / model_to_string) for
// inference with LightGBM's own arithmetic, which is binary64 throughout:
//   - a feature value x (f32 in our tensors) is converted to binary64; a value with |x| <= 1e-35
//     (the f32 constant LightGBM calls kZeroThreshold) is read as 0, as LightGBM's dense-row reader
//     does;
//   - numerical split: a NaN becomes 0 unless the node's missing type is NaN; missing type Zero
//     sends |x| <= 1e-35 and missing type NaN sends NaN to the default side (decision_type bit 1);
//     otherwise x <= threshold (binary64, as written with 17 digits) goes left;
//   - categorical split (decision_type bit 0): the value truncated to int; a negative, NaN or
//     out-of-int-range value goes right (x86's conversion of those is INT_MIN, the negative case);
//     category c goes left when bit c of the node's cat_threshold words is set;
//   - raw score of group k: 0.0 plus each tree's leaf value in tree order, in binary64 (the leaf
//     values already hold the shrinkage). average_output models (random forests) divide by the
//     iteration count before the objective's transform, as LightGBM's predict; the raw score does
//     not.
// Transforms: sigmoid 1 / (1 + e^(-s x)) (binary, multiclassova, cross_entropy), softmax (max
// subtracted, e^ summed in class order, divided), e^x (poisson, gamma, tweedie), sign(x) x^2
// (regression with reg_sqrt), identity otherwise; e^x is exp64 (src/ml/host_math.h), not the C
// library's, so probabilities can differ from LightGBM's by a binary64 ulp or so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ml/tree/tree_shap.h"

namespace bl::ml {

struct LgbTree {
  // Internal nodes 0 .. n_leaves - 2 (LightGBM's order); a child < 0 is the leaf ~child.
  std::vector<int32_t> split_feature, left, right;
  std::vector<double> threshold;
  std::vector<uint8_t> decision_type;
  std::vector<int32_t> cat_boundaries;
  std::vector<uint32_t> cat_threshold;
  std::vector<double> leaf_value;
  std::vector<int64_t> internal_count, leaf_count;  // empty when the file has none
  int32_t n_leaves() const { return static_cast<int32_t>(leaf_value.size()); }
  // The leaf reached by a row of binary64 values (already read as LightGBM reads them).
  int32_t leaf_of(const double* row) const;
  // Whether the row goes left at internal node `node`.
  bool goes_left(int32_t node, const double* row) const;
};

struct LightgbmImport {
  std::string objective;       // the objective line's first word ("binary", "regression", ...)
  double sigmoid = 1.0;        // binary / multiclassova: "sigmoid:<s>"
  bool reg_sqrt = false;       // "regression sqrt"
  bool average_output = false; // random-forest models
  int64_t n_features = 0;      // max_feature_idx + 1
  int64_t n_groups = 1;        // num_tree_per_iteration
  int64_t n_classes = 0;       // multiclass*: num_class; 2 for binary / cross_entropy; 0 otherwise
  std::vector<LgbTree> trees;  // iteration-major
};

// Parses the text of a LightGBM model file; `source` names it in errors.
LightgbmImport import_lightgbm_text(const std::string& text, const std::string& source);

// A float feature row as LightGBM reads it (binary64; |x| <= 1e-35 becomes 0).
void lightgbm_row(const float* x, int64_t d, double* out);
// Raw scores [n * n_groups] in binary64 (LightGBM's predict(raw_score=True)).
std::vector<double> lightgbm_raw(const LightgbmImport& model, const float* X, int64_t n, int64_t d);
// The objective's output transform of raw scores [n * n_groups], in place (average_output applied).
void lightgbm_transform(const LightgbmImport& model, std::vector<double>& raw, int64_t n);
// The trees in TreeSHAP's form (cover: the row counts); throws when the file has no counts.
std::vector<ShapTree> lightgbm_shap_trees(const LightgbmImport& model, const std::string& what);

}  // namespace bl::ml
