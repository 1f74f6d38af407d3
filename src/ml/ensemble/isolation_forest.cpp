// isolation_forest.cpp: isolation_forest (Liu, Ting & Zhou 2008; scores as scikit-learn's
// IsolationForest). See include/bitlearn/ml/ensemble.h.
#include <atomic>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ml/ensemble.h"
#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "io/json_number.h"

namespace bl::ml {

// c(n): the average path length of an unsuccessful search in a binary search tree of n points,
// 2 (ln(n - 1) + 0.5772156649) - 2 (n - 1) / n; c(1) = 0, c(2) = 1 (float32, contract log).
float average_path_length(int64_t n) {
  if (n <= 1) return 0.0f;
  if (n == 2) return 1.0f;
  const float nm1 = static_cast<float>(n - 1);
  const float h = bl::add(bl::log(nm1), 0.5772156649f);
  return bl::sub(bl::mul(2.0f, h), bl::div(bl::mul(2.0f, nm1), static_cast<float>(n)));
}

namespace {

constexpr const char* kName = "isolation_forest";

class IsolationTreeBuilder {
 public:
  IsolationTreeBuilder(const float* X, int64_t d, const std::vector<int64_t>& features, uint64_t seed,
                       uint64_t tree, int64_t height_limit)
      : X_(X), d_(d), features_(features), seed_(seed), tree_(tree), limit_(height_limit) {}

  Tree build(std::vector<int64_t> rows) {
    rows_ = std::move(rows);
    Tree t;
    t.n_values = 1;
    struct Item {
      int32_t node;
      int64_t begin, end, depth;
    };
    std::vector<Item> stack{{t.add_node(), 0, static_cast<int64_t>(rows_.size()), 0}};
    const int64_t m = static_cast<int64_t>(features_.size());
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      const int64_t count = it.end - it.begin;
      int64_t feature = -1;
      float threshold = 0.0f;
      if (it.depth < limit_ && count > 1) {
        // Features in a Philox order for this node; the first non-constant one splits.
        const uint64_t stream = kIforestNodeStream | (tree_ << 32) | static_cast<uint32_t>(it.node);
        std::vector<int64_t> order(features_);
        for (int64_t i = 0; i < m && feature < 0; ++i) {
          const int64_t j = i + random_below(seed_, stream, static_cast<uint64_t>(i), static_cast<uint32_t>(m - i));
          std::swap(order[i], order[j]);
          const int64_t f = order[i];
          float lo = x(rows_[it.begin], f), hi = lo;
          for (int64_t r = it.begin + 1; r < it.end; ++r) {
            lo = bl::min(lo, x(rows_[r], f));
            hi = bl::max(hi, x(rows_[r], f));
          }
          if (lo == hi) continue;
          const float u = uniform_co(random_u32_element(seed_, stream, static_cast<uint64_t>(m + i)));
          float th = static_cast<float>(static_cast<double>(lo) +
                                        static_cast<double>(u) * (static_cast<double>(hi) - static_cast<double>(lo)));
          if (!(th >= lo && th < hi)) th = lo;
          feature = f;
          threshold = th;
        }
      }
      if (feature < 0) {  // leaf: depth + c(rows reaching it)
        t.value[it.node] = bl::add(static_cast<float>(it.depth), average_path_length(count));
        continue;
      }
      int64_t mid = it.begin;
      std::vector<int64_t> right;
      for (int64_t r = it.begin; r < it.end; ++r) {
        const int64_t row = rows_[r];
        if (x(row, feature) <= threshold) rows_[mid++] = row;
        else right.push_back(row);
      }
      std::copy(right.begin(), right.end(), rows_.begin() + mid);
      const int32_t l = t.add_node(), rn = t.add_node();
      t.feature[it.node] = static_cast<int32_t>(feature);
      t.threshold[it.node] = threshold;
      t.left[it.node] = l;
      t.right[it.node] = rn;
      t.default_left[it.node] = 1;
      stack.push_back({rn, mid, it.end, it.depth + 1});
      stack.push_back({l, it.begin, mid, it.depth + 1});
    }
    return t;
  }

 private:
  float x(int64_t row, int64_t f) const { return X_[row * d_ + f]; }
  const float* X_;
  int64_t d_;
  const std::vector<int64_t>& features_;
  uint64_t seed_, tree_;
  int64_t limit_;
  std::vector<int64_t> rows_;
};

class IsolationForest : public Estimator {
 public:
  std::string name() const override { return kName; }

  Params get_params() const override {
    return {{"n_estimators", std::to_string(n_estimators_)}, {"max_samples", max_samples_},
            {"contamination", contamination_},                {"max_features", max_features_},
            {"bootstrap", bootstrap_ ? "true" : "false"},     {"random_state", std::to_string(seed_)}};
  }

  void set_params(const Params& params) override {
    for (const auto& [k, v] : params) {
      if (k == "n_estimators") {
        n_estimators_ = param_n_estimators(kName, v);
      } else if (k == "max_samples") {
        if (v != "auto") count_or_fraction(kName, k, v, 1 << 30);
        max_samples_ = v;
      } else if (k == "max_features") {
        count_or_fraction(kName, k, v, 1 << 30);
        max_features_ = v;
      } else if (k == "contamination") {
        if (v != "auto") {
          const double c = param_double(kName, k, v);
          BL_CHECK(c > 0.0 && c <= 0.5, kName, ": parameter contamination=", v, ": expected auto or a value in (0, 0.5]");
        }
        contamination_ = v;
      } else if (k == "bootstrap") bootstrap_ = param_bool(kName, k, v);
      else if (k == "random_state") seed_ = static_cast<uint64_t>(param_int(kName, k, v));
      else throw Error(std::string(kName) + ": unknown parameter '" + k + "'");
    }
  }

  bool fitted() const override { return !trees_.empty(); }

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(kName, X);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    const int64_t m = max_samples_ == "auto" ? std::min<int64_t>(256, n) : count_or_fraction(kName, "max_samples", max_samples_, n);
    BL_CHECK(bootstrap_ || m <= n, kName, ": max_samples=", max_samples_, " asks for ", m, " rows of ", n);
    const int64_t n_feat = count_or_fraction(kName, "max_features", max_features_, d);
    BL_CHECK(n_feat <= d, kName, ": max_features=", max_features_, " asks for ", n_feat, " features of ", d);
    int64_t limit = 0;  // ceil(log2(m))
    while ((int64_t{1} << limit) < m) ++limit;
    std::vector<Tree> trees(static_cast<size_t>(n_estimators_));
    default_pool().parallel_for(n_estimators_, [&](int64_t t) {
      const uint64_t tag = static_cast<uint64_t>(t);
      std::vector<int64_t> rows = draw_indices(seed_, kIforestRowStream | tag, n, m, bootstrap_);
      std::vector<int64_t> feats = draw_indices(seed_, kBagFeatureStream | tag, d, n_feat, false);
      trees[t] = IsolationTreeBuilder(hx.data<float>(), d, feats, seed_, tag, limit).build(std::move(rows));
    });
    trees_ = std::move(trees);
    n_features_ = d;
    max_samples_used_ = m;
    offset_ = -0.5f;
    if (contamination_ != "auto") {  // the training scores' percentile, linear interpolation
      std::vector<float> s = score_samples_host(hx);
      std::sort(s.begin(), s.end());
      const double q = param_double(kName, "contamination", contamination_) * static_cast<double>(n - 1);
      const int64_t lo = static_cast<int64_t>(q);
      const int64_t hi = std::min<int64_t>(lo + 1, n - 1);
      const double frac = q - static_cast<double>(lo);
      offset_ = static_cast<float>(static_cast<double>(s[lo]) + frac * (static_cast<double>(s[hi]) - s[lo]));
    }
    return *this;
  }

  // -1 for outliers (decision_function < 0), 1 for inliers, as f32.
  Tensor predict(const Tensor& X) const override {
    std::vector<float> s = scores(X);
    for (float& v : s) v = bl::sub(v, offset_) < 0.0f ? -1.0f : 1.0f;
    return Tensor::from_vector(s, {X.dim(0)});
  }

  Tensor score_samples(const Tensor& X) const override { return Tensor::from_vector(scores(X), {X.dim(0)}); }
  Tensor decision_function(const Tensor& X) const override {
    std::vector<float> s = scores(X);
    for (float& v : s) v = bl::sub(v, offset_);
    return Tensor::from_vector(s, {X.dim(0)});
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = n_features_;
    state["max_samples_used"] = max_samples_used_;
    state["offset"] = f32_to_hex({offset_});
    state["trees"] = trees_to_json(trees_);
  }

  void load_state(const nlohmann::json& state) override {
    require_state_keys(state, kName, {"n_features", "max_samples_used", "offset", "trees"});
    n_features_ = state_n_features(state, kName);
    max_samples_used_ = io::json_integer<int64_t>(state["max_samples_used"], name() + ": state.max_samples_used");
    BL_CHECK(max_samples_used_ >= 1, kName, ": state.max_samples_used must be >= 1");
    std::vector<float> off = f32_from_hex(state["offset"].get<std::string>(), "state.offset");
    BL_CHECK(off.size() == 1, kName, ": state.offset must hold one float");
    offset_ = off[0];
    const auto& js = state["trees"];
    BL_CHECK(js.is_array() && !js.empty(), kName, ": state.trees must be a non-empty list");
    std::vector<Tree> trees;
    for (size_t i = 0; i < js.size(); ++i) {
      trees.push_back(tree_from_json(js[i], n_features_, std::string(kName) + ": state.trees[" + std::to_string(i) + "]"));
      BL_CHECK(trees.back().n_values == 1, kName, ": state.trees[", i, "].n_values must be 1");
    }
    trees_ = std::move(trees);
  }

 private:
  std::vector<float> scores(const Tensor& X) const {
    check_fitted_X(kName, fitted(), X, n_features_);
    return score_samples_host(host_f32(X));
  }

  // -2^(-mean path length / c(max_samples)): path lengths added in tree order (float32).
  std::vector<float> score_samples_host(const Tensor& hx) const {
    const int64_t n = hx.dim(0), d = hx.dim(1);
    const float* X = hx.data<float>();
    const float denom = bl::mul(static_cast<float>(trees_.size()), average_path_length(max_samples_used_));
    std::vector<float> out(static_cast<size_t>(n));
    constexpr int64_t kChunk = 512;
    std::atomic<int64_t> scored{0};  // rows done, for the progress report (chunks finish in any order)
    default_pool().parallel_for((n + kChunk - 1) / kChunk, [&](int64_t c) {
      const int64_t end = std::min(n, (c + 1) * kChunk);
      for (int64_t i = c * kChunk; i < end; ++i) {
        float s = 0.0f;
        for (const Tree& t : trees_) s = bl::add(s, t.value[t.leaf_of(X + i * d)]);
        const float ratio = denom > 0.0f ? bl::div(s, denom) : 0.0f;
        out[i] = bl::neg(bl::pow(2.0f, bl::neg(ratio)));
      }
      report_progress("isolation_forest scores", scored.fetch_add(end - c * kChunk) + end - c * kChunk, n);
    });
    return out;
  }

  int64_t n_estimators_ = 100;
  std::string max_samples_ = "auto", contamination_ = "auto", max_features_ = "1.0";
  bool bootstrap_ = false;
  uint64_t seed_ = 0;

  std::vector<Tree> trees_;
  int64_t n_features_ = 0, max_samples_used_ = 0;
  float offset_ = -0.5f;
};

const IsolationForest& as_iforest(const Estimator& est, const char* what) {
  const auto* f = dynamic_cast<const IsolationForest*>(&est);
  BL_CHECK(f != nullptr, est.name(), ": ", what, " is provided by isolation_forest only");
  return *f;
}

}  // namespace

Tensor score_samples(const Estimator& est, const Tensor& X) { return est.score_samples(X); }
Tensor decision_function(const Estimator& est, const Tensor& X) { return est.decision_function(X); }

std::unique_ptr<Estimator> make_isolation_forest() { return std::make_unique<IsolationForest>(); }

}  // namespace bl::ml
