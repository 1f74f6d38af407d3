// adaboost.cpp: adaboost_classifier (SAMME, Zhu et al. 2009) and adaboost_regressor (AdaBoost.R2,
// Drucker 1997), following scikit-learn's AdaBoostClassifier / AdaBoostRegressor (see
// include/bitlearn/ml/ensemble.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/ensemble/weighted_tree.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

namespace {

double sum_in_order(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s;
}

// The boosting's initial row weights: 1 / n, or the sample weights over their sum (scikit-learn's
// normalization; all-ones weights give 1 / n exactly).
std::vector<double> initial_weights(int64_t n, const std::vector<float>* sample_weight) {
  if (sample_weight == nullptr) return std::vector<double>(static_cast<size_t>(n), 1.0 / static_cast<double>(n));
  std::vector<double> w(sample_weight->begin(), sample_weight->end());
  const double total = sum_in_order(w);
  for (double& x : w) x /= total;
  return w;
}

class AdaBoostClassifier : public WeightedRowsFit<AdaBoostClassifier> {
 public:
  AdaBoostClassifier() { set_params({{"estimator", "decision_tree_classifier(max_depth=1)"}}); }

  std::string name() const override { return "adaboost_classifier"; }

  Params get_params() const override {
    return {{"estimator", sub_specs_text({spec_})},
            {"n_estimators", std::to_string(n_estimators_)},
            {"learning_rate", param_text(learning_rate_)}};
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& [k, v] : params) {
      if (k == "estimator") {
        SubSpec s = parse_sub_spec(est, k, v);
        BL_CHECK(s.name == "decision_tree_classifier", est, ": parameter estimator=", v,
                 ": SAMME needs sample weights; supported: decision_tree_classifier(max_depth=..,min_samples_leaf=..)");
        int64_t depth = -1, leaf = 1;
        for (const auto& [pk, pv] : s.params) {
          if (pk == "max_depth") depth = (pv == "none" || pv == "None") ? -1 : param_int(est, pk, pv);
          else if (pk == "min_samples_leaf") leaf = param_int(est, pk, pv);
          else if (pk == "criterion") BL_CHECK(pv == "gini", est, ": estimator criterion must be gini");
          else if (pk != "random_state") throw Error(est + ": estimator parameter '" + pk + "' is not supported here");
        }
        BL_CHECK(depth >= -1 && leaf >= 1, est, ": parameter estimator=", v, ": bad max_depth / min_samples_leaf");
        spec_ = s;
        max_depth_ = depth;
        min_samples_leaf_ = leaf;
      } else if (k == "n_estimators") {
        n_estimators_ = param_n_estimators(est, v);
      } else if (k == "learning_rate") {
        learning_rate_ = param_learning_rate(est, v);
      } else {
        throw Error(est + ": unknown parameter '" + k + "'");
      }
    }
  }

  bool fitted() const override { return !trees_.empty(); }

 private:
  friend WeightedRowsFit;

  // SAMME from the initial weights (the sample weights normalized; rows of weight 0 stay 0).
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* sample_weight) {
    const std::string est = name();
    check_Xy(est, X, y);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    LabelEncoding enc = encode_labels(est, y);
    const int64_t K = static_cast<int64_t>(enc.classes.size());
    std::vector<double> w = initial_weights(n, sample_weight);
    std::vector<Tree> trees;
    std::vector<float> alphas;
    const float log_k1 = bl::log(static_cast<float>(K - 1));
    for (int64_t m = 0; m < n_estimators_; ++m) {
      Tree t = build_weighted_tree(hx.data<float>(), n, d, enc.y_index.data(), K, w, max_depth_, min_samples_leaf_);
      std::vector<char> wrong(static_cast<size_t>(n));
      double err = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const float* v = &t.value[static_cast<size_t>(t.leaf_of(hx.data<float>() + i * d)) * K];
        wrong[i] = argmax_row(v, K) != enc.y_index[i];
        if (wrong[i]) err += w[i];
      }
      err /= sum_in_order(w);
      if (err <= 0.0) {  // a perfect fit ends boosting with weight 1
        trees.push_back(std::move(t));
        alphas.push_back(1.0f);
        break;
      }
      if (err >= 1.0 - 1.0 / static_cast<double>(K)) {
        BL_CHECK(!trees.empty(), est, ": the first estimator is no better than chance (error ", err,
                 "); AdaBoost cannot start");
        break;
      }
      const float ratio = static_cast<float>((1.0 - err) / err);
      const float alpha = bl::mul(static_cast<float>(learning_rate_), bl::add(bl::log(ratio), log_k1));
      trees.push_back(std::move(t));
      alphas.push_back(alpha);
      if (m + 1 == n_estimators_) break;
      const double up = static_cast<double>(bl::exp(alpha));
      for (int64_t i = 0; i < n; ++i) {
        if (wrong[i]) w[i] *= up;
      }
      const double total = sum_in_order(w);
      for (double& x : w) x /= total;
    }
    trees_ = std::move(trees);
    alphas_ = std::move(alphas);
    classes_ = enc.classes;
    n_features_ = d;
    return *this;
  }

 public:
  Tensor predict(const Tensor& X) const override {
    return labels_of_best_scores(classes_, decision(X), X.dim(0));
  }

  // scikit-learn's SAMME probabilities: softmax of decision / (K - 1); two classes: of
  // (-d, d) / 2 with d = decision_1 - decision_0.
  Tensor predict_proba(const Tensor& X) const override {
    std::vector<float> dec = decision(X);
    const int64_t n = X.dim(0), K = static_cast<int64_t>(classes_.size());
    std::vector<float> out(static_cast<size_t>(n * K));
    const float scale = static_cast<float>(K - 1);
    for (int64_t i = 0; i < n; ++i) {
      float* z = &dec[i * K];
      if (K == 2) {
        const float half = bl::div(bl::sub(z[1], z[0]), 2.0f);
        z[0] = bl::neg(half);
        z[1] = half;
      } else {
        for (int64_t c = 0; c < K; ++c) z[c] = bl::div(z[c], scale);
      }
      float m = z[0];
      for (int64_t c = 1; c < K; ++c) m = bl::max(m, z[c]);
      float s = 0.0f;
      for (int64_t c = 0; c < K; ++c) {
        out[i * K + c] = bl::exp(bl::sub(z[c], m));
        s = bl::add(s, out[i * K + c]);
      }
      for (int64_t c = 0; c < K; ++c) out[i * K + c] = bl::div(out[i * K + c], s);
    }
    return Tensor::from_vector(out, {n, K});
  }

  double score(const Tensor& X, const Tensor& y) const override { return accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    state["estimator_weights"] = f32_to_hex(alphas_);
    state["trees"] = trees_to_json(trees_);
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    require_state_keys(state, est, {"n_features", "classes", "estimator_weights", "trees"});
    n_features_ = state_n_features(state, est);
    classes_ = state_classes(state, est, /*classifier=*/true);
    alphas_ = f32_from_hex(state["estimator_weights"].get<std::string>(), "state.estimator_weights");
    const auto& js = state["trees"];
    BL_CHECK(js.is_array() && !js.empty() && js.size() == alphas_.size(), est,
             ": state.trees must be a non-empty list as long as state.estimator_weights");
    std::vector<Tree> trees;
    for (size_t i = 0; i < js.size(); ++i) {
      trees.push_back(tree_from_json(js[i], n_features_, est + ": state.trees[" + std::to_string(i) + "]"));
      BL_CHECK(trees.back().n_values == static_cast<int64_t>(classes_.size()), est, ": state.trees[", i,
               "].n_values must equal the number of classes");
    }
    trees_ = std::move(trees);
  }

 private:
  // Weighted class votes divided by the sum of the weights, estimators in order.
  std::vector<float> decision(const Tensor& X) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1), K = static_cast<int64_t>(classes_.size());
    std::vector<float> dec(static_cast<size_t>(n * K), 0.0f);
    float total = 0.0f;
    for (float a : alphas_) total = bl::add(total, a);
    for (int64_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < trees_.size(); ++e) {
        const Tree& t = trees_[e];
        const int32_t c = argmax_row(&t.value[static_cast<size_t>(t.leaf_of(hx.data<float>() + i * d)) * K], K);
        dec[i * K + c] = bl::add(dec[i * K + c], alphas_[e]);
      }
      for (int64_t c = 0; c < K; ++c) dec[i * K + c] = bl::div(dec[i * K + c], total);
    }
    return dec;
  }

  SubSpec spec_;
  int64_t max_depth_ = 1, min_samples_leaf_ = 1;
  int64_t n_estimators_ = 50;
  double learning_rate_ = 1.0;

  std::vector<Tree> trees_;
  std::vector<float> alphas_;
  std::vector<double> classes_;
  int64_t n_features_ = 0;
};

class AdaBoostRegressor : public WeightedRowsFit<AdaBoostRegressor> {
 public:
  AdaBoostRegressor() { spec_ = parse_sub_spec(name(), "estimator", "decision_tree_regressor(max_depth=3)"); }

  std::string name() const override { return "adaboost_regressor"; }

  Params get_params() const override {
    return {{"estimator", sub_specs_text({spec_})},
            {"n_estimators", std::to_string(n_estimators_)},
            {"learning_rate", param_text(learning_rate_)},
            {"loss", loss_},
            {"random_state", std::to_string(seed_)}};
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& [k, v] : params) {
      if (k == "estimator") spec_ = parse_sub_spec(est, k, v);
      else if (k == "n_estimators") n_estimators_ = param_n_estimators(est, v);
      else if (k == "learning_rate") learning_rate_ = param_learning_rate(est, v);
      else if (k == "loss") {
        BL_CHECK(v == "linear" || v == "square" || v == "exponential", est, ": parameter loss=", v,
                 ": expected linear, square or exponential");
        loss_ = v;
      } else if (k == "random_state") seed_ = static_cast<uint64_t>(param_int(est, k, v));
      else throw Error(est + ": unknown parameter '" + k + "'");
    }
  }

  bool fitted() const override { return !models_.empty(); }

 private:
  friend WeightedRowsFit;

  // AdaBoost.R2 from the initial weights (the sample weights normalized: rows of weight 0 are never
  // drawn and take no part in the errors).
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* sample_weight) {
    const std::string est = name();
    check_Xy(est, X, y);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    const std::vector<float> target = regression_targets(y);
    std::vector<int64_t> cols(static_cast<size_t>(d));
    for (int64_t f = 0; f < d; ++f) cols[f] = f;
    std::vector<double> w = initial_weights(n, sample_weight);
    std::vector<std::unique_ptr<Estimator>> models;
    std::vector<float> alphas;
    std::vector<double> err(static_cast<size_t>(n));
    for (int64_t m = 0; m < n_estimators_; ++m) {
      // Weighted resampling: n draws from the weights' cumulative sum (float64, row order).
      const std::vector<int64_t> rows = draw_weighted_rows(seed_, kAdaRowStream | static_cast<uint64_t>(m), w, n, true);
      auto model = make_sub_estimator(spec_, std::to_string(random_u32_element(seed_, kSubSeedStream, m)));
      model->fit(gather_rows_cols(hx, rows, cols), gather_labels(y, rows));
      const std::vector<float> pred = host_f32(model->predict(hx)).to_vector<float>();
      double err_max = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        err[i] = std::abs(static_cast<double>(pred[i]) - static_cast<double>(target[i]));
        if (w[i] > 0.0) err_max = std::max(err_max, err[i]);
      }
      double estimator_error = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        if (err_max > 0.0) err[i] /= err_max;
        if (loss_ == "square") err[i] *= err[i];
        else if (loss_ == "exponential") err[i] = 1.0 - static_cast<double>(bl::exp(-static_cast<float>(err[i])));
        if (w[i] > 0.0) estimator_error += w[i] * err[i];
      }
      if (estimator_error <= 0.0) {
        models.push_back(std::move(model));
        alphas.push_back(1.0f);
        break;
      }
      if (estimator_error >= 0.5) {
        BL_CHECK(!models.empty(), est, ": the first estimator's weighted error is ", estimator_error,
                 " >= 0.5; AdaBoost.R2 cannot start");
        break;
      }
      const double beta = estimator_error / (1.0 - estimator_error);
      const float alpha = bl::mul(static_cast<float>(learning_rate_), bl::neg(bl::log(static_cast<float>(beta))));
      models.push_back(std::move(model));
      alphas.push_back(alpha);
      if (m + 1 == n_estimators_) break;
      for (int64_t i = 0; i < n; ++i) {
        if (w[i] > 0.0) {
          const float e = static_cast<float>((1.0 - err[i]) * learning_rate_);
          w[i] *= static_cast<double>(bl::pow(static_cast<float>(beta), e));
        }
      }
      const double total = sum_in_order(w);
      for (double& x : w) x /= total;
    }
    models_ = std::move(models);
    alphas_ = std::move(alphas);
    n_features_ = d;
    return *this;
  }

 public:
  // Weighted median of the estimators' predictions (scikit-learn's rule: the smallest prediction
  // whose cumulative weight, predictions ascending and ties by estimator order, reaches half).
  Tensor predict(const Tensor& X) const override {
    check_fitted_X(name(), fitted(), X, n_features_);
    const int64_t n = X.dim(0), E = static_cast<int64_t>(models_.size());
    std::vector<std::vector<float>> preds;
    for (const auto& m : models_) preds.push_back(host_f32(m->predict(X)).to_vector<float>());
    std::vector<float> out(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(E));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t e = 0; e < E; ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return preds[a][i] < preds[b][i]; });
      double total = 0.0;
      for (int64_t e = 0; e < E; ++e) total += alphas_[order[e]];
      double cum = 0.0;
      int64_t pick = order[E - 1];
      for (int64_t e = 0; e < E; ++e) {
        cum += alphas_[order[e]];
        if (cum >= 0.5 * total) {
          pick = order[e];
          break;
        }
      }
      out[i] = preds[pick][i];
    }
    return Tensor::from_vector(out, {n});
  }

  double score(const Tensor& X, const Tensor& y) const override { return r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = n_features_;
    state["estimator_weights"] = f32_to_hex(alphas_);
    state["estimators"] = save_sub_estimators(models_);
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    require_state_keys(state, est, {"n_features", "estimator_weights", "estimators"});
    n_features_ = state_n_features(state, est);
    alphas_ = f32_from_hex(state["estimator_weights"].get<std::string>(), "state.estimator_weights");
    const auto& list = state["estimators"];
    BL_CHECK(list.is_array() && !list.empty() && list.size() == alphas_.size(), est,
             ": state.estimators must be a non-empty list as long as state.estimator_weights");
    models_ = load_sub_estimators(list, est);
  }

 private:
  SubSpec spec_;
  int64_t n_estimators_ = 50;
  double learning_rate_ = 1.0;
  std::string loss_ = "linear";
  uint64_t seed_ = 0;

  std::vector<std::unique_ptr<Estimator>> models_;
  std::vector<float> alphas_;
  int64_t n_features_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_adaboost_classifier() { return std::make_unique<AdaBoostClassifier>(); }
std::unique_ptr<Estimator> make_adaboost_regressor() { return std::make_unique<AdaBoostRegressor>(); }

}  // namespace bl::ml
