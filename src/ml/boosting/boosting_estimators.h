// boosting_estimators.h: the JSON form of a boosted model (shared by hist_gradient_boosting_* and
// xgboost_model).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "bitlearn/ml/estimator.h"
#include "ml/boosting/hist_gbm.h"

namespace bl::ml {

// state["n_groups"], state["base"] (f32 hex), state["trees"]; load validates and names fields.
void save_boost_model(const BoostModel& model, nlohmann::json& state);
BoostModel load_boost_model(const nlohmann::json& state, int64_t n_features, const std::string& est);

}  // namespace bl::ml
