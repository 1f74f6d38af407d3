// hgb_estimators.cpp: hist_gradient_boosting_classifier / _regressor (see bitlearn/ml/boosting.h).
#include <nlohmann/json.hpp>

#include "bitlearn/ml/estimator.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/boosting/boosting_estimators.h"
#include "ml/boosting/hist_gbm.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

class HistGradientBoosting : public Estimator {
 public:
  explicit HistGradientBoosting(bool classifier) : classifier_(classifier) {}

  std::string name() const override {
    return classifier_ ? "hist_gradient_boosting_classifier" : "hist_gradient_boosting_regressor";
  }

  Params get_params() const override {
    Params q;
    q["learning_rate"] = param_text(p_.learning_rate);
    q["max_iter"] = std::to_string(p_.max_iter);
    q["max_leaf_nodes"] = p_.max_leaf_nodes <= 0 ? "none" : std::to_string(p_.max_leaf_nodes);
    q["max_depth"] = p_.max_depth < 0 ? "none" : std::to_string(p_.max_depth);
    q["min_samples_leaf"] = std::to_string(p_.min_samples_leaf);
    q["min_child_weight"] = param_text(p_.min_child_weight);
    q["l2_regularization"] = param_text(p_.l2_regularization);
    q["l1_regularization"] = param_text(p_.l1_regularization);
    q["min_split_gain"] = param_text(p_.min_split_gain);
    q["max_bins"] = std::to_string(p_.max_bins);
    q["grow_policy"] = p_.symmetric ? "symmetric" : (p_.depthwise ? "depthwise" : "lossguide");
    if (p_.dart) {  // listed only for DART, so gbtree model files keep their bytes
      q["booster"] = "dart";
      q["rate_drop"] = param_text(p_.rate_drop);
      q["skip_drop"] = param_text(p_.skip_drop);
      q["one_drop"] = p_.one_drop ? "true" : "false";
      q["normalize_type"] = p_.normalize_forest ? "forest" : "tree";
    }
    q["subsample"] = param_text(p_.subsample);
    q["colsample_bytree"] = param_text(p_.colsample_bytree);
    q["random_state"] = std::to_string(p_.seed);
    return q;
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& kv : params) {
      // Named references, not a structured binding: C++17 lambdas cannot capture bindings (clang).
      const std::string& k = kv.first;
      const std::string& v = kv.second;
      auto positive = [&](double x) {
        BL_CHECK(x > 0.0, est, ": parameter ", k, "=", v, ": expected > 0");
        return x;
      };
      auto non_negative = [&](double x) {
        BL_CHECK(x >= 0.0, est, ": parameter ", k, "=", v, ": expected >= 0");
        return x;
      };
      auto fraction = [&](double x) {
        BL_CHECK(x > 0.0 && x <= 1.0, est, ": parameter ", k, "=", v, ": expected a value in (0, 1]");
        return x;
      };
      const bool none = v == "none" || v == "None";
      if (k == "learning_rate") p_.learning_rate = positive(param_double(est, k, v));
      else if (k == "max_iter") p_.max_iter = static_cast<int64_t>(positive(static_cast<double>(param_int(est, k, v))));
      else if (k == "max_leaf_nodes") {
        p_.max_leaf_nodes = none ? 0 : param_int(est, k, v);
        BL_CHECK(none || p_.max_leaf_nodes >= 2, est, ": parameter max_leaf_nodes=", v, ": expected >= 2 or none");
      } else if (k == "max_depth") {
        p_.max_depth = none ? -1 : param_int(est, k, v);
        BL_CHECK(none || p_.max_depth >= 1, est, ": parameter max_depth=", v, ": expected >= 1 or none");
      } else if (k == "min_samples_leaf") {
        p_.min_samples_leaf = param_int(est, k, v);
        BL_CHECK(p_.min_samples_leaf >= 1, est, ": parameter min_samples_leaf=", v, ": expected >= 1");
      } else if (k == "min_child_weight") p_.min_child_weight = non_negative(param_double(est, k, v));
      else if (k == "l2_regularization") p_.l2_regularization = non_negative(param_double(est, k, v));
      else if (k == "l1_regularization") p_.l1_regularization = non_negative(param_double(est, k, v));
      else if (k == "min_split_gain") p_.min_split_gain = non_negative(param_double(est, k, v));
      else if (k == "max_bins") {
        p_.max_bins = param_int(est, k, v);
        BL_CHECK(p_.max_bins >= 2 && p_.max_bins <= 255, est, ": parameter max_bins=", v, ": expected 2 .. 255");
      } else if (k == "grow_policy") {
        BL_CHECK(v == "depthwise" || v == "lossguide" || v == "symmetric", est, ": parameter grow_policy=", v,
                 ": expected depthwise, lossguide or symmetric");
        p_.depthwise = v == "depthwise";
        p_.symmetric = v == "symmetric";
      } else if (k == "booster") {
        BL_CHECK(v == "gbtree" || v == "dart", est, ": parameter booster=", v, ": expected gbtree or dart");
        p_.dart = v == "dart";
      } else if (k == "rate_drop") {
        p_.rate_drop = param_double(est, k, v);
        BL_CHECK(p_.rate_drop >= 0.0 && p_.rate_drop <= 1.0, est, ": parameter rate_drop=", v, ": expected [0, 1]");
      } else if (k == "skip_drop") {
        p_.skip_drop = param_double(est, k, v);
        BL_CHECK(p_.skip_drop >= 0.0 && p_.skip_drop <= 1.0, est, ": parameter skip_drop=", v, ": expected [0, 1]");
      } else if (k == "one_drop") {
        p_.one_drop = param_bool(est, k, v);
      } else if (k == "normalize_type") {
        BL_CHECK(v == "tree" || v == "forest", est, ": parameter normalize_type=", v, ": expected tree or forest");
        p_.normalize_forest = v == "forest";
      } else if (k == "subsample") p_.subsample = fraction(param_double(est, k, v));
      else if (k == "colsample_bytree") p_.colsample_bytree = fraction(param_double(est, k, v));
      else if (k == "random_state") p_.seed = static_cast<uint64_t>(param_int(est, k, v));
      else throw Error(est + ": unknown parameter '" + k + "'");
    }
  }

  bool fitted() const override { return !model_.trees.empty(); }

  Estimator& fit(const Tensor& X, const Tensor& y) override { return fit_rows(X, y, nullptr); }
  bool supports_sample_weight() const override { return true; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    return fit_rows(X, y, w.data());
  }

 public:
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const float* weight) {
    const std::string est = name();
    check_Xy(est, X, y, /*allow_nan_X=*/true);
    Tensor hx = host_f32(X);
    BoostParams bp = p_;
    bp.use_cuda = X.device().is_cuda();
    LabelEncoding enc;
    std::vector<float> targets;
    if (classifier_) {
      enc = encode_labels(est, y);
      bp.n_classes = static_cast<int64_t>(enc.classes.size());
      bp.loss = bp.n_classes == 2 ? BoostLoss::logistic : BoostLoss::softmax;
    } else {
      targets = regression_targets(y);
      bp.loss = BoostLoss::squared_error;
    }
    model_ = fit_boosting(hx.data<float>(), hx.dim(0), hx.dim(1), targets.data(), enc.y_index.data(), bp, weight);
    classes_ = enc.classes;
    n_features_ = hx.dim(1);
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    std::vector<float> raw = raw_scores(X);
    const int64_t n = X.dim(0);
    if (!classifier_) return Tensor::from_vector(raw, {n});
    const int64_t K = model_.n_groups;
    std::vector<int32_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      idx[i] = K == 1 ? (raw[i] > 0.0f ? 1 : 0) : argmax_row(&raw[i * K], K);
    }
    return decode_labels(classes_, idx);
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name(), ": predict_proba is not supported (a regressor)");
    std::vector<float> raw = raw_scores(X);
    const int64_t n = X.dim(0), K = model_.n_groups;
    raw_to_probability(raw, n, K);
    return probability_columns(raw, n, K);
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return classifier_ ? accuracy_score(y, predict(X)) : r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    save_boost_model(model_, state);
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    BL_CHECK(state.contains("n_features") && state.contains("classes"), est,
             ": model state needs n_features and classes");
    n_features_ = io::json_integer<int64_t>(state["n_features"], name() + ": state.n_features");
    BL_CHECK(n_features_ >= 1, est, ": state.n_features must be >= 1");
    classes_ = state["classes"].get<std::vector<double>>();
    model_ = load_boost_model(state, n_features_, est);
    if (classifier_) {
      BL_CHECK(classes_.size() >= 2, est, ": state.classes needs >= 2 labels");
      const int64_t want = classes_.size() == 2 ? 1 : static_cast<int64_t>(classes_.size());
      BL_CHECK(model_.n_groups == want, est, ": state.n_groups is ", model_.n_groups, ", expected ", want);
    } else {
      BL_CHECK(model_.n_groups == 1, est, ": state.n_groups must be 1 for a regressor");
    }
  }

 private:

  std::vector<float> raw_scores(const Tensor& X) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    Tensor hx = host_f32(X);
    return boosting_raw(model_, hx.data<float>(), hx.dim(0), hx.dim(1));
  }

  bool classifier_;
  BoostParams p_;
  BoostModel model_;
  std::vector<double> classes_;
  int64_t n_features_ = 0;
};

}  // namespace

void save_boost_model(const BoostModel& model, nlohmann::json& state) {
  state["n_groups"] = model.n_groups;
  state["base"] = f32_to_hex(model.base);
  nlohmann::json trees = nlohmann::json::array();
  for (const Tree& t : model.trees) {
    nlohmann::json j;
    tree_to_json(t, j);
    trees.push_back(j);
  }
  state["trees"] = trees;
}

BoostModel load_boost_model(const nlohmann::json& state, int64_t n_features, const std::string& est) {
  BL_CHECK(state.contains("n_groups") && state.contains("base") && state.contains("trees"), est,
           ": model state needs n_groups, base and trees");
  BoostModel m;
  m.n_groups = io::json_integer<int64_t>(state["n_groups"], est + ": state.n_groups");
  BL_CHECK(m.n_groups >= 1, est, ": state.n_groups must be >= 1");
  m.base = f32_from_hex(state["base"].get<std::string>(), "state.base");
  BL_CHECK(static_cast<int64_t>(m.base.size()) == m.n_groups, est, ": state.base holds ", m.base.size(),
           " values, expected n_groups = ", m.n_groups);
  const auto& js = state["trees"];
  BL_CHECK(js.is_array() && !js.empty() && js.size() % static_cast<size_t>(m.n_groups) == 0, est,
           ": state.trees must be a non-empty list, a multiple of n_groups long");
  for (size_t i = 0; i < js.size(); ++i) {
    m.trees.push_back(tree_from_json(js[i], n_features, est + ": state.trees[" + std::to_string(i) + "]"));
    BL_CHECK(m.trees.back().n_values == 1, est, ": state.trees[", i, "].n_values must be 1");
  }
  return m;
}

std::unique_ptr<Estimator> make_hist_gradient_boosting_classifier() {
  return std::make_unique<HistGradientBoosting>(true);
}
std::unique_ptr<Estimator> make_hist_gradient_boosting_regressor() {
  return std::make_unique<HistGradientBoosting>(false);
}

}  // namespace bl::ml
