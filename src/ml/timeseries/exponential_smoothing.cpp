// exponential_smoothing.cpp: Holt-Winters exponential smoothing, as statsmodels' ExponentialSmoothing
// (statsmodels.tsa.holtwinters), a Forecaster (forecaster.h). All arithmetic is binary64 on the host.
//
// Model (y_0 .. y_{n-1}; m the seasonal period, phi = 1 unless damped_trend): states l, b, s with
// l[0], b[0], s[0..m) the initial values, and for i = 1 .. n, with T = trended(l[i-1], damped(b[i-1]))
// (trended: l + b / l * b / l for trend add / mul / none; damped: phi b / b^phi / 0):
//   l[i]       = alpha y[i-1] - alpha s[i-1] + (1 - alpha) T    (seasonal add; y/s for mul; no s for none)
//   b[i]       = beta (l[i] - l[i-1]) + (1 - beta) damped(b[i-1])   (l[i] / l[i-1] for a mul trend)
//   s[i+m-1]   = gamma y[i-1] - gamma T + (1 - gamma) s[i-1]        (gamma y[i-1] / T + ... for mul)
// The fitted value of row t is trended(l[t], damped(b[t])) +/* s[t]; the forecast h steps after the
// series is trended(l[n], b[n] phi_h) (b[n]^phi_h for mul), phi_h = phi + ... + phi^h (h undamped),
// +/* s[n + (h - 1) mod m], the latest estimate of that season. (statsmodels' ExponentialSmoothing
// uses an older one, s[n - 1], at the steps h = m, 2m, ...: its forecasts there differ from these and
// from its ETSModel's; elsewhere they agree.)
// SSE = sum (fitted - y)^2; with k = m (seasonal) + 2 (trend) + 2 + 1 (damped) parameters,
// aic = n ln(SSE / n) + 2k, bic = n ln(SSE / n) + k ln n, aicc = aic + 2 (k + 2)(k + 3) / (n - k - 3).
//
// Initial values: initialization_method "estimated" (the default, as statsmodels) starts from the
// heuristic values (from 10 + 2 (m / 2) observations up; below, the simple ones: the first period's
// mean and y[:m] -/÷ it, the mean of (y[m:2m] - y[:m]) / m as the trend) and estimates l0, b0 and the
// m seasonal values together with the smoothing parameters; "heuristic" keeps the heuristic values
// (Hyndman et al., section 2.6: a centred moving average of the first k periods, k = min(5, n / m)
// raised to cover 10 + 2 (m / 2) values, its seasonal averages normalized, and the least-squares line
// through its first 10 values giving l0 and b0 (1 + slope / l0 for a mul trend)).
// Smoothing parameters given as numbers are kept; the others are estimated by minimizing SSE as
// statsmodels does: alpha in [sqrt(eps), 1 - sqrt(eps)], beta = u alpha, gamma = v (1 - alpha) with
// u, v in [0, 1], phi in [0.8, 0.995], l0 (and the seasonal values, the trend) >= 0 where a component
// is multiplicative; a grid search over alpha, beta, gamma first (use_brute, statsmodels' grid of
// 87 / (free count) points per axis), then ts::minimize_box64 (projected L-BFGS, binary64) from it.
//
// Prediction intervals: for the additive models (trend none / add, seasonal none / add) the
// closed form of the matching ETS(A, *, *) model, var_h = sigma^2 (1 + sum_{j=1}^{h-1} c_j^2),
// c_j = alpha (1 + beta phi_j) + gamma [j mod m == 0], sigma^2 = SSE / n, bounds
// mean -/+ z sqrt(var_h), z the 1 - alpha/2 normal quantile. With a multiplicative component there is
// no closed form: lower and upper are NaN (the point forecasts are given).
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ml/cluster/density_clustering.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"
#include "ml/timeseries/forecaster.h"
#include "ml/timeseries/ts_numerics.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using Vec = std::vector<double>;
enum Comp { kNone = 0, kAdd = 1, kMul = 2 };

struct HwSpec {
  int trend = kNone, seasonal = kNone;
  bool damped = false;
  int64_t m = 0;  // 0 without a seasonal component
};

// alpha, beta, gamma, phi, l0, b0 and the m initial seasonal values.
struct HwValues {
  double alpha = 0, beta = 0, gamma = 0, phi = 1, l0 = 0, b0 = 0;
  Vec s0;
};

struct HwRun {
  Vec fitted, fcast;
  double sse = 0.0;
};

double damped(const HwSpec& sp, double b, double phi) {
  if (sp.trend == kAdd) return b * phi;
  if (sp.trend == kMul) return ts::pow_pos64(b, phi);
  return 0.0;
}
double trended(const HwSpec& sp, double l, double db) {
  if (sp.trend == kAdd) return l + db;
  if (sp.trend == kMul) return l * db;
  return l;
}

// The smoothing recursions over y, the fitted values and h forecasts.
HwRun run_hw(const HwSpec& sp, const HwValues& v, const Vec& y, int64_t h) {
  const int64_t n = static_cast<int64_t>(y.size()), m = sp.m;
  Vec lv(static_cast<size_t>(n + 1)), b(static_cast<size_t>(n + 1), 0.0), s(static_cast<size_t>(n + m + 1), 0.0);
  lv[0] = v.l0;
  if (sp.trend != kNone) b[0] = v.b0;
  for (int64_t j = 0; j < m; ++j) s[j] = v.s0[j];
  const double alphac = 1.0 - v.alpha, betac = 1.0 - v.beta, gammac = 1.0 - v.gamma;
  for (int64_t i = 1; i <= n; ++i) {
    const double t = trended(sp, lv[i - 1], damped(sp, b[i - 1], v.phi));
    const double ya = v.alpha * y[i - 1];
    if (sp.seasonal == kMul)
      lv[i] = ya / s[i - 1] + alphac * t;
    else if (sp.seasonal == kAdd)
      lv[i] = (ya - v.alpha * s[i - 1]) + alphac * t;
    else
      lv[i] = ya + alphac * t;
    if (sp.trend == kAdd) b[i] = v.beta * (lv[i] - lv[i - 1]) + betac * damped(sp, b[i - 1], v.phi);
    if (sp.trend == kMul) b[i] = v.beta * (lv[i] / lv[i - 1]) + betac * damped(sp, b[i - 1], v.phi);
    const double yg = v.gamma * y[i - 1];
    if (sp.seasonal == kMul) s[i + m - 1] = yg / t + gammac * s[i - 1];
    if (sp.seasonal == kAdd) s[i + m - 1] = (yg - v.gamma * t) + gammac * s[i - 1];
  }
  HwRun r;
  r.fitted.resize(static_cast<size_t>(n));
  double sse = 0.0;
  for (int64_t t = 0; t < n; ++t) {
    double f = trended(sp, lv[t], damped(sp, b[t], v.phi));
    if (sp.seasonal == kMul) f *= s[t];
    if (sp.seasonal == kAdd) f += s[t];
    r.fitted[t] = f;
    const double e = f - y[t];
    sse += e * e;
  }
  r.sse = sse;
  r.fcast.resize(static_cast<size_t>(h));
  double phi_pow = 1.0, phi_sum = 0.0;
  for (int64_t k = 1; k <= h; ++k) {
    double bk = 0.0;
    if (sp.damped) {
      phi_pow *= v.phi;
      phi_sum += phi_pow;
    } else {
      phi_sum = static_cast<double>(k);
    }
    if (sp.trend == kAdd) bk = b[n] * phi_sum;
    if (sp.trend == kMul) bk = ts::pow_pos64(b[n], phi_sum);
    double f = trended(sp, lv[n], bk);
    if (sp.seasonal != kNone) {
      const int64_t off = k - 1;  // t = n + off
      const double sv = s[n + off % m];  // the latest estimate of the step's season
      f = sp.seasonal == kMul ? f * sv : f + sv;
    }
    r.fcast[k - 1] = f;
  }
  return r;
}


// statsmodels' grid of starting points for the free ones among alpha, beta, gamma (sel[0..2]);
// each point lists the free values in that order.
std::vector<Vec> brute_points(const bool sel[3], double alpha) {
  const int64_t nfree = static_cast<int64_t>(sel[0]) + sel[1] + sel[2];
  const int64_t ns = 87 / nfree;
  std::vector<Vec> pts;
  if (!sel[0]) {
    Vec bs, gs;
    if (sel[1]) bs = prep::linspace64(0.005, std::min(1.0, alpha) - 0.005, ns);
    if (sel[2]) gs = prep::linspace64(0.005, std::min(1.0, 1.0 - alpha) - 0.005, ns);
    if (sel[1] && sel[2]) {
      for (double g : gs)
        for (double b : bs) pts.push_back({b, g});
    } else {
      for (double v : sel[1] ? bs : gs) pts.push_back({v});
    }
    return pts;
  }
  const Vec as = prep::linspace64(0.005, 0.995, ns);
  for (double a : as) {
    if (!sel[1] && !sel[2]) {
      pts.push_back({a});
      continue;
    }
    const int64_t nb = static_cast<int64_t>(std::ceil(static_cast<double>(ns) * std::sqrt(a)));
    const int64_t ng = static_cast<int64_t>(std::ceil(static_cast<double>(ns) * std::sqrt(1.0 - a)));
    if (sel[1] && sel[2]) {
      const Vec bs = prep::linspace64(0.0, std::min(1.0, a), nb), gs = prep::linspace64(0.0, std::min(1.0, 1.0 - a), ng);
      for (double g : gs)
        for (double b : bs) pts.push_back({a, b, g});
    } else if (sel[1]) {
      for (double b : prep::linspace64(0.0, std::min(1.0, a), nb)) pts.push_back({a, b});
    } else {
      for (double g : prep::linspace64(0.0, std::min(1.0, 1.0 - a), ng)) pts.push_back({a, g});
    }
  }
  return pts;
}

// The simple and heuristic initial values (statsmodels' _initialization_simple / _heuristic).
void initial_simple(const HwSpec& sp, const Vec& y, HwValues& v) {
  const int64_t m = sp.m;
  v.s0.assign(static_cast<size_t>(m), 0.0);
  if (sp.seasonal == kNone) {
    v.l0 = y[0];
    if (sp.trend == kAdd) v.b0 = y[1] - y[0];
    if (sp.trend == kMul) v.b0 = y[1] / y[0];
    return;
  }
  double s = 0.0;
  for (int64_t j = 0; j < m; ++j) s += y[j];
  v.l0 = s / static_cast<double>(m);
  if (sp.trend != kNone) {
    double d = 0.0;
    for (int64_t j = 0; j < m; ++j) d += (y[m + j] - y[j]) / static_cast<double>(m);
    v.b0 = d / static_cast<double>(m);
  }
  for (int64_t j = 0; j < m; ++j) v.s0[j] = sp.seasonal == kAdd ? y[j] - v.l0 : y[j] / v.l0;
}

void initial_heuristic(const HwSpec& sp, const Vec& y, HwValues& v) {
  const int64_t n = static_cast<int64_t>(y.size()), m = sp.m;
  Vec base = y;
  v.s0.assign(static_cast<size_t>(m), 0.0);
  if (sp.seasonal != kNone) {
    const int64_t min_obs = 10 + 2 * (m / 2);
    int64_t cycles = std::min<int64_t>(5, n / m);
    cycles = std::max(cycles, (min_obs + m - 1) / m);
    const int64_t len = std::min(n, cycles * m);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Vec ma(static_cast<size_t>(len), nan);
    for (int64_t i = m / 2; i - m / 2 + m - 1 < len; ++i) {
      double s = 0.0;
      for (int64_t j = i - m / 2; j < i - m / 2 + m; ++j) s += y[j];
      ma[i] = s / static_cast<double>(m);
    }
    if (m % 2 == 0) {
      Vec two(static_cast<size_t>(len), nan);
      for (int64_t i = 0; i + 1 < len; ++i) two[i] = (ma[i] + ma[i + 1]) / 2.0;
      ma = two;
    }
    Vec sum(static_cast<size_t>(m), 0.0);
    std::vector<int64_t> cnt(static_cast<size_t>(m), 0);
    for (int64_t i = 0; i < len; ++i) {
      if (std::isnan(ma[i])) continue;
      sum[i % m] += sp.seasonal == kAdd ? y[i] - ma[i] : y[i] / ma[i];
      ++cnt[i % m];
    }
    double mean = 0.0;
    for (int64_t j = 0; j < m; ++j) {
      v.s0[j] = sum[j] / static_cast<double>(cnt[j]);
      mean += v.s0[j];
    }
    mean /= static_cast<double>(m);
    for (int64_t j = 0; j < m; ++j) v.s0[j] = sp.seasonal == kAdd ? v.s0[j] - mean : v.s0[j] / mean;
    base.clear();
    for (double a : ma)
      if (!std::isnan(a)) base.push_back(a);
  }
  // The least-squares line through base[0..10) at t = 1..10.
  double mean = 0.0;
  for (int64_t i = 0; i < 10; ++i) mean += base[i];
  mean /= 10.0;
  double sxy = 0.0;
  for (int64_t i = 0; i < 10; ++i) sxy += (static_cast<double>(i) - 4.5) * (base[i] - mean);
  const double slope = sxy / 82.5;
  v.l0 = mean - slope * 5.5;
  if (sp.trend == kAdd) v.b0 = slope;
  if (sp.trend == kMul) v.b0 = 1.0 + slope / v.l0;
}

constexpr double kLowerBound = 1.4901161193847656e-08;  // sqrt(2^-52)

class ExponentialSmoothing final : public lin::ParamEstimator, public Forecaster {
 public:
  ExponentialSmoothing()
      : lin::ParamEstimator("exponential_smoothing",
                            {{"damped_trend", K::boolean, "false"},
                             {"damping_trend", K::number_or_word, "none", 0.0, {"none"}},
                             {"initialization_method", K::choice, "estimated", 0, {"estimated", "heuristic"}},
                             {"max_iter", K::integer, "1000", 1},
                             {"seasonal", K::choice, "none", 0, {"none", "add", "mul"}},
                             {"seasonal_periods", K::integer, "0", 0},
                             {"smoothing_level", K::number_or_word, "none", 0.0, {"none"}},
                             {"smoothing_seasonal", K::number_or_word, "none", 0.0, {"none"}},
                             {"smoothing_trend", K::number_or_word, "none", 0.0, {"none"}},
                             {"trend", K::choice, "none", 0, {"none", "add", "mul"}},
                             {"use_brute", K::boolean, "true"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    const HwSpec sp = spec_from_params();
    Vec yv = ts::series_of(name_, y, 3);
    check_no_exog(X, static_cast<int64_t>(yv.size()), "fit");
    const int64_t n = static_cast<int64_t>(yv.size()), m = sp.m;
    if (sp.trend == kMul || sp.seasonal == kMul)
      for (int64_t i = 0; i < n; ++i)
        BL_CHECK(yv[i] > 0.0, name_, ": y[", i, "] = ", yv[i],
                 " is not positive; a multiplicative trend or seasonal component needs a positive series");
    const bool estimated = params_.text("initialization_method") == "estimated";
    if (m > 0)
      BL_CHECK(n >= 2 * m, name_, ": the series has ", n, " values, fewer than two full seasonal periods (2 x ",
               m, ") needed to initialize the seasonal component");
    const bool heuristic = !estimated || n >= 10 + 2 * (m / 2);
    if (!estimated)
      BL_CHECK(n >= 10 + 2 * (m / 2), name_, ": initialization_method=heuristic needs at least ",
               10 + 2 * (m / 2), " values (10 + 2 (seasonal_periods / 2)), the series has ", n);
    HwValues v;
    if (heuristic)
      initial_heuristic(sp, yv, v);
    else
      initial_simple(sp, yv, v);
    const std::string keys[4] = {"smoothing_level", "smoothing_trend", "smoothing_seasonal", "damping_trend"};
    bool given[4];
    double val[4];
    for (int k = 0; k < 4; ++k) {
      given[k] = params_.text(keys[k]) != "none";
      val[k] = given[k] ? params_.number(keys[k]) : 0.0;
      if (given[k] && k < 3)
        BL_CHECK(val[k] >= 0.0 && val[k] <= 1.0, name_, ": parameter ", keys[k], "=", val[k],
                 ": expected a value in [0, 1]");
    }
    if (given[3]) BL_CHECK(val[3] > 0.0 && val[3] <= 1.0, name_, ": damping_trend must be in (0, 1], got ", val[3]);
    v.alpha = given[0] ? val[0] : 0.5 / static_cast<double>(std::max<int64_t>(m, 1));
    v.beta = given[1] ? val[1] : 0.1 * v.alpha;
    v.gamma = given[2] ? val[2] : 0.05 * (1.0 - v.alpha);
    v.phi = sp.damped ? (given[3] ? val[3] : 0.99) : 1.0;
    // Free parameters: alpha, beta, gamma, l0, b0, phi, s0[0..m) (statsmodels' order).
    bool sel[6];
    sel[0] = !given[0];
    sel[1] = sp.trend != kNone && !given[1];
    sel[2] = sp.seasonal != kNone && !given[2];
    sel[3] = estimated;
    sel[4] = estimated && sp.trend != kNone;
    sel[5] = sp.damped && !given[3];
    const bool sel_s = estimated && sp.seasonal != kNone;
    n_iter_ = 0;
    if (sel[0] || sel[1] || sel[2] || sel[3] || sel[5]) optimize(sp, yv, sel, sel_s, v);
    sp_ = sp;
    v_ = v;
    y_ = std::move(yv);
    refresh();
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    BL_CHECK(fitted_, name_, ": predict before fit");
    const int64_t n = static_cast<int64_t>(y_.size());
    BL_CHECK(X.defined() && X.ndim() == 2 && X.dim(0) == n, name_,
             ": predict gives the in-sample one-step predictions of the ", n,
             " fitted rows (X with that many rows); forecast gives the steps after them");
    check_no_exog(X, n, "predict");
    std::vector<float> out(run_.fitted.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(run_.fitted[i]);
    return Tensor::from_vector(out, {n});
  }

  Forecast forecast(int64_t steps, const Tensor& exog, double alpha) const override {
    BL_CHECK(fitted_, name_, ": forecast before fit");
    ts::check_forecast_args(name_, steps, alpha);
    if (exog.defined())
      BL_CHECK(exog.ndim() == 2 && exog.dim(1) == 0, name_,
               ": takes no exogenous regressors; forecast's exog must be empty");
    Forecast f;
    f.mean = run_hw(sp_, v_, y_, steps).fcast;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    f.lower.assign(static_cast<size_t>(steps), nan);
    f.upper.assign(static_cast<size_t>(steps), nan);
    if (sp_.trend == kMul || sp_.seasonal == kMul) return f;
    const double sigma2 = run_.sse / static_cast<double>(y_.size());
    const double z = prep::normal_quantile64(1.0 - alpha / 2.0);
    double acc = 1.0, phi_pow = 1.0, phi_j = 0.0;
    for (int64_t h = 1; h <= steps; ++h) {
      if (h > 1) {
        const int64_t j = h - 1;
        if (sp_.damped) {
          phi_pow *= v_.phi;
          phi_j += phi_pow;
        } else {
          phi_j = static_cast<double>(j);
        }
        double c = v_.alpha;
        if (sp_.trend == kAdd) c += v_.alpha * v_.beta * phi_j;
        if (sp_.seasonal == kAdd && j % sp_.m == 0) c += v_.gamma;
        acc += c * c;
      }
      const double half = z * std::sqrt(sigma2 * acc);
      f.lower[h - 1] = f.mean[h - 1] - half;
      f.upper[h - 1] = f.mean[h - 1] + half;
    }
    return f;
  }

  void save_state(nlohmann::json& state) const override {
    BL_CHECK(fitted_, name_, ": save before fit");
    state["n_obs"] = static_cast<int64_t>(y_.size());
    state["n_iter"] = n_iter_;
    state["series_f64"] = density_detail::f64_to_hex(y_);
    state["values_f64"] = density_detail::f64_to_hex(values_vector());
    state["stats_f64"] = density_detail::f64_to_hex(stats_);
  }

  void load_state(const nlohmann::json& state) override {
    const HwSpec sp = spec_from_params();
    const int64_t n = lin::get_int(state, "n_obs", 3, name_);
    BL_CHECK(n <= (int64_t{1} << 40), name_, ": n_obs ", n, " is too large");
    Vec y = prep::get_finite_f64(state, "series_f64", n, name_);
    Vec vals = prep::get_finite_f64(state, "values_f64", 6 + sp.m, name_);
    HwValues v;
    v.alpha = vals[0]; v.beta = vals[1]; v.gamma = vals[2]; v.phi = vals[3]; v.l0 = vals[4]; v.b0 = vals[5];
    v.s0.assign(vals.begin() + 6, vals.end());
    sp_ = sp;
    v_ = v;
    y_ = std::move(y);
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    refresh();
    fitted_ = true;
  }

 private:
  HwSpec spec_from_params() const {
    HwSpec sp;
    auto comp = [](const std::string& t) { return t == "add" ? kAdd : t == "mul" ? kMul : kNone; };
    sp.trend = comp(params_.text("trend"));
    sp.seasonal = comp(params_.text("seasonal"));
    sp.damped = params_.boolean("damped_trend");
    BL_CHECK(!sp.damped || sp.trend != kNone, name_, ": damped_trend=true needs a trend (trend=add or mul)");
    if (sp.seasonal != kNone) {
      sp.m = params_.integer("seasonal_periods");
      BL_CHECK(sp.m >= 2, name_, ": seasonal=", params_.text("seasonal"),
               " needs seasonal_periods >= 2, got ", sp.m);
    }
    return sp;
  }

  void check_no_exog(const Tensor& X, int64_t n, const char* what) const {
    if (!X.defined()) return;
    BL_CHECK(X.ndim() == 2 && X.dim(0) == n, name_, ": ", what, ": X must be [", n, ", 0] (one row per value)");
    BL_CHECK(X.dim(1) == 0, name_, ": takes no exogenous regressors (X has ", X.dim(1),
             " columns); fit it on a data file holding only the target column");
  }

  Vec values_vector() const {
    Vec out = {v_.alpha, v_.beta, v_.gamma, v_.phi, v_.l0, v_.b0};
    out.insert(out.end(), v_.s0.begin(), v_.s0.end());
    return out;
  }

  // The fitted values and SSE of the current values, and [sse, aic, aicc, bic].
  void refresh() {
    run_ = run_hw(sp_, v_, y_, 0);
    const double n = static_cast<double>(y_.size());
    const double k = static_cast<double>(sp_.m + 2 * (sp_.trend != kNone) + 2 + (sp_.damped ? 1 : 0));
    const double ll = n * log64(run_.sse / n);
    const double aic = ll + 2.0 * k;
    const double dof = n - k - 3.0;
    const double aicc = dof > 0 ? aic + 2.0 * (k + 2.0) * (k + 3.0) / dof : std::numeric_limits<double>::infinity();
    stats_ = {run_.sse, aic, aicc, ll + k * log64(n)};
  }

  void optimize(const HwSpec& sp, const Vec& y, const bool sel[6], bool sel_s, HwValues& v) {
    const int64_t m = sp.m;
    const bool any_mul = sp.trend == kMul || sp.seasonal == kMul;
    // Grid search over the free smoothing parameters at the initial states (statsmodels' use_brute).
    if (params_.boolean("use_brute") && (sel[0] || sel[1] || sel[2])) {
      double best = std::numeric_limits<double>::infinity();
      Vec best_pt;
      for (const Vec& pt : brute_points(sel, v.alpha)) {
        HwValues t = v;
        size_t q = 0;
        if (sel[0]) t.alpha = pt[q++];
        if (sel[1]) t.beta = pt[q++];
        if (sel[2]) t.gamma = pt[q++];
        const double sse = run_hw(sp, t, y, 0).sse;
        if (best_pt.empty()) best_pt = pt;
        if (sse < best) {
          best = sse;
          best_pt = pt;
        }
      }
      size_t q = 0;
      if (sel[0]) v.alpha = best_pt[q++];
      if (sel[1]) v.beta = best_pt[q++];
      if (sel[2]) v.gamma = best_pt[q++];
    }
    // The free coordinates: u_alpha, u_beta, u_gamma in [0, 1], l0, b0, phi, s0 (bounded as statsmodels).
    const double inf = std::numeric_limits<double>::infinity();
    Vec x, lo, hi;
    auto strictly_in = [](double p, double l, double u) {
      if (p <= l) return l + 1e-4 * ((std::isfinite(u) ? u : 100.0) - l);
      if (p >= u) return u - 1e-4 * (u - (std::isfinite(l) ? l : -100.0));
      return p;
    };
    const double a_lo = kLowerBound, a_hi = 1.0 - kLowerBound;
    const double a0 = strictly_in(v.alpha, 0.0, 1.0);
    auto add = [&](double p, double l, double u) {
      x.push_back(p);
      lo.push_back(l);
      hi.push_back(u);
    };
    if (sel[0]) add((a0 - a_lo) / (a_hi - a_lo), 0.0, 1.0);
    const double a_use = sel[0] ? a0 : v.alpha;
    if (sel[1]) add(strictly_in(v.beta, 0.0, 1.0) / std::min(a_use, 1.0), 0.0, 1.0);
    if (sel[2]) add(strictly_in(v.gamma, 0.0, 1.0) / std::min(1.0 - a_use, 1.0), 0.0, 1.0);
    if (sel[3]) add(strictly_in(v.l0, any_mul ? 0.0 : -inf, inf), any_mul ? 0.0 : -inf, inf);
    if (sel[4]) {
      const double l = sp.trend == kMul ? 0.0 : -inf;
      add(strictly_in(v.b0, l, inf), l, inf);
    }
    if (sel[5]) add(strictly_in(v.phi, 0.8, 0.995), 0.8, 0.995);
    if (sel_s) {
      const double l = sp.seasonal == kMul ? 0.0 : -inf;
      for (int64_t j = 0; j < m; ++j) add(strictly_in(v.s0[j], l, inf), l, inf);
    }
    const HwValues base = v;
    auto unpack = [&](const Vec& u) {
      HwValues t = base;
      size_t q = 0;
      if (sel[0]) t.alpha = a_lo + u[q++] * (a_hi - a_lo);
      if (sel[1]) t.beta = u[q++] * std::min(t.alpha, 1.0);
      if (sel[2]) t.gamma = u[q++] * std::min(1.0 - t.alpha, 1.0);
      if (sel[3]) t.l0 = u[q++];
      if (sel[4]) t.b0 = u[q++];
      if (sel[5]) t.phi = u[q++];
      if (sel_s)
        for (int64_t j = 0; j < m; ++j) t.s0[j] = u[q++];
      return t;
    };
    auto objective = [&](const Vec& u) { return run_hw(sp, unpack(u), y, 0).sse; };
    ts::BoxMinResult res = ts::minimize_box64(objective, x, lo, hi, params_.integer("max_iter"), 1e-14, 1e-12);
    v = unpack(res.x);
    n_iter_ = res.n_iter;
  }

  HwSpec sp_;
  HwValues v_;
  Vec y_;
  HwRun run_;
  Vec stats_;
  int64_t n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_exponential_smoothing() { return std::make_unique<ExponentialSmoothing>(); }

}  // namespace bl::ml
