// scalers.cpp: the column scalers standard_scaler, min_max_scaler, max_abs_scaler and robust_scaler
// (scikit-learn's StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler).
//
// Numerics. standard_scaler, min_max_scaler and max_abs_scaler: the column statistics are contract
// reductions over the rows on X's device (bl::mean, bl::var two-pass with divisor n, bl::amin,
// bl::amax: the same bits on every device and thread count); what is derived from them per column is
// host arithmetic (binary32 contract ops, or binary64 rounded once where said). robust_scaler: each
// column copied to the host, sorted, its median and quantiles computed in binary64 (numpy's default
// linear interpolation) and rounded once to binary32 (the order statistics by partial selection,
// one column per task: the values of a full sort). Every transform is elementwise contract ops
// on X's device: (X - center) / scale, or X * scale + min for min_max_scaler.
//
//   standard_scaler: mean_j, var_j (population); a column with min == max is constant: its mean is
//     that value and its variance 0 (a float32 mean of equal values can be off by an ulp). scale_j =
//     sqrt(var_j), 1 where var_j is 0. with_mean / with_std drop the subtraction / the division.
//   min_max_scaler(feature_range=(a, b), clip): data_min, data_max (data_range = max - min in
//     binary64, 1 where 0); scale = (b - a) / range and min = a - data_min * scale in binary64, each
//     rounded once; clip clamps the output to [a, b].
//   max_abs_scaler: max_abs_j = max |x_ij| = max(-min_i x_ij, max_i x_ij); scale = max_abs, 1 where 0.
//   robust_scaler(with_centering, with_scaling, quantile_range=(25, 75)): center = median (the mean
//     of the two middle values for even n), scale = Q(hi) - Q(lo), 1 where 0; Q(q) at the virtual
//     index (n - 1) q / 100 between the sorted values a = v[floor], b = v[floor + 1] with
//     t = index - floor: a + (b - a) t for t < 0.5, b - (b - a) (1 - t) otherwise.
#include <algorithm>
#include <cmath>
#include <utility>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using prep::ColumnTransformer;
using prep::PairParamTransformer;

std::vector<float> host_row(const Tensor& t) { return t.to(Device::cpu()).contiguous().to_vector<float>(); }

void check_finite_stats(const std::string& est, const std::vector<float>& v, const char* what) {
  for (size_t j = 0; j < v.size(); ++j)
    BL_CHECK(std::isfinite(v[j]), est, ": the ", what, " of column ", j, " is ", v[j],
             " (the column's values overflow binary32 arithmetic)");
}

// 1 where v is 0 (a constant column is left unscaled), else v.
std::vector<float> zero_to_one(std::vector<float> v) {
  for (float& x : v)
    if (x == 0.0f) x = 1.0f;
  return v;
}

class StandardScaler final : public ColumnTransformer {
 public:
  StandardScaler()
      : ColumnTransformer("standard_scaler", {{"with_mean", K::boolean, "true"}, {"with_std", K::boolean, "true"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    mean_ = host_row(bl::mean(X, {0}));
    var_ = host_row(bl::var(X, {0}, 0));
    const std::vector<float> lo = host_row(bl::amin(X, {0})), hi = host_row(bl::amax(X, {0}));
    for (int64_t j = 0; j < d_; ++j) {
      if (lo[j] == hi[j]) {
        mean_[j] = lo[j];
        var_[j] = 0.0f;
      }
    }
    check_finite_stats(name_, mean_, "mean");
    check_finite_stats(name_, var_, "variance");
    scale_.resize(static_cast<size_t>(d_));
    for (int64_t j = 0; j < d_; ++j) scale_[j] = var_[j] > 0.0f ? bl::sqrt(var_[j]) : 1.0f;
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    Tensor Z = X;
    if (params_.boolean("with_mean")) Z = bl::sub(Z, row_on(mean_, X));
    if (params_.boolean("with_std")) Z = bl::div(Z, row_on(scale_, X));
    return params_.boolean("with_mean") || params_.boolean("with_std") ? Z : X.clone();
  }

  void save_state(nlohmann::json& state) const override {
    save_rows(state, {{"mean", mean_}, {"var", var_}, {"scale", scale_}});
  }
  void load_state(const nlohmann::json& state) override {
    load_rows(state, {{"mean", &mean_}, {"var", &var_}, {"scale", &scale_}});
    for (int64_t j = 0; j < d_; ++j)
      BL_CHECK(var_[j] >= 0.0f && scale_[j] > 0.0f, name_, ": model state: column ", j, " has variance ", var_[j],
               " and scale ", scale_[j], " (expected >= 0 and > 0)");
    fitted_ = true;
  }

 private:
  std::vector<float> mean_, var_, scale_;
};

void check_feature_range(const std::string& est, const std::string& text, double lo, double hi) {
  BL_CHECK(lo < hi, est, ": parameter feature_range=", text, ": the minimum must be smaller than the maximum");
  BL_CHECK(std::fabs(lo) <= 3e38 && std::fabs(hi) <= 3e38 && std::isfinite(static_cast<float>(hi - lo)), est,
           ": parameter feature_range=", text, ": the bounds and their distance must fit binary32");
}

class MinMaxScaler final : public PairParamTransformer {
 public:
  MinMaxScaler()
      : PairParamTransformer("min_max_scaler", {{"clip", K::boolean, "false"}}, "feature_range", 0.0, 1.0,
                             check_feature_range) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    data_min_ = host_row(bl::amin(X, {0}));
    data_max_ = host_row(bl::amax(X, {0}));
    range_.resize(static_cast<size_t>(d_));
    scale_.resize(static_cast<size_t>(d_));
    min_.resize(static_cast<size_t>(d_));
    for (int64_t j = 0; j < d_; ++j) {
      const double range = static_cast<double>(data_max_[j]) - static_cast<double>(data_min_[j]);
      const double scale = (hi_ - lo_) / (range == 0.0 ? 1.0 : range);
      range_[j] = static_cast<float>(range);
      scale_[j] = static_cast<float>(scale);
      min_[j] = static_cast<float>(lo_ - static_cast<double>(data_min_[j]) * scale);
    }
    check_finite_stats(name_, range_, "range");
    check_finite_stats(name_, scale_, "scale");
    check_finite_stats(name_, min_, "offset");
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    Tensor Z = bl::add(bl::mul(X, row_on(scale_, X)), row_on(min_, X));
    if (!params_.boolean("clip")) return Z;
    const float a = static_cast<float>(lo_), b = static_cast<float>(hi_);
    Z = bl::maximum(Z, Tensor::scalar(static_cast<double>(a), DType::f32, X.device()));
    return bl::minimum(Z, Tensor::scalar(static_cast<double>(b), DType::f32, X.device()));
  }

  void save_state(nlohmann::json& state) const override {
    save_rows(state, {{"data_min", data_min_},
                      {"data_max", data_max_},
                      {"data_range", range_},
                      {"scale", scale_},
                      {"min", min_}});
  }
  void load_state(const nlohmann::json& state) override {
    load_rows(state, {{"data_min", &data_min_},
                      {"data_max", &data_max_},
                      {"data_range", &range_},
                      {"scale", &scale_},
                      {"min", &min_}});
    fitted_ = true;
  }

 private:
  std::vector<float> data_min_, data_max_, range_, scale_, min_;
};

class MaxAbsScaler final : public ColumnTransformer {
 public:
  MaxAbsScaler() : ColumnTransformer("max_abs_scaler", {}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    // max |x| = max(-min x, max x): two reductions, no copy of |X|.
    const std::vector<float> lo = host_row(bl::amin(X, {0})), hi = host_row(bl::amax(X, {0}));
    max_abs_.resize(static_cast<size_t>(d_));
    for (int64_t j = 0; j < d_; ++j) max_abs_[j] = bl::max(-lo[j], hi[j]);
    scale_ = zero_to_one(max_abs_);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    return bl::div(X, row_on(scale_, X));
  }

  void save_state(nlohmann::json& state) const override {
    save_rows(state, {{"max_abs", max_abs_}, {"scale", scale_}});
  }
  void load_state(const nlohmann::json& state) override {
    load_rows(state, {{"max_abs", &max_abs_}, {"scale", &scale_, true}});
    fitted_ = true;
  }

 private:
  std::vector<float> max_abs_, scale_;
};

void check_quantile_range(const std::string& est, const std::string& text, double lo, double hi) {
  BL_CHECK(0.0 <= lo && lo <= hi && hi <= 100.0, est, ": parameter quantile_range=", text,
           ": expected 0 <= lo <= hi <= 100");
}

// The order statistics of one column that robust_scaler reads: the values a full ascending sort
// would put at the positions asked (partial selection by nth_element gives the same values).
class OrderStats {
 public:
  explicit OrderStats(std::vector<float>& v) : v_(v) {}
  // numpy's median: the middle value, or the mean of the middle two (binary64).
  double median() const {
    const size_t n = v_.size(), m = n / 2;
    return n % 2 == 1 ? at(m) : (at(m - 1) + at(m)) / 2.0;
  }
  // numpy's percentile (method "linear") at q in [0, 100].
  double percentile(double q) const {
    const double index = static_cast<double>(v_.size() - 1) * (q / 100.0);
    const double below = std::floor(index);
    const size_t i = static_cast<size_t>(below);
    const size_t k = std::min(i + 1, v_.size() - 1);
    const double t = index - below, a = at(i), b = at(k), diff = b - a;
    return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
  }

 private:
  // The value at sorted position i: the range is partitioned around i (every value before it <=,
  // every value after >=), so later calls select within the part that holds their position.
  double at(size_t i) const {
    size_t lo = 0, hi = v_.size();
    for (const auto& [pos, value] : done_) {
      if (pos == i) return value;
      if (pos < i) lo = std::max(lo, pos + 1);
      else hi = std::min(hi, pos);
    }
    std::nth_element(v_.begin() + static_cast<std::ptrdiff_t>(lo), v_.begin() + static_cast<std::ptrdiff_t>(i),
                     v_.begin() + static_cast<std::ptrdiff_t>(hi));
    const double value = static_cast<double>(v_[i]);
    done_.emplace_back(i, value);
    return value;
  }
  std::vector<float>& v_;
  mutable std::vector<std::pair<size_t, double>> done_;
};

class RobustScaler final : public PairParamTransformer {
 public:
  RobustScaler()
      : PairParamTransformer("robust_scaler", {{"with_centering", K::boolean, "true"}, {"with_scaling", K::boolean, "true"}},
                             "quantile_range", 25.0, 75.0, check_quantile_range) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    const int64_t n = X.dim(0);
    Tensor h = X.to(Device::cpu()).contiguous();
    const float* p = h.data<float>();
    center_.resize(static_cast<size_t>(d_));
    scale_.resize(static_cast<size_t>(d_));
    // One task per column (each column's statistics depend on that column alone).
    default_pool().parallel_for(d_, [&](int64_t j) {
      std::vector<float> col(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) col[i] = p[i * d_ + j];
      const OrderStats s(col);
      const double median = s.median();
      const double iqr = s.percentile(hi_) - s.percentile(lo_);
      center_[j] = static_cast<float>(median);
      scale_[j] = static_cast<float>(iqr);
      if (scale_[j] == 0.0f) scale_[j] = 1.0f;
    });
    check_finite_stats(name_, scale_, "quantile range");
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    const bool c = params_.boolean("with_centering"), s = params_.boolean("with_scaling");
    Tensor Z = c ? bl::sub(X, row_on(center_, X)) : X;
    if (s) Z = bl::div(Z, row_on(scale_, X));
    return c || s ? Z : X.clone();
  }

  void save_state(nlohmann::json& state) const override {
    save_rows(state, {{"center", center_}, {"scale", scale_}});
  }
  void load_state(const nlohmann::json& state) override {
    load_rows(state, {{"center", &center_}, {"scale", &scale_, true}});
    fitted_ = true;
  }

 private:
  std::vector<float> center_, scale_;
};

}  // namespace

std::unique_ptr<Estimator> make_standard_scaler() { return std::make_unique<StandardScaler>(); }
std::unique_ptr<Estimator> make_min_max_scaler() { return std::make_unique<MinMaxScaler>(); }
std::unique_ptr<Estimator> make_max_abs_scaler() { return std::make_unique<MaxAbsScaler>(); }
std::unique_ptr<Estimator> make_robust_scaler() { return std::make_unique<RobustScaler>(); }

}  // namespace bl::ml
