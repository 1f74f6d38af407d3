// sub_estimators.h: what the meta-estimators (bagging, voting, stacking) share: sub-estimator specs
// named by registry name + parameters, nested model state, row/column gathers and class mapping.
//
// Spec text: items separated by ';', each a registry name optionally followed by its parameters in
// parentheses, separated by ',':  "random_forest_classifier(n_estimators=20,max_depth=5);ridge".
// Values may not contain ';', ',', '(' or ')'.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

struct SubSpec {
  std::string name;
  Params params;
};

// Parses spec text; an empty list, an unknown registry name, a malformed item or an unknown
// parameter throws bl::Error naming `est` and `key` (the parameter that held the text).
std::vector<SubSpec> parse_sub_specs(const std::string& est, const std::string& key, const std::string& text);
// A single spec ("ridge(alpha=2)"): the same rules, exactly one item.
SubSpec parse_sub_spec(const std::string& est, const std::string& key, const std::string& text);
// Canonical text of specs (parameters in sorted order).
std::string sub_specs_text(const std::vector<SubSpec>& specs);

// A new unfitted estimator for the spec; `seed_param` (if the estimator has random_state and the
// spec does not set it) becomes its random_state.
std::unique_ptr<Estimator> make_sub_estimator(const SubSpec& spec, const std::string& seed_param);

// A fitted sub-estimator as {"estimator", "params", "state"} and back (load validates and names
// `prefix` on error).
void save_sub_estimator(const Estimator& est, nlohmann::json& out);
std::unique_ptr<Estimator> load_sub_estimator(const nlohmann::json& in, const std::string& prefix);

// The rows `rows` (repeats allowed) and columns `cols` of host X [n, d] as a new f32 tensor.
Tensor gather_rows_cols(const Tensor& X, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols);
// Entries `rows` of y (any dtype of check_Xy), same dtype.
Tensor gather_labels(const Tensor& y, const std::vector<int64_t>& rows);

// Columns of a sub-classifier's predict_proba [n, k_sub] (classes `sub`, ascending) placed into the
// full class list `all` ([n, k_all], missing classes 0), added into acc scaled by weight:
// acc[i, c] = acc[i, c] + weight * p[i, j] (contract add/mul, one fixed order).
void add_mapped_proba(const std::vector<double>& all, const std::vector<double>& sub, const Tensor& proba,
                      float weight, std::vector<float>& acc);

// Sorted distinct labels of y (f32 integral, i32, i64) as doubles.
std::vector<double> distinct_labels(const Tensor& y);

}  // namespace bl::ml
