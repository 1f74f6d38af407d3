// xgboost_json.h: import of XGBoost JSON models (Booster.save_model("model.json"), format of
// XGBoost 1.0 and later) into bitlearn's boosted-tree form, for inference with our arithmetic.
//
// XGBoost sends x left when x < split_condition; the import stores the threshold
// next_below(split_condition) with our rule x <= threshold, which is the same set of floats.
// Leaf values are the leaves' split_conditions; the base score becomes a raw margin per output
// group (logit for the logistic objectives, log for the log-link ones, as XGBoost does).
// Supported: booster gbtree with numerical splits; objectives listed in xgboost_objectives().
// Anything else (gblinear, dart, categorical splits, vector leaves, an unknown objective or
// version) is a bl::Error naming the JSON field.
#pragma once

#include <string>
#include <vector>

#include "ml/boosting/hist_gbm.h"

namespace bl::ml {

struct XgboostImport {
  std::string objective;  // learner.objective.name
  int64_t n_features = 0;
  int64_t n_classes = 0;  // multi:* objectives: num_class; 2 for binary:*; 0 for regression
  BoostModel model;       // base margins and trees; n_groups = num_class for multi:*, else 1
};

// Parses the model file's text; `source` names it in errors.
XgboostImport import_xgboost_json(const std::string& text, const std::string& source);

// The objectives the import understands.
const std::vector<std::string>& xgboost_objectives();

// Output transform of an objective on raw margins [n * k], in place (identity, sigmoid, exp or
// softmax), with the contract's functions.
void xgboost_transform(const std::string& objective, std::vector<float>& raw, int64_t n, int64_t k);

}  // namespace bl::ml
