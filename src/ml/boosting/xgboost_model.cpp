// xgboost_model.cpp: the "xgboost_model" estimator: an imported XGBoost JSON model evaluated with
// bitlearn's arithmetic (src/io/xgboost_json.h). fit(X) imports params["model_file"] and checks
// X's feature count; the saved bitlearn model file holds the converted trees.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "contract/arith.h"
#include "core/error.h"
#include "io/xgboost_json.h"
#include "ml/boosting/boosting_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

class XgboostModel : public Estimator {
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
    imp_ = import_xgboost_json(read_file_text(model_file_, "XGBoost model"), model_file_);
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

  void save_state(nlohmann::json& state) const override {
    state["objective"] = imp_.objective;
    state["n_features"] = imp_.n_features;
    state["n_classes"] = imp_.n_classes;
    save_boost_model(imp_.model, state);
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
    imp_ = std::move(imp);
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
};

}  // namespace

std::unique_ptr<Estimator> make_xgboost_model() { return std::make_unique<XgboostModel>(); }

}  // namespace bl::ml
