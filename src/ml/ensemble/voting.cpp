// voting.cpp: voting_classifier / voting_regressor over registered estimators (see
// include/bitlearn/ml/ensemble.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

namespace {

// sample_weight goes to every member's fit, as scikit-learn's (each member must take weights).
class Voting : public WeightedRowsFit<Voting, TwoFormEnsemble> {
 public:
  explicit Voting(bool classifier)
      : WeightedRowsFit<Voting, TwoFormEnsemble>(classifier, "voting_classifier", "voting_regressor") {}

  Params get_params() const override {
    Params p{{"estimators", sub_specs_text(specs_)}, {"weights", weights_text_}};
    if (classifier_) p["voting"] = soft_ ? "soft" : "hard";
    return p;
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& [k, v] : params) {
      if (k == "estimators") specs_ = parse_sub_specs(est, k, v);
      else if (k == "weights") {
        weights_ = parse_weights(v);
        weights_text_ = v;
      } else if (k == "voting" && classifier_) {
        BL_CHECK(v == "hard" || v == "soft", est, ": parameter voting=", v, ": expected hard or soft");
        soft_ = v == "soft";
      } else {
        throw Error(est + ": unknown parameter '" + k + "'");
      }
    }
  }

  bool fitted() const override { return !models_.empty(); }

  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* w) {
    const std::string est = name();
    BL_CHECK(!specs_.empty(), est, ": parameter estimators is required (NAME(k=v,...);NAME...)");
    BL_CHECK(weights_.empty() || weights_.size() == specs_.size(), est, ": weights has ", weights_.size(),
             " entries for ", specs_.size(), " estimators");
    check_Xy(est, X, y, /*allow_nan_X=*/true);
    if (classifier_) classes_ = encode_labels(est, y).classes;
    std::vector<std::unique_ptr<Estimator>> models;
    for (const SubSpec& s : specs_) {
      models.push_back(make_sub_estimator(s, ""));
      fit_sub_estimator(*models.back(), X, y, w, est);
    }
    models_ = std::move(models);
    n_features_ = X.dim(1);
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    std::vector<float> v = combine(X, classifier_ && !soft_);
    const int64_t n = X.dim(0);
    if (!classifier_) return Tensor::from_vector(v, {n});
    return labels_of_best_scores(classes_, v, n);
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name(), ": predict_proba is not supported (a regressor)");
    BL_CHECK(soft_, name(), ": predict_proba needs voting=soft");
    return Tensor::from_vector(combine(X, false), {X.dim(0), static_cast<int64_t>(classes_.size())});
  }

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    state["estimators"] = save_sub_estimators(models_);
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    require_state_keys(state, est, {"n_features", "classes", "estimators"});
    n_features_ = state_n_features(state, est);
    classes_ = state_classes(state, est, classifier_);
    const auto& list = state["estimators"];
    BL_CHECK(list.is_array() && !list.empty(), est, ": state.estimators must be a non-empty list");
    BL_CHECK(weights_.empty() || weights_.size() == list.size(), est, ": weights has ", weights_.size(),
             " entries for ", list.size(), " estimators");
    models_ = load_sub_estimators(list, est);
  }

 private:
  std::vector<float> parse_weights(const std::string& v) const {
    std::vector<float> w;
    if (v.empty()) return w;
    size_t start = 0;
    while (true) {
      size_t at = v.find(',', start);
      const std::string item = v.substr(start, at == std::string::npos ? std::string::npos : at - start);
      const double x = param_double(name(), "weights", item);
      BL_CHECK(x >= 0.0, name(), ": parameter weights=", v, ": weights must be >= 0");
      w.push_back(static_cast<float>(x));
      if (at == std::string::npos) break;
      start = at + 1;
    }
    return w;
  }

  // Weighted votes (hard), or the weighted mean of probabilities / predictions; members in order.
  std::vector<float> combine(const Tensor& X, bool hard) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    const int64_t n = X.dim(0);
    const int64_t k = classifier_ ? static_cast<int64_t>(classes_.size()) : 1;
    std::vector<float> acc(static_cast<size_t>(n * k), 0.0f);
    float total = 0.0f;
    const int64_t members = static_cast<int64_t>(models_.size());
    for (size_t e = 0; e < models_.size(); ++e) {
      report_progress(name() + " predict estimators", static_cast<int64_t>(e), members);
      const float w = weights_.empty() ? 1.0f : weights_[e];
      total = bl::add(total, w);
      if (classifier_ && !hard) {
        add_mapped_proba(classes_, classes_, models_[e]->predict_proba(X), w, acc);
        continue;
      }
      std::vector<float> p = host_f32(models_[e]->predict(X)).to_vector<float>();
      for (int64_t i = 0; i < n; ++i) {
        if (!classifier_) {
          acc[i] = bl::add(acc[i], bl::mul(w, p[i]));
          continue;
        }
        const auto at = std::lower_bound(classes_.begin(), classes_.end(), static_cast<double>(p[i]));
        BL_CHECK(at != classes_.end() && *at == p[i], name(), ": estimator ", e, " predicted label ", p[i],
                 ", not a training class");
        float& a = acc[i * k + (at - classes_.begin())];
        a = bl::add(a, w);
      }
    }
    report_progress(name() + " predict estimators", members, members);
    if (!hard) {
      BL_CHECK(total > 0.0f, name(), ": the weights sum to 0");
      for (float& a : acc) a = bl::div(a, total);
    }
    return acc;
  }

  std::vector<SubSpec> specs_;
  std::vector<float> weights_;
  std::string weights_text_;
  bool soft_ = false;

  std::vector<std::unique_ptr<Estimator>> models_;
};

}  // namespace

std::unique_ptr<Estimator> make_voting_classifier() { return std::make_unique<Voting>(true); }
std::unique_ptr<Estimator> make_voting_regressor() { return std::make_unique<Voting>(false); }

}  // namespace bl::ml
