// xgboost_model.cpp: the "xgboost_model" estimator: an imported XGBoost JSON model evaluated with
// bitlearn's arithmetic (src/io/xgboost_json.h). fit(X) imports params["model_file"] and checks
// X's feature count; the saved bitlearn model file holds the converted trees and, for SHAP values
// (tree_shap.h), each node's cover (XGBoost's sum_hessian) in our node order.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "contract/arith.h"
#include "core/error.h"
#include "io/xgboost_json.h"
#include "ml/boosting/boosting_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "ml/tree/tree_shap.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

// Each tree's sum_hessian in our node order: the import numbers XGBoost's nodes breadth-first
// (xgboost_json.cpp), so our node q is the q-th node of that walk. Empty when a tree has no
// sum_hessian (SHAP values are then refused). The import has validated the structure.
std::vector<std::vector<double>> xgboost_covers(const std::string& text, const XgboostImport& imp) {
  const nlohmann::json j = nlohmann::json::parse(text);
  const auto& trees = j["learner"]["gradient_booster"]["model"]["trees"];
  std::vector<std::vector<double>> out;
  for (size_t t = 0; t < trees.size(); ++t) {
    const auto& jt = trees[t];
    if (!jt.contains("sum_hessian") || !jt["sum_hessian"].is_array()) return {};
    const auto left = jt["left_children"].get<std::vector<int64_t>>();
    const auto right = jt["right_children"].get<std::vector<int64_t>>();
    const auto hess = jt["sum_hessian"].get<std::vector<double>>();
    if (hess.size() != left.size()) return {};
    std::vector<int64_t> queue = {0};
    for (size_t q = 0; q < queue.size(); ++q) {
      if (left[queue[q]] != -1) {
        queue.push_back(left[queue[q]]);
        queue.push_back(right[queue[q]]);
      }
    }
    BL_CHECK(static_cast<int64_t>(queue.size()) == imp.model.trees[t].n_nodes(), "xgboost_model: tree ", t,
             " changed between import and cover reading");
    std::vector<double> cover;
    for (int64_t x : queue) cover.push_back(hess[x]);
    out.push_back(std::move(cover));
  }
  return out;
}

class XgboostModel : public Estimator, public ShapExplainer {
 public:
  std::string name() const override { return "xgboost_model"; }

  Params get_params() const override { return {{"model_file", model_file_}}; }

  void set_params(const Params& params) override {
    for (const auto& [k, v] : params) {
      if (k == "model_file") model_file_ = v;
      else throw Error("xgboost_model: unknown parameter '" + k + "' (known: model_file)");
    }
  }

  bool fitted() const override { return !imp_.model.trees.empty(); }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    (void)y;
    BL_CHECK(!model_file_.empty(), "xgboost_model: set model_file to the XGBoost JSON model to import");
    const std::string text = read_file_text(model_file_, "XGBoost model");
    imp_ = import_xgboost_json(text, model_file_);
    try {
      cover_ = xgboost_covers(text, imp_);
    } catch (const nlohmann::json::exception&) {
      cover_.clear();  // a sum_hessian of the wrong type: no SHAP values
    }
    if (X.defined()) {
      check_X(name(), X, /*allow_nan=*/true);
      BL_CHECK(X.dim(1) == imp_.n_features, "xgboost_model: X has ", X.dim(1), " features, ", model_file_,
               " expects ", imp_.n_features);
    }
    return *this;
  }

  // Regression objectives: the transformed prediction (as XGBoost's predict); classification
  // objectives: the class index (0 .. num_class - 1) with the largest probability.
  Tensor predict(const Tensor& X) const override {
    std::vector<float> out = raw(X);
    const int64_t n = X.dim(0), k = imp_.model.n_groups;
    xgboost_transform(imp_.objective, out, n, k);
    if (imp_.n_classes == 0 || imp_.objective == "binary:logitraw") {
      if (imp_.objective == "binary:logitraw") {
        for (float& v : out) v = v > 0.0f ? 1.0f : 0.0f;
      }
      return Tensor::from_vector(out, {n});
    }
    std::vector<float> label(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      label[i] = k == 1 ? (out[i] > 0.5f ? 1.0f : 0.0f) : static_cast<float>(argmax_row(&out[i * k], k));
    }
    return Tensor::from_vector(label, {n});
  }

  // Probabilities [n, n_classes] for binary:logistic and multi:* objectives.
  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(imp_.n_classes >= 2 && imp_.objective != "binary:logitraw", "xgboost_model: predict_proba needs ",
             "a classification objective, the model has ", imp_.objective);
    std::vector<float> out = raw(X);
    const int64_t n = X.dim(0), k = imp_.model.n_groups;
    xgboost_transform(imp_.objective, out, n, k);
    return probability_columns(out, n, k);
  }

  // Raw margins [n, n_groups] (XGBoost's output_margin=True).
  Tensor transform(const Tensor& X) const override {
    std::vector<float> out = raw(X);
    return Tensor::from_vector(out, {X.dim(0), imp_.model.n_groups});
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return imp_.n_classes >= 2 ? accuracy_score(y, predict(X)) : r2_score(y, predict(X));
  }
  double score_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) const override {
    return imp_.n_classes >= 2 ? accuracy_score(y, predict(X), w) : r2_score(y, predict(X), w);
  }

  void save_state(nlohmann::json& state) const override {
    state["objective"] = imp_.objective;
    state["n_features"] = imp_.n_features;
    state["n_classes"] = imp_.n_classes;
    save_boost_model(imp_.model, state);
    if (!cover_.empty()) state["cover"] = cover_;
  }

  // SHAP values [n, n_groups * (d + 1)] in binary64 (tree_shap.h), with XGBoost's routing (NaN to
  // the default side, x <= threshold left) and the base margin in the expected-value column.
  std::vector<double> shap_values(const Tensor& X, int64_t* n_cols) const override {
    BL_CHECK(fitted(), "xgboost_model: SHAP values before fit (import)");
    BL_CHECK(!cover_.empty(), "xgboost_model: the model has no sum_hessian per node (SHAP values need the ",
             "training cover; XGBoost writes it in JSON models since 1.0)");
    check_X(name(), X, /*allow_nan=*/true);
    BL_CHECK(X.dim(1) == imp_.n_features, "xgboost_model: X has ", X.dim(1), " features, the model expects ",
             imp_.n_features);
    const auto& trees = imp_.model.trees;
    std::vector<ShapTree> shap(trees.size());
    for (size_t t = 0; t < trees.size(); ++t) {
      ShapTree& s = shap[t];
      s.feature = trees[t].feature;
      s.left = trees[t].left;
      s.right = trees[t].right;
      s.cover = cover_[t];
      s.value.assign(trees[t].value.begin(), trees[t].value.end());
      check_shap_tree(s, imp_.n_features, "xgboost_model: tree " + std::to_string(t));
    }
    Tensor hx = host_f32(X);
    const float* px = hx.data<float>();
    const int64_t n = hx.dim(0), d = hx.dim(1), k = imp_.model.n_groups;
    *n_cols = k * (d + 1);
    const std::vector<double> base(imp_.model.base.begin(), imp_.model.base.end());
    return ensemble_shap(shap, k, base, n, d, [&](size_t t, int64_t i, uint8_t* left) {
      const Tree& tree = trees[t];
      const float* row = px + i * d;
      for (int64_t node = 0; node < tree.n_nodes(); ++node) {
        if (tree.feature[node] < 0) continue;
        const float x = row[tree.feature[node]];
        left[node] = std::isnan(x) ? tree.default_left[node] : (x <= tree.threshold[node] ? 1 : 0);
      }
    });
  }

  void load_state(const nlohmann::json& state) override {
    BL_CHECK(state.contains("objective") && state.contains("n_features") && state.contains("n_classes"),
             "xgboost_model: model state needs objective, n_features and n_classes");
    XgboostImport imp;
    imp.objective = state["objective"].get<std::string>();
    const auto& known = xgboost_objectives();
    BL_CHECK(std::find(known.begin(), known.end(), imp.objective) != known.end(),
             "xgboost_model: state.objective '", imp.objective, "' is not supported");
    imp.n_features = io::json_integer<int64_t>(state["n_features"], "xgboost_model: state.n_features");
    BL_CHECK(imp.n_features >= 1, "xgboost_model: state.n_features must be >= 1");
    imp.n_classes = io::json_integer<int64_t>(state["n_classes"], "xgboost_model: state.n_classes");
    imp.model = load_boost_model(state, imp.n_features, "xgboost_model");
    std::vector<std::vector<double>> cover;
    if (state.contains("cover")) {
      const auto& jc = state["cover"];
      BL_CHECK(jc.is_array() && jc.size() == imp.model.trees.size(), "xgboost_model: state.cover must hold one ",
               "list per tree");
      for (size_t t = 0; t < jc.size(); ++t) {
        BL_CHECK(jc[t].is_array() && static_cast<int64_t>(jc[t].size()) == imp.model.trees[t].n_nodes(),
                 "xgboost_model: state.cover[", t, "] must hold one number per node");
        std::vector<double> c;
        for (const auto& v : jc[t]) {
          BL_CHECK(v.is_number(), "xgboost_model: state.cover[", t, "] holds a non-number");
          c.push_back(v.get<double>());
        }
        cover.push_back(std::move(c));
      }
    }
    imp_ = std::move(imp);
    cover_ = std::move(cover);
  }

 private:
  std::vector<float> raw(const Tensor& X) const {
    BL_CHECK(fitted(), "xgboost_model: predict before fit (import)");
    check_X(name(), X, /*allow_nan=*/true);
    BL_CHECK(X.dim(1) == imp_.n_features, "xgboost_model: X has ", X.dim(1), " features, the model expects ",
             imp_.n_features);
    Tensor hx = host_f32(X);
    return boosting_raw(imp_.model, hx.data<float>(), hx.dim(0), hx.dim(1));
  }

  std::string model_file_;
  XgboostImport imp_;
  std::vector<std::vector<double>> cover_;  // per tree, per node (our order); empty: none
};

}  // namespace

std::unique_ptr<Estimator> make_xgboost_model() { return std::make_unique<XgboostModel>(); }

}  // namespace bl::ml
