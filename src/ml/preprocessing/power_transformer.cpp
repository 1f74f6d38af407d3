// power_transformer.cpp: power_transformer (scikit-learn's PowerTransformer): each column through a
// Yeo-Johnson or Box-Cox power transform whose exponent lambda maximizes the normal log-likelihood
// of the transformed column, then (standardize) centered and scaled to unit variance. CPU-only
// (host binary64 work; the output goes back to X's device).
//
// Transforms (binary64, log1p64 / expm1_64 / log64 of host_numerics.h and host_math.h):
//   yeo-johnson: x >= 0: expm1(lambda log1p(x)) / lambda, log1p(x) where |lambda| < 2^-52;
//     x < 0: -expm1((2 - lambda) log1p(-x)) / (2 - lambda), -log1p(-x) where |lambda - 2| <= 2^-52.
//   box-cox (x > 0): expm1(lambda ln x) / lambda, ln x where lambda == 0.
//   log1p(|x|) and ln x are computed once per value; each lambda costs one expm1 per value.
// Log-likelihood of lambda over a column of n values: -n/2 ln var(psi(x, lambda)) + (lambda - 1) S,
// S = sum sign(x) log1p(|x|) (yeo-johnson) or sum ln x (box-cox); var is the population variance
// (binary64 sums in row order; below the smallest normal binary64 the likelihood is -inf).
// lambda: the maximizer by minimize_bounded (Brent's bounded search, xtol 1.48e-8) over a bracket
// that keeps the transformed values within half of binary64's exponent range: yeo-johnson as
// scipy's yeojohnson_normmax (+-[(ln DBL_MIN - ln eps) / 2, (ln DBL_MAX + ln eps) / 2] over
// log1p(20 max |x|), mirrored around 2 for negative data); box-cox the same over max |ln x| of the
// training column (scipy's Box-Cox search has no bounds; these are far wider than any maximum of
// ordinary data: |lambda| up to 336 / max |ln x|).
// A yeo-johnson column whose binary64 variance is at most n eps var + (n mean eps)^2 (scikit-learn's
// constant-feature bound) gets lambda = 1 (the identity); box-cox refuses a constant column.
// standardize: the population mean and standard deviation of the transformed training column in
// binary64 (a column of equal values: that value and 0; scale 1 for a constant column by the same
// bound); transform gives
// (psi(x, lambda) - mean) / scale rounded once to binary32, refused where that overflows binary32.
// One task per column: the same bits at any thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/host_math.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
using prep::expm1_64;
using prep::log1p64;

constexpr double kEps = 2.220446049250313e-16;
constexpr double kXtol = 1.48e-8;

// A column as its lambda-free parts: L = log1p(|x|) and the sign (yeo-johnson) or L = ln x
// (box-cox), computed once; each lambda then costs one expm1 per value.
struct LogColumn {
  std::vector<double> L;
  std::vector<char> negative;  // yeo-johnson: x < 0
};

LogColumn log_column(const std::vector<double>& col, bool box) {
  LogColumn c;
  c.L.resize(col.size());
  c.negative.assign(col.size(), 0);
  for (size_t i = 0; i < col.size(); ++i) {
    if (box) {
      c.L[i] = log64(col[i]);
    } else {
      c.negative[i] = col[i] < 0.0;
      c.L[i] = log1p64(std::fabs(col[i]));
    }
  }
  return c;
}

// psi(x, lambda) from L and the sign (box-cox: negative is never set, and lambda == 0 is ln x).
double psi(double L, bool negative, double lambda, bool box) {
  if (box) return lambda == 0.0 ? L : expm1_64(lambda * L) / lambda;
  if (!negative) return std::fabs(lambda) < kEps ? L : expm1_64(lambda * L) / lambda;
  return std::fabs(lambda - 2.0) > kEps ? -expm1_64((2.0 - lambda) * L) / (2.0 - lambda) : -L;
}

struct MeanVar {
  double mean, var;
};
// Population mean and variance in binary64 (two passes, row order); values all equal: that value
// and 0 exactly (a binary64 sum of equal values can be off by an ulp).
MeanVar mean_var(const std::vector<double>& v) {
  if (std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; })) return {v[0], 0.0};
  double s = 0.0;
  for (double x : v) s += x;
  const double mean = s / static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, ss / static_cast<double>(v.size())};
}

// scikit-learn's constant-feature test: var <= n eps var + (n mean eps)^2.
bool is_constant(const MeanVar& mv, int64_t n) {
  const double nd = static_cast<double>(n);
  return mv.var <= nd * kEps * mv.var + (nd * mv.mean * kEps) * (nd * mv.mean * kEps);
}

class PowerTransformer final : public prep::ColumnTransformer {
 public:
  PowerTransformer()
      : prep::ColumnTransformer("power_transformer",
                                {{"method", K::choice, "yeo-johnson", 0, {"yeo-johnson", "box-cox"}},
                                 {"standardize", K::boolean, "true"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    const bool box = box_cox_method();
    std::vector<std::vector<double>> cols = prep::host_columns(X);
    if (box) check_positive(cols);
    const int64_t n = X.dim(0);
    lambdas_.assign(static_cast<size_t>(d_), 1.0);
    mean_.assign(static_cast<size_t>(d_), 0.0);
    scale_.assign(static_cast<size_t>(d_), 1.0);
    std::vector<char> constant(static_cast<size_t>(d_), 0);
    default_pool().parallel_for(d_, [&](int64_t j) {
      std::vector<double>& col = cols[j];
      if (is_constant(mean_var(col), n)) {
        constant[j] = 1;
        if (box) return;  // refused below
      }
      const LogColumn lc = log_column(col, box);
      if (!constant[j]) lambdas_[j] = box ? box_cox_lambda(lc) : yeo_johnson_lambda(col, lc);
      for (size_t i = 0; i < col.size(); ++i) col[i] = psi(lc.L[i], lc.negative[i], lambdas_[j], box);
      const MeanVar mv = mean_var(col);
      mean_[j] = mv.mean;
      scale_[j] = is_constant(mv, n) ? 1.0 : std::sqrt(mv.var);
    });
    if (box)
      for (int64_t j = 0; j < d_; ++j)
        BL_CHECK(!constant[j], name_, ": column ", j,
                 " is constant; method=box-cox has no maximum-likelihood lambda for it (yeo-johnson leaves it "
                 "unchanged)");
    for (int64_t j = 0; j < d_; ++j)
      BL_CHECK(std::isfinite(mean_[j]) && std::isfinite(scale_[j]), name_, ": the transform of column ", j,
               " with lambda ", lambdas_[j], " overflows binary64");
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    std::vector<std::vector<double>> cols = prep::host_columns(X);
    if (box_cox_method()) check_positive(cols);
    const bool standardize = params_.boolean("standardize"), box = box_cox_method();
    std::vector<char> overflow(static_cast<size_t>(d_), 0);
    default_pool().parallel_for(d_, [&](int64_t j) {
      const LogColumn lc = log_column(cols[j], box);
      for (size_t i = 0; i < cols[j].size(); ++i) {
        double& x = cols[j][i];
        x = psi(lc.L[i], lc.negative[i], lambdas_[j], box);
        if (standardize) x = (x - mean_[j]) / scale_[j];
        if (!std::isfinite(static_cast<float>(x))) overflow[j] = 1;
      }
    });
    for (int64_t j = 0; j < d_; ++j)
      BL_CHECK(!overflow[j], name_, ": the transform of column ", j, " (lambda ", lambdas_[j],
               ") overflows binary32 for some row");
    return prep::tensor_from_columns(cols, X.dim(0), X.device());
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    state["lambdas_f64"] = density_detail::f64_to_hex(lambdas_);
    state["mean_f64"] = density_detail::f64_to_hex(mean_);
    state["scale_f64"] = density_detail::f64_to_hex(scale_);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    lambdas_ = prep::get_finite_f64(state, "lambdas_f64", d_, name_);
    mean_ = prep::get_finite_f64(state, "mean_f64", d_, name_);
    scale_ = prep::get_finite_f64(state, "scale_f64", d_, name_);
    for (int64_t j = 0; j < d_; ++j)
      BL_CHECK(scale_[j] > 0.0, name_, ": model state: scale_f64 of column ", j, " is ", scale_[j], " (expected > 0)");
    fitted_ = true;
  }

 private:
  bool box_cox_method() const { return params_.text("method") == "box-cox"; }

  void check_positive(const std::vector<std::vector<double>>& cols) const {
    for (size_t j = 0; j < cols.size(); ++j)
      for (size_t i = 0; i < cols[j].size(); ++i)
        BL_CHECK(cols[j][i] > 0.0, name_, ": method=box-cox needs strictly positive data; X[", i, ", ", j, "] is ",
                 cols[j][i]);
  }

  // -log-likelihood of lambda for the column (non-finite where the variance underflows).
  double neg_log_likelihood(const LogColumn& lc, double lambda, double s) const {
    const bool box = box_cox_method();
    std::vector<double> t(lc.L.size());
    double sum = 0.0;
    for (size_t i = 0; i < t.size(); ++i) {
      t[i] = psi(lc.L[i], lc.negative[i], lambda, box);
      sum += t[i];
    }
    const double mean = sum / static_cast<double>(t.size());
    double ss = 0.0;
    for (double v : t) ss += (v - mean) * (v - mean);
    const double var = ss / static_cast<double>(t.size());
    if (!(var >= std::numeric_limits<double>::min())) return std::numeric_limits<double>::infinity();
    return static_cast<double>(t.size()) / 2.0 * log64(var) - (lambda - 1.0) * s;
  }

  double yeo_johnson_lambda(const std::vector<double>& col, const LogColumn& lc) const {
    double s = 0.0, max_abs = 0.0;
    bool any_negative = false, all_negative = true;
    for (size_t i = 0; i < col.size(); ++i) {
      const double x = col[i];
      s += lc.negative[i] ? -lc.L[i] : lc.L[i];
      max_abs = std::max(max_abs, std::fabs(x));
      any_negative = any_negative || x < 0.0;
      all_negative = all_negative && x < 0.0;
    }
    const double log_eps = log64(kEps);
    const double reach = log1p64(20.0 * max_abs);
    double lo = (log64(std::numeric_limits<double>::min()) - log_eps) / 2.0 / reach;
    double hi = (log64(std::numeric_limits<double>::max()) + log_eps) / 2.0 / reach;
    if (all_negative) {
      const double l = 2.0 - hi, h = 2.0 - lo;
      lo = l;
      hi = h;
    } else if (any_negative) {
      const double l = std::max(2.0 - hi, lo), h = std::min(2.0 - lo, hi);
      lo = l;
      hi = h;
    }
    return prep::minimize_bounded([&](double l) { return neg_log_likelihood(lc, l, s); }, lo, hi, kXtol);
  }

  double box_cox_lambda(const LogColumn& lc) const {
    double s = 0.0, reach = 0.0;
    for (double lx : lc.L) {
      s += lx;
      reach = std::max(reach, std::fabs(lx));
    }
    const double log_eps = log64(kEps);
    const double lo = (log64(std::numeric_limits<double>::min()) - log_eps) / 2.0 / reach;
    const double hi = (log64(std::numeric_limits<double>::max()) + log_eps) / 2.0 / reach;
    return prep::minimize_bounded([&](double l) { return neg_log_likelihood(lc, l, s); }, lo, hi, kXtol);
  }

  std::vector<double> lambdas_, mean_, scale_;
};

}  // namespace

std::unique_ptr<Estimator> make_power_transformer() { return std::make_unique<PowerTransformer>(); }

}  // namespace bl::ml
