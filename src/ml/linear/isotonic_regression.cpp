// isotonic_regression.cpp: isotonic (monotone) regression of y on one feature by the pool
// adjacent violators algorithm, as scikit-learn's IsotonicRegression.
//
// Fit: rows sorted by x (stable, so equal x keep their row order); equal x pooled into one point
// with the mean of their y and weight = count; PAVA left to right merging a block into its left
// neighbour while the neighbour's value is >= (increasing) or <= (decreasing) its own; block values
// are weighted means. Every sum is a binary32 fma/add chain in that fixed order, on the host.
// Predict: linear interpolation between the fitted points, clipped to their range (out_of_bounds
// = clip), exactly: y0 + (y1 - y0) * ((x - x0) / (x1 - x0)). A fit on CUDA data gives the same bits
// (the data is copied to the host).
#include <algorithm>
#include <numeric>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class IsotonicRegression final : public lin::ParamEstimator {
 public:
  IsotonicRegression() : lin::ParamEstimator("isotonic_regression", {{"increasing", K::boolean, "true"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name(), X, y);
    BL_CHECK(X.dim(1) == 1, "isotonic_regression: X must have exactly one feature column, got ", X.dim(1));
    const int64_t n = X.dim(0);
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<float> t = lin::y_to_host(y);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[a] < x[b]; });
    // Pool equal x.
    std::vector<float> px, py, pw;
    for (int64_t r = 0; r < n;) {
      int64_t e = r;
      float s = 0.0f;
      while (e < n && x[order[e]] == x[order[r]]) s = bl::add(s, t[order[e++]]);
      float w = static_cast<float>(e - r);
      px.push_back(x[order[r]]);
      py.push_back(bl::div(s, w));
      pw.push_back(w);
      r = e;
    }
    const bool inc = params_.boolean("increasing");
    // PAVA over the pooled points: blocks as (value, weight, first point).
    std::vector<float> bv, bw;
    std::vector<int64_t> bstart;
    for (size_t i = 0; i < px.size(); ++i) {
      bv.push_back(py[i]);
      bw.push_back(pw[i]);
      bstart.push_back(static_cast<int64_t>(i));
      while (bv.size() >= 2) {
        float left = bv[bv.size() - 2], right = bv.back();
        bool violates = inc ? !(left < right) : !(left > right);
        if (!violates) break;
        float w = bl::add(bw[bw.size() - 2], bw.back());
        float v = bl::div(bl::fma(left, bw[bw.size() - 2], bl::mul(right, bw.back())), w);
        bv.pop_back();
        bw.pop_back();
        bstart.pop_back();
        bv.back() = v;
        bw.back() = w;
      }
    }
    // Thresholds: each block contributes its first and last x (one point when they coincide).
    xs_.clear();
    ys_.clear();
    for (size_t b = 0; b < bv.size(); ++b) {
      int64_t first = bstart[b];
      int64_t last = b + 1 < bv.size() ? bstart[b + 1] - 1 : static_cast<int64_t>(px.size()) - 1;
      xs_.push_back(px[first]);
      ys_.push_back(bv[b]);
      if (last != first) {
        xs_.push_back(px[last]);
        ys_.push_back(bv[b]);
      }
    }
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    BL_CHECK(fitted_, "isotonic_regression: predict before fit");
    lin::check_predict_X(name(), X, 1);
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>(), out(x.size());
    const size_t m = xs_.size();
    for (size_t i = 0; i < x.size(); ++i) {
      float v = x[i];
      if (m == 1 || !(v > xs_[0])) {
        out[i] = ys_[0];
      } else if (!(v < xs_[m - 1])) {
        out[i] = ys_[m - 1];
      } else {
        size_t hi = static_cast<size_t>(std::upper_bound(xs_.begin(), xs_.end(), v) - xs_.begin());
        size_t lo = hi - 1;
        float frac = bl::div(bl::sub(v, xs_[lo]), bl::sub(xs_[hi], xs_[lo]));
        out[i] = bl::fma(bl::sub(ys_[hi], ys_[lo]), frac, ys_[lo]);
      }
    }
    return Tensor::from_vector(out, {static_cast<int64_t>(out.size())}, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    state["n_thresholds"] = static_cast<int64_t>(xs_.size());
    lin::put_f32s(state, {{"x_thresholds", xs_}, {"y_thresholds", ys_}});
  }
  void load_state(const nlohmann::json& state) override {
    int64_t m = lin::get_int(state, "n_thresholds", 1, name());
    xs_ = lin::get_f32(state, "x_thresholds", m, name());
    ys_ = lin::get_f32(state, "y_thresholds", m, name());
    for (int64_t i = 1; i < m; ++i)
      BL_CHECK(xs_[i - 1] <= xs_[i], "isotonic_regression: model state: x_thresholds not sorted");
    fitted_ = true;
  }

 private:
  std::vector<float> xs_, ys_;
};

}  // namespace

std::unique_ptr<Estimator> make_isotonic_regression() { return std::make_unique<IsotonicRegression>(); }

}  // namespace bl::ml
