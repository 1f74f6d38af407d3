// local_outlier_factor.cpp: local_outlier_factor (Breunig et al. 2000; scikit-learn's
// LocalOutlierFactor with novelty=True, the only mode: predict, decision_function and score_samples
// on new rows; fit_predict on the training rows is not provided).
//
// Neighbors come from nearest_rows.h (squared distances D of ml/cluster/distances.h, contract GEMM,
// equal distances to the lowest training index; the algorithm parameter may search them with the
// exact kd-tree of kd_tree.h, the same bits); a distance is sqrt(D) in the contract's binary32.
//
// Fit, with k = min(n_neighbors, n - 1) (n >= 2 rows):
//   1. the k + 1 nearest training rows of each training row; the row itself is dropped from its
//      list (the last entry is dropped when the row is not in it, as with more than k + 1 copies
//      of one point), leaving its k nearest other rows nb(i), nearest first;
//   2. k_distance[i] = the distance to the last of nb(i);
//   3. lrd[i] = 1 / (mean_{j in nb(i)} max(dist(i, j), k_distance[j]) + 1e-10): the sum over nb(i)
//      in list order, the division by k, the 1e-10 and the reciprocal in binary64, rounded once
//      to binary32;
//   4. negative_outlier_factor[i] = -(sum_{j in nb(i)} lrd[j] / lrd[i]) / k in binary64 (ratios
//      of the binary32 lrd), rounded once to binary32;
//   5. offset = -1.5 for contamination=auto, else numpy's percentile (linear interpolation) of the
//      negative outlier factors at 100 * contamination, in binary64, rounded once to binary32.
// score_samples(x) takes the k nearest training rows of x (x itself is not excluded), its lrd as
// in step 3 (kept in binary64) and the score as in step 4 with lrd(x) in the denominator;
// decision_function = score_samples - offset (binary32 subtraction); predict: -1 where
// decision_function < 0, else 1 (f32).
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/neighbors/metric_neighbors.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr const char* kName = "local_outlier_factor";

class LocalOutlierFactor final : public lin::ParamEstimator {
 public:
  LocalOutlierFactor()
      : lin::ParamEstimator(kName, with_search_specs({{"n_neighbors", K::integer, "20", 1}, {"novelty", K::boolean, "true"}})) {}

  Params get_params() const override {
    Params p = params_.all();
    p["contamination"] = contamination_;
    return p;
  }

  void set_params(const Params& params) override {
    set_params_with_extra(
        params, "contamination", &contamination_,
        [&](const std::string& text) {
          if (text == "auto") return text;
          const double c = param_double(name_, "contamination", text);
          BL_CHECK(c > 0.0 && c <= 0.5, name_, ": parameter contamination=", text,
                   ": expected auto or a value in (0, 0.5]");
          return param_text(c);
        },
        [&](const lin::ParamSet& next) {
          BL_CHECK(next.boolean("novelty"), name_,
                   ": parameter novelty=false is not supported (only novelty=true: predict, decision_function "
                   "and score_samples on new rows)");
        });
  }

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n >= 2, name_, ": fit needs at least 2 rows (each row's neighbors are other rows), got ", n);
    const int64_t k = std::min(params_.integer("n_neighbors"), n - 1);
    n_ = n;
    d_ = d;
    k_ = k;
    X_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    NeighborLists l = neighbors(X, k + 1);
    // Step 1: each row's k nearest other rows.
    std::vector<int64_t> nb(static_cast<size_t>(n * k));
    std::vector<float> dist(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n; ++i) {
      int64_t out = 0;
      bool dropped = false;
      for (int64_t r = 0; r <= k && out < k; ++r) {
        const int64_t j = l.idx[i * (k + 1) + r];
        if (j == i && !dropped) {
          dropped = true;
          continue;
        }
        nb[i * k + out] = j;
        dist[i * k + out] = bl::sqrt(l.dist[i * (k + 1) + r]);
        ++out;
      }
    }
    // Steps 2 to 4.
    k_distance_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) k_distance_[i] = dist[i * k + k - 1];
    lrd_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) lrd_[i] = static_cast<float>(lrd_of(&nb[i * k], &dist[i * k]));
    negative_outlier_factor_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      negative_outlier_factor_[i] = static_cast<float>(score_of(&nb[i * k], static_cast<double>(lrd_[i])));
    // Step 5.
    offset_ = -1.5f;
    if (contamination_ != "auto") {
      std::vector<double> s(negative_outlier_factor_.begin(), negative_outlier_factor_.end());
      std::sort(s.begin(), s.end());
      const double q = param_double(name_, "contamination", contamination_) * 100.0 / 100.0;
      const double at = q * static_cast<double>(n - 1);
      const int64_t lo = std::min<int64_t>(static_cast<int64_t>(std::floor(at)), n - 1);
      const int64_t hi = std::min<int64_t>(lo + 1, n - 1);
      const double t = at - static_cast<double>(lo), diff = s[hi] - s[lo];
      offset_ = static_cast<float>(t >= 0.5 ? s[hi] - diff * (1.0 - t) : s[lo] + diff * t);
    }
    fitted_ = true;
    return *this;
  }

  // score_samples of each row of X (host, binary32).
  std::vector<float> scores(const Tensor& X) const {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), k = k_;
    NeighborLists l = neighbors(X, k);
    std::vector<float> dist(l.dist.size()), out(static_cast<size_t>(m));
    for (size_t t = 0; t < dist.size(); ++t) dist[t] = bl::sqrt(l.dist[t]);
    for (int64_t i = 0; i < m; ++i)
      out[i] = static_cast<float>(score_of(&l.idx[i * k], lrd_of(&l.idx[i * k], &dist[i * k])));
    return out;
  }

  Tensor predict(const Tensor& X) const override {
    std::vector<float> s = scores(X);
    for (float& v : s) v = bl::sub(v, offset_) < 0.0f ? -1.0f : 1.0f;
    return Tensor::from_vector(s, {X.dim(0)}, X.device());
  }

  Tensor score_samples(const Tensor& X) const override {
    return Tensor::from_vector(scores(X), {X.dim(0)}, X.device());
  }

  Tensor decision_function(const Tensor& X) const override {
    std::vector<float> s = scores(X);
    for (float& v : s) v = bl::sub(v, offset_);
    return Tensor::from_vector(s, {X.dim(0)}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}, {"n_neighbors", k_}});
    lin::put_f32s(state, {{"fit_X", X_}, {"k_distance", k_distance_}, {"lrd", lrd_},
                          {"negative_outlier_factor", negative_outlier_factor_}, {"offset", {offset_}}});
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 2, name_);
    BL_CHECK(d_ <= (int64_t{1} << 40) / n_, name_, ": model state: n_samples x n_features is too large");
    k_ = lin::get_int(state, "n_neighbors", 1, name_);
    BL_CHECK(k_ < n_, name_, ": model state: n_neighbors=", k_, " is not below n_samples=", n_);
    X_ = lin::get_f32(state, "fit_X", n_ * d_, name_);
    k_distance_ = lin::get_f32(state, "k_distance", n_, name_);
    lrd_ = lin::get_f32(state, "lrd", n_, name_);
    negative_outlier_factor_ = lin::get_f32(state, "negative_outlier_factor", n_, name_);
    offset_ = lin::get_f32(state, "offset", 1, name_)[0];
    fitted_ = true;
  }

 private:
  // The k nearest training rows of each row of X ([m, k], nearest first) and their squared
  // distances: metric_neighbors.h's euclidean search (brute force or kd-tree, the same bits).
  NeighborLists neighbors(const Tensor& X, int64_t k) const {
    return euclidean_sq_neighbors(X, X_, n_, d_, k, name_, search_of(params_));
  }

  // 1 / (mean of the reachability distances max(dist_r, k_distance[nb_r]) + 1e-10), binary64.
  double lrd_of(const int64_t* nb, const float* dist) const {
    double s = 0.0;
    for (int64_t r = 0; r < k_; ++r) s += static_cast<double>(std::max(dist[r], k_distance_[nb[r]]));
    return 1.0 / (s / static_cast<double>(k_) + 1e-10);
  }

  // -(sum of lrd[nb_r] / lrd) / k, binary64.
  double score_of(const int64_t* nb, double lrd) const {
    double s = 0.0;
    for (int64_t r = 0; r < k_; ++r) s += static_cast<double>(lrd_[nb[r]]) / lrd;
    return -(s / static_cast<double>(k_));
  }

  std::string contamination_ = "auto";
  std::vector<float> X_, k_distance_, lrd_, negative_outlier_factor_;
  float offset_ = -1.5f;
  int64_t n_ = 0, d_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_local_outlier_factor() { return std::make_unique<LocalOutlierFactor>(); }

}  // namespace bl::ml
