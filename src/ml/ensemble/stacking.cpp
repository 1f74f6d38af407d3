// stacking.cpp: stacking_classifier / stacking_regressor: out-of-fold predictions of the base
// estimators (deterministic K-fold) feed a final estimator (see include/bitlearn/ml/ensemble.h).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

// Fold of every row: scikit-learn's StratifiedKFold(shuffle=False) allocation for class indices
// y (classes numbered by first appearance, sorted labels dealt round-robin to the folds, each
// class's rows taking its folds in row order).
std::vector<int64_t> stratified_folds(const std::vector<int32_t>& y, int64_t n_classes, int64_t n_splits) {
  const int64_t n = static_cast<int64_t>(y.size());
  std::vector<int64_t> first(static_cast<size_t>(n_classes), n);
  for (int64_t i = n - 1; i >= 0; --i) first[y[i]] = i;
  std::vector<int64_t> order(static_cast<size_t>(n_classes));
  for (int64_t c = 0; c < n_classes; ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  std::vector<int64_t> rank(static_cast<size_t>(n_classes));
  for (int64_t r = 0; r < n_classes; ++r) rank[order[r]] = r;
  std::vector<int64_t> counts(static_cast<size_t>(n_classes), 0);
  for (int32_t c : y) ++counts[rank[c]];
  // allocation[f][k]: how many of the sorted encoded labels at positions f, f + n_splits, ... are k.
  std::vector<std::vector<int64_t>> alloc(static_cast<size_t>(n_splits), std::vector<int64_t>(n_classes, 0));
  int64_t pos = 0;
  for (int64_t k = 0; k < n_classes; ++k) {
    for (int64_t j = 0; j < counts[k]; ++j, ++pos) ++alloc[pos % n_splits][k];
  }
  std::vector<int64_t> fold(static_cast<size_t>(n));
  std::vector<int64_t> next_fold(static_cast<size_t>(n_classes), 0), used(static_cast<size_t>(n_classes), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = rank[y[i]];
    while (used[k] >= alloc[next_fold[k]][k]) {
      ++next_fold[k];
      used[k] = 0;
    }
    fold[i] = next_fold[k];
    ++used[k];
  }
  return fold;
}

// Fold of every row for plain K-fold: contiguous blocks, the first n % n_splits one row longer.
std::vector<int64_t> kfold_folds(int64_t n, int64_t n_splits) {
  std::vector<int64_t> fold(static_cast<size_t>(n));
  int64_t row = 0;
  for (int64_t f = 0; f < n_splits; ++f) {
    const int64_t size = n / n_splits + (f < n % n_splits ? 1 : 0);
    for (int64_t j = 0; j < size; ++j) fold[row++] = f;
  }
  return fold;
}

namespace {

// sample_weight, as scikit-learn's: each fold's base fit takes its training rows' weights, the
// base fits on all rows and the final estimator's fit take every weight; the folds do not depend on
// them.
class Stacking : public WeightedRowsFit<Stacking, TwoFormEnsemble> {
 public:
  explicit Stacking(bool classifier)
      : WeightedRowsFit<Stacking, TwoFormEnsemble>(classifier, "stacking_classifier", "stacking_regressor") {
    final_ = parse_sub_spec(name(), "final_estimator", classifier ? "logistic_regression" : "ridge");
  }

  Params get_params() const override {
    return {{"estimators", sub_specs_text(specs_)},
            {"final_estimator", sub_specs_text({final_})},
            {"cv", std::to_string(cv_)},
            {"passthrough", passthrough_ ? "true" : "false"}};
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& [k, v] : params) {
      if (k == "estimators") specs_ = parse_sub_specs(est, k, v);
      else if (k == "final_estimator") final_ = parse_sub_spec(est, k, v);
      else if (k == "cv") {
        cv_ = param_int(est, k, v);
        BL_CHECK(cv_ >= 2, est, ": parameter cv=", v, ": expected >= 2");
      } else if (k == "passthrough") passthrough_ = param_bool(est, k, v);
      else throw Error(est + ": unknown parameter '" + k + "'");
    }
  }

  bool fitted() const override { return final_model_ != nullptr; }

  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* w) {
    const std::string est = name();
    BL_CHECK(!specs_.empty(), est, ": parameter estimators is required (NAME(k=v,...);NAME...)");
    check_Xy(est, X, y, /*allow_nan_X=*/true);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(cv_ <= n, est, ": cv=", cv_, " folds need at least as many rows, X has ", n);
    Tensor hx = host_f32(X);
    std::vector<int64_t> fold;
    if (classifier_) {
      LabelEncoding enc = encode_labels(est, y);
      classes_ = enc.classes;
      fold = stratified_folds(enc.y_index, static_cast<int64_t>(classes_.size()), cv_);
    } else {
      fold = kfold_folds(n, cv_);
    }
    const int64_t width = block_width();
    const int64_t n_meta = width * static_cast<int64_t>(specs_.size()) + (passthrough_ ? d : 0);
    std::vector<float> meta(static_cast<size_t>(n * n_meta), 0.0f);
    std::vector<std::unique_ptr<Estimator>> bases;
    std::vector<int64_t> all_cols(static_cast<size_t>(d));
    for (int64_t f = 0; f < d; ++f) all_cols[f] = f;
    for (size_t e = 0; e < specs_.size(); ++e) {
      for (int64_t k = 0; k < cv_; ++k) {  // out-of-fold predictions, folds in order
        std::vector<int64_t> train, test;
        for (int64_t i = 0; i < n; ++i) (fold[i] == k ? test : train).push_back(i);
        if (test.empty()) continue;
        BL_CHECK(!train.empty(), est, ": fold ", k, " leaves no training rows");
        auto m = make_sub_estimator(specs_[e], "");
        Tensor ytr = gather_labels(y, train);
        if (classifier_) {
          BL_CHECK(distinct_labels(ytr).size() >= 2, est, ": the training part of fold ", k,
                   " holds a single class; lower cv");
        }
        std::vector<float> wtr;
        if (w != nullptr)
          for (int64_t i : train) wtr.push_back((*w)[static_cast<size_t>(i)]);
        fit_sub_estimator(*m, gather_rows_cols(hx, train, all_cols), ytr, w != nullptr ? &wtr : nullptr, est);
        std::vector<float> block = base_block(*m, gather_rows_cols(hx, test, all_cols), distinct_labels(ytr));
        for (size_t t = 0; t < test.size(); ++t) {
          for (int64_t j = 0; j < width; ++j) meta[test[t] * n_meta + e * width + j] = block[t * width + j];
        }
      }
      bases.push_back(make_sub_estimator(specs_[e], ""));
      fit_sub_estimator(*bases.back(), X, y, w, est);
    }
    if (passthrough_) {
      const float* px = hx.data<float>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t f = 0; f < d; ++f) meta[i * n_meta + width * specs_.size() + f] = px[i * d + f];
      }
    }
    auto final_model = make_sub_estimator(final_, "");
    fit_sub_estimator(*final_model, Tensor::from_vector(meta, {n, n_meta}), y, w, est);
    bases_ = std::move(bases);
    final_model_ = std::move(final_model);
    n_features_ = d;
    return *this;
  }

  Tensor predict(const Tensor& X) const override { return final_model_checked()->predict(meta_features(X)); }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name(), ": predict_proba is not supported (a regressor)");
    return final_model_checked()->predict_proba(meta_features(X));
  }

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    state["estimators"] = save_sub_estimators(bases_);
    save_sub_estimator(*final_model_, state["final_estimator"]);
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    require_state_keys(state, est, {"n_features", "classes", "estimators", "final_estimator"});
    n_features_ = state_n_features(state, est);
    classes_ = state_classes(state, est, classifier_);
    const auto& list = state["estimators"];
    BL_CHECK(list.is_array() && list.size() == specs_.size(), est, ": state.estimators must list ",
             specs_.size(), " models (parameter estimators)");
    bases_ = load_sub_estimators(list, est);
    final_model_ = load_sub_estimator(state["final_estimator"], est + ": state.final_estimator");
  }

 private:
  // Columns each base estimator contributes: probabilities (binary: the last column only) or one
  // prediction.
  int64_t block_width() const {
    if (!classifier_) return 1;
    return classes_.size() == 2 ? 1 : static_cast<int64_t>(classes_.size());
  }

  // A base estimator's block for the rows of Xs ([rows * width]); `sub` = the classes it saw.
  std::vector<float> base_block(const Estimator& m, const Tensor& Xs, const std::vector<double>& sub) const {
    const int64_t rows = Xs.dim(0);
    if (!classifier_) return host_f32(m.predict(Xs)).to_vector<float>();
    const int64_t k = static_cast<int64_t>(classes_.size());
    std::vector<float> full(static_cast<size_t>(rows * k), 0.0f);
    add_mapped_proba(classes_, sub, m.predict_proba(Xs), 1.0f, full);
    if (k > 2) return full;
    std::vector<float> last(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) last[i] = full[i * 2 + 1];
    return last;
  }

  const Estimator* final_model_checked() const {
    BL_CHECK(fitted(), name(), ": predict before fit");
    return final_model_.get();
  }

  Tensor meta_features(const Tensor& X) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1), width = block_width();
    const int64_t n_meta = width * static_cast<int64_t>(bases_.size()) + (passthrough_ ? d : 0);
    std::vector<float> meta(static_cast<size_t>(n * n_meta));
    for (size_t e = 0; e < bases_.size(); ++e) {
      report_progress(name() + " predict estimators", static_cast<int64_t>(e), static_cast<int64_t>(bases_.size()));
      std::vector<float> block = base_block(*bases_[e], hx, classes_);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < width; ++j) meta[i * n_meta + e * width + j] = block[i * width + j];
      }
    }
    if (passthrough_) {
      const float* px = hx.data<float>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t f = 0; f < d; ++f) meta[i * n_meta + width * bases_.size() + f] = px[i * d + f];
      }
    }
    return Tensor::from_vector(meta, {n, n_meta});
  }

  std::vector<SubSpec> specs_;
  SubSpec final_;
  int64_t cv_ = 5;
  bool passthrough_ = false;

  std::vector<std::unique_ptr<Estimator>> bases_;
  std::unique_ptr<Estimator> final_model_;
};

}  // namespace

std::unique_ptr<Estimator> make_stacking_classifier() { return std::make_unique<Stacking>(true); }
std::unique_ptr<Estimator> make_stacking_regressor() { return std::make_unique<Stacking>(false); }

}  // namespace bl::ml
