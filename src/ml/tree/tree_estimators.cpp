// tree_estimators.cpp: decision trees, random forests and extra trees (see tree_estimators.h).
#include "ml/tree/tree_estimators.h"

#include "bitlearn/ml/tree.h"
#include "ml/host_math.h"

#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "contract/arith.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/tree/cart_builder.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "ml/tree/tree_shap.h"
#include "ml/weighted_fit.h"
#include "io/json_number.h"

namespace bl::ml {

std::vector<float> average_tree_values(const std::vector<Tree>& trees, int64_t k, const float* X,
                                       int64_t n, int64_t d) {
  std::vector<float> out(static_cast<size_t>(n * k), 0.0f);
  const float count = static_cast<float>(trees.size());
  constexpr int64_t kChunk = 512;
  const int64_t n_chunks = (n + kChunk - 1) / kChunk;
  default_pool().parallel_for(n_chunks, [&](int64_t c) {
    for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
      float* o = &out[static_cast<size_t>(i * k)];
      for (const Tree& t : trees) {
        const float* v = &t.value[static_cast<size_t>(t.leaf_of(X + i * d)) * k];
        for (int64_t j = 0; j < k; ++j) o[j] = bl::add(o[j], v[j]);
      }
      if (trees.size() > 1) {
        for (int64_t j = 0; j < k; ++j) o[j] = bl::div(o[j], count);
      }
    }
  });
  return out;
}

namespace {

struct Kind {
  const char* name;
  bool classifier;
  bool forest;
  bool random_thresholds;
};

int64_t isqrt(int64_t v) {
  int64_t r = static_cast<int64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

class CartEstimator : public WeightedRowsFit<CartEstimator>, public ShapExplainer {
 public:
  explicit CartEstimator(Kind kind) : kind_(kind) {
    criterion_ = kind.classifier ? Criterion::gini : Criterion::squared_error;
    bootstrap_ = kind.forest && !kind.random_thresholds;
    n_estimators_ = kind.forest ? 100 : 1;
    max_features_ = (kind.forest || kind.random_thresholds) && kind.classifier ? "sqrt" : "all";
  }

  std::string name() const override { return kind_.name; }

  Params get_params() const override {
    Params p;
    p["criterion"] = criterion_name(criterion_);
    p["max_depth"] = max_depth_ < 0 ? "none" : std::to_string(max_depth_);
    p["min_samples_split"] = std::to_string(min_samples_split_);
    p["min_samples_leaf"] = std::to_string(min_samples_leaf_);
    p["max_features"] = max_features_;
    p["random_state"] = std::to_string(random_state_);
    if (kind_.forest) {
      p["n_estimators"] = std::to_string(n_estimators_);
      p["bootstrap"] = bootstrap_ ? "true" : "false";
    }
    return p;
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& [k, v] : params) {
      if (k == "criterion") {
        Criterion c = criterion_from_name(est, v);
        BL_CHECK((c == Criterion::squared_error) != kind_.classifier, est, ": parameter criterion=",
                 v, ": expected ", kind_.classifier ? "gini, entropy or log_loss" : "squared_error");
        criterion_ = c;
      } else if (k == "max_depth") {
        const bool none = v == "none" || v == "None";
        max_depth_ = none ? -1 : param_int(est, k, v);
        BL_CHECK(none || max_depth_ >= 0, est, ": parameter max_depth=", v, ": expected >= 0 or none");
      } else if (k == "min_samples_split") {
        min_samples_split_ = param_int(est, k, v);
        BL_CHECK(min_samples_split_ >= 2, est, ": parameter min_samples_split=", v, ": expected >= 2");
      } else if (k == "min_samples_leaf") {
        min_samples_leaf_ = param_int(est, k, v);
        BL_CHECK(min_samples_leaf_ >= 1, est, ": parameter min_samples_leaf=", v, ": expected >= 1");
      } else if (k == "max_features") {
        if (v != "sqrt" && v != "log2" && v != "all" && v != "none" && v != "None") {
          double f = param_double(est, k, v);
          BL_CHECK(f > 0.0, est, ": parameter max_features=", v,
                   ": expected sqrt, log2, all, a count >= 1 or a fraction in (0, 1]");
        }
        max_features_ = v;
      } else if (k == "random_state") {
        random_state_ = static_cast<uint64_t>(param_int(est, k, v));
      } else if (k == "n_estimators" && kind_.forest) {
        n_estimators_ = param_n_estimators(est, v);
      } else if (k == "bootstrap" && kind_.forest) {
        bootstrap_ = param_bool(est, k, v);
      } else {
        throw Error(est + ": unknown parameter '" + k + "'");
      }
    }
  }

  bool fitted() const override { return !trees_.empty(); }

  // sample_weight: one per row (each tree's row weight is its bootstrap count times it), or null.
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* sample_weight) {
    const std::string est = name();
    check_Xy(est, X, y);
    BL_CHECK(X.device().is_cpu(), est, ": X is on ", X.device().str(),
             "; this estimator runs on the CPU only (move X to the CPU)");
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    CartData data;
    data.X = hx.data<float>();
    data.n = n;
    data.d = d;
    if (sample_weight) data.sample_weight = sample_weight->data();
    LabelEncoding enc;
    std::vector<float> targets;
    if (kind_.classifier) {
      enc = encode_labels(est, y);
      data.y_class = enc.y_index.data();
      data.n_classes = static_cast<int64_t>(enc.classes.size());
    } else {
      targets = regression_targets(y);
      data.y_value = targets.data();
    }
    CartParams cp;
    cp.criterion = criterion_;
    cp.max_depth = max_depth_;
    cp.min_samples_split = min_samples_split_;
    cp.min_samples_leaf = min_samples_leaf_;
    cp.max_features = resolve_max_features(d);
    cp.random_thresholds = kind_.random_thresholds;
    cp.seed = random_state_;
    std::vector<Tree> trees(static_cast<size_t>(n_estimators_));
    std::atomic<int64_t> grown{0};  // trees finished, for the progress bar (order-free: no result depends on it)
    const std::string stage = name() + " trees";
    auto grow = [&](int64_t t) {
      CartParams tp = cp;
      tp.stream = static_cast<uint64_t>(t);
      tp.parallel = n_estimators_ == 1;
      CartData td = data;
      std::vector<uint32_t> counts = bootstrap_counts(t, n);
      if (bootstrap_) td.weight = counts.data();
      trees[t] = build_cart(td, tp);
      if (n_estimators_ > 1) report_progress(stage, grown.fetch_add(1) + 1, n_estimators_);
    };
    if (n_estimators_ == 1) grow(0);
    else default_pool().parallel_for(n_estimators_, grow);
    trees_ = std::move(trees);
    classes_ = enc.classes;
    n_features_ = d;
    return *this;
  }

  // Tree t's bootstrap counts over n rows: n draws with replacement, Philox stream 2^63 + t (empty
  // without bootstrap).
  std::vector<uint32_t> bootstrap_counts(int64_t t, int64_t n) const {
    std::vector<uint32_t> counts;
    if (!bootstrap_) return counts;
    counts.assign(static_cast<size_t>(n), 0);
    const uint64_t stream = (uint64_t{1} << 63) | static_cast<uint64_t>(t);
    for (int64_t i = 0; i < n; ++i) {
      ++counts[random_below(random_state_, stream, static_cast<uint64_t>(i), static_cast<uint32_t>(n))];
    }
    return counts;
  }

  std::vector<double> feature_importances(const Tensor& X, const Tensor& y, const Tensor& sample_weight) const {
    const std::string est = name();
    BL_CHECK(fitted(), est, ": feature importances need a fitted estimator");
    check_Xy(est, X, y);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    BL_CHECK(d == n_features_, est, ": X has ", d, " features, the model ", n_features_);
    std::vector<float> w;
    if (sample_weight.defined()) {
      BL_CHECK(sample_weight.ndim() == 1 && sample_weight.dim(0) == n, est, ": sample_weight must hold one value per row");
      w = sample_weight.to(Device::cpu()).contiguous().to_vector<float>();
    }
    std::vector<int32_t> cls;
    std::vector<float> targets;
    if (kind_.classifier) cls = encode_labels(est, y).y_index;
    else targets = regression_targets(y);
    const int64_t k = kind_.classifier ? static_cast<int64_t>(classes_.size()) : 1;
    std::vector<std::vector<double>> per_tree(trees_.size());
    default_pool().parallel_for(static_cast<int64_t>(trees_.size()), [&](int64_t t) {
      const Tree& tree = trees_[t];
      const std::vector<uint32_t> counts = bootstrap_counts(t, n);
      // Per node: weight, class weights (or sum and sum of squares of y), rows in row order.
      const int64_t m = tree.n_nodes();
      std::vector<double> nw(static_cast<size_t>(m), 0.0), stat(static_cast<size_t>(m * (kind_.classifier ? k : 2)), 0.0);
      for (int64_t i = 0; i < n; ++i) {
        double wi = counts.empty() ? 1.0 : static_cast<double>(counts[i]);
        if (!w.empty()) wi *= static_cast<double>(w[i]);
        if (wi == 0.0) continue;
        const float* row = hx.data<float>() + i * d;
        int32_t node = 0;
        while (true) {
          nw[node] += wi;
          if (kind_.classifier) {
            stat[node * k + cls[i]] += wi;
          } else {
            const double v = targets[i];
            stat[node * 2] += wi * v;
            stat[node * 2 + 1] += wi * v * v;
          }
          if (tree.feature[node] < 0) break;
          const float xv = row[tree.feature[node]];
          node = (std::isnan(xv) ? tree.default_left[node] != 0 : xv <= tree.threshold[node]) ? tree.left[node]
                                                                                                : tree.right[node];
        }
      }
      auto impurity = [&](int64_t node) {
        const double total = nw[node];
        if (total <= 0.0) return 0.0;
        if (!kind_.classifier) {
          const double mean = stat[node * 2] / total;
          return stat[node * 2 + 1] / total - mean * mean;
        }
        double s = criterion_ == Criterion::entropy ? 0.0 : 1.0;
        for (int64_t c = 0; c < k; ++c) {
          const double p = stat[node * k + c] / total;
          if (criterion_ == Criterion::entropy) {
            if (p > 0.0) s -= p * log64(p);
          } else {
            s -= p * p;
          }
        }
        return s;
      };
      std::vector<double> imp(static_cast<size_t>(d), 0.0);
      for (int64_t node = 0; node < m; ++node) {
        if (tree.feature[node] < 0) continue;
        const int32_t l = tree.left[node], r = tree.right[node];
        imp[tree.feature[node]] += nw[node] * impurity(node) - nw[l] * impurity(l) - nw[r] * impurity(r);
      }
      double sum = 0.0;
      for (double v : imp) sum += v;
      if (sum > 0.0)
        for (double& v : imp) v /= sum;
      per_tree[t] = std::move(imp);
    });
    std::vector<double> out(static_cast<size_t>(d), 0.0);
    for (const auto& imp : per_tree)
      for (int64_t j = 0; j < d; ++j) out[j] += imp[j];
    double sum = 0.0;
    for (double v : out) sum += v;
    if (sum > 0.0)
      for (double& v : out) v /= sum;
    return out;
  }

  // SHAP values of the predicted values (class fractions per class, or the regression value), the
  // forest's mean over trees: each tree's leaves count as value / n_trees; base 0.
  std::vector<double> shap_values(const Tensor& X, int64_t* n_cols) const override {
    check_fitted_X(name(), fitted(), X, n_features_);
    const int64_t k = kind_.classifier ? static_cast<int64_t>(classes_.size()) : 1;
    *n_cols = k * (n_features_ + 1);
    return own_trees_shap(trees_, k, std::vector<double>(static_cast<size_t>(k), 0.0),
                          static_cast<double>(trees_.size()), X, n_features_, name());
  }

  Tensor predict(const Tensor& X) const override {
    std::vector<float> v = values(X);
    const int64_t n = X.dim(0);
    if (!kind_.classifier) return Tensor::from_vector(v, {n});
    const int64_t k = static_cast<int64_t>(classes_.size());
    std::vector<int32_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[i] = argmax_row(&v[static_cast<size_t>(i * k)], k);
    return decode_labels(classes_, idx);
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(kind_.classifier, name(), ": predict_proba is not supported (a regressor)");
    std::vector<float> v = values(X);
    return Tensor::from_vector(v, {X.dim(0), static_cast<int64_t>(classes_.size())});
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return kind_.classifier ? accuracy_score(y, predict(X)) : r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    state["trees"] = trees_to_json(trees_);
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    BL_CHECK(state.contains("n_features") && state.contains("classes") && state.contains("trees"),
             est, ": model state needs n_features, classes and trees");
    n_features_ = io::json_integer<int64_t>(state["n_features"], name() + ": state.n_features");
    BL_CHECK(n_features_ >= 1, est, ": state.n_features must be >= 1");
    classes_ = state["classes"].get<std::vector<double>>();
    BL_CHECK(!kind_.classifier || classes_.size() >= 2, est, ": state.classes needs >= 2 labels");
    const int64_t k = kind_.classifier ? static_cast<int64_t>(classes_.size()) : 1;
    const auto& js = state["trees"];
    BL_CHECK(js.is_array() && !js.empty(), est, ": state.trees must be a non-empty list");
    std::vector<Tree> trees;
    for (size_t i = 0; i < js.size(); ++i) {
      trees.push_back(tree_from_json(js[i], n_features_, est + ": state.trees[" + std::to_string(i) + "]"));
      BL_CHECK(trees.back().n_values == k, est, ": state.trees[", i, "].n_values is ",
               trees.back().n_values, ", expected ", k);
    }
    trees_ = std::move(trees);
  }

 private:
  int64_t resolve_max_features(int64_t d) const {
    const std::string& v = max_features_;
    int64_t m;
    if (v == "all" || v == "none" || v == "None") m = d;
    else if (v == "sqrt") m = isqrt(d);
    else if (v == "log2") m = 63 - __builtin_clzll(static_cast<unsigned long long>(d));
    else if (v.find_first_of(".eE") != std::string::npos) {
      double f = param_double(name(), "max_features", v);
      BL_CHECK(f <= 1.0, name(), ": parameter max_features=", v, ": a fraction must be <= 1");
      m = static_cast<int64_t>(f * static_cast<double>(d));
    } else {
      m = param_int(name(), "max_features", v);
    }
    return std::max<int64_t>(1, std::min(m, d));
  }

  std::vector<float> values(const Tensor& X) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    Tensor hx = host_f32(X);
    const int64_t k = kind_.classifier ? static_cast<int64_t>(classes_.size()) : 1;
    return average_tree_values(trees_, k, hx.data<float>(), hx.dim(0), hx.dim(1));
  }

  Kind kind_;
  Criterion criterion_;
  int64_t max_depth_ = -1;
  int64_t min_samples_split_ = 2;
  int64_t min_samples_leaf_ = 1;
  std::string max_features_;
  uint64_t random_state_ = 0;
  int64_t n_estimators_ = 1;
  bool bootstrap_ = false;

  std::vector<Tree> trees_;
  std::vector<double> classes_;
  int64_t n_features_ = 0;
};

}  // namespace

std::vector<double> tree_feature_importances(const Estimator& est, const Tensor& X, const Tensor& y,
                                             const Tensor& sample_weight) {
  const auto* cart = dynamic_cast<const CartEstimator*>(&est);
  BL_CHECK(cart != nullptr, est.name(), ": feature importances are computed for CART trees and forests only");
  return cart->feature_importances(X, y, sample_weight);
}

std::unique_ptr<Estimator> make_decision_tree_classifier() {
  return std::make_unique<CartEstimator>(Kind{"decision_tree_classifier", true, false, false});
}
std::unique_ptr<Estimator> make_decision_tree_regressor() {
  return std::make_unique<CartEstimator>(Kind{"decision_tree_regressor", false, false, false});
}
std::unique_ptr<Estimator> make_extra_tree_classifier() {
  return std::make_unique<CartEstimator>(Kind{"extra_tree_classifier", true, false, true});
}
std::unique_ptr<Estimator> make_extra_tree_regressor() {
  return std::make_unique<CartEstimator>(Kind{"extra_tree_regressor", false, false, true});
}
std::unique_ptr<Estimator> make_random_forest_classifier() {
  return std::make_unique<CartEstimator>(Kind{"random_forest_classifier", true, true, false});
}
std::unique_ptr<Estimator> make_random_forest_regressor() {
  return std::make_unique<CartEstimator>(Kind{"random_forest_regressor", false, true, false});
}
std::unique_ptr<Estimator> make_extra_trees_classifier() {
  return std::make_unique<CartEstimator>(Kind{"extra_trees_classifier", true, true, true});
}
std::unique_ptr<Estimator> make_extra_trees_regressor() {
  return std::make_unique<CartEstimator>(Kind{"extra_trees_regressor", false, true, true});
}

}  // namespace bl::ml
