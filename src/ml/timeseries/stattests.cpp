// stattests.cpp: see stattests.h.
#include "ml/timeseries/stattests.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "ml/host_math.h"
#include "ml/timeseries/ts_numerics.h"

namespace bl::ml::ts {

namespace {

void check_series(const char* what, const std::vector<double>& x, size_t min_n) {
  BL_CHECK(x.size() >= min_n, what, ": the series has ", x.size(), " values, at least ", min_n, " are needed");
  for (size_t i = 0; i < x.size(); ++i) BL_CHECK(std::isfinite(x[i]), what, ": x[", i, "] is not finite");
}

std::vector<double> demeaned(const std::vector<double>& x) {
  double s = 0.0;
  for (double v : x) s += v;
  const double mean = s / static_cast<double>(x.size());
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] - mean;
  return out;
}

// sum_{t >= k} a_t a_{t-k}.
double lag_product(const std::vector<double>& a, int64_t k) {
  double s = 0.0;
  for (size_t t = static_cast<size_t>(k); t < a.size(); ++t) s += a[t] * a[t - k];
  return s;
}

// floor(10 log10 n) (exact where n is a power of 10).
int64_t ten_log10(int64_t n) {
  int64_t p = 1, j = 0;
  while (p < n && p <= (int64_t{1} << 58)) {
    p *= 10;
    ++j;
  }
  if (p == n) return 10 * j;
  return static_cast<int64_t>(std::floor(10.0 * log64(static_cast<double>(n)) / log64(10.0)));
}

// (v / 100)^(1/4) by two square roots.
int64_t schwert_lags(int64_t n) {
  return static_cast<int64_t>(std::ceil(12.0 * std::sqrt(std::sqrt(static_cast<double>(n) / 100.0))));
}

}  // namespace

std::vector<double> acf(const std::vector<double>& x, int64_t nlags, bool adjusted) {
  check_series("acf", x, 2);
  const int64_t n = static_cast<int64_t>(x.size());
  if (nlags < 0) nlags = std::min(ten_log10(n), n - 1);
  BL_CHECK(nlags <= n - 1, "acf: nlags ", nlags, " must be < the series length ", n);
  const std::vector<double> d = demeaned(x);
  const double c0 = lag_product(d, 0) / static_cast<double>(n);
  BL_CHECK(c0 > 0.0, "acf: the series is constant");
  std::vector<double> out(static_cast<size_t>(nlags + 1));
  for (int64_t k = 0; k <= nlags; ++k)
    out[k] = (lag_product(d, k) / static_cast<double>(adjusted ? n - k : n)) / c0;
  return out;
}

std::vector<double> pacf(const std::vector<double>& x, int64_t nlags, const std::string& method) {
  check_series("pacf", x, 4);
  BL_CHECK(method == "ywadjusted" || method == "ywmle", "pacf: method must be ywadjusted or ywmle, got ", method);
  const int64_t n = static_cast<int64_t>(x.size());
  if (nlags < 0) nlags = std::min(ten_log10(n), n / 2 - 1);
  nlags = std::max<int64_t>(nlags, 1);
  BL_CHECK(nlags <= n / 2, "pacf: nlags ", nlags, " must be at most half the series length (", n / 2, ")");
  const std::vector<double> d = demeaned(x);
  std::vector<double> r(static_cast<size_t>(nlags + 1));
  for (int64_t k = 0; k <= nlags; ++k)
    r[k] = lag_product(d, k) / static_cast<double>(method == "ywadjusted" ? n - k : n);
  BL_CHECK(r[0] > 0.0, "pacf: the series is constant");
  // Levinson-Durbin: phi the AR(k) coefficients, v the innovation variance.
  std::vector<double> out(static_cast<size_t>(nlags + 1));
  out[0] = 1.0;
  std::vector<double> phi, prev;
  double v = r[0];
  for (int64_t k = 1; k <= nlags; ++k) {
    double num = r[k];
    for (int64_t j = 1; j < k; ++j) num -= phi[j - 1] * r[k - j];
    const double kk = num / v;
    prev = phi;
    phi.assign(static_cast<size_t>(k), 0.0);
    for (int64_t j = 1; j < k; ++j) phi[j - 1] = prev[j - 1] - kk * prev[k - j - 1];
    phi[k - 1] = kk;
    v *= 1.0 - kk * kk;
    out[k] = kk;
  }
  return out;
}

namespace {

struct MacKinnon {
  const char* name;
  double tau_max, tau_min, tau_star;
  double small[3], large[4];
  double crit[3][4];  // 1 %, 5 %, 10 %: coefficients of 1, 1/T, 1/T^2, 1/T^3
};

// MacKinnon (1994) p-value coefficients and (2010) critical-value response surfaces, one variable.
const MacKinnon kTables[4] = {
    {"n", std::numeric_limits<double>::infinity(), -19.04, -1.04, {0.6344, 1.2378, 3.2496},
     {0.4797, 9.3557, -0.6999, 3.3066},
     {{-2.56574, -2.2358, -3.627, 0}, {-1.94100, -0.2686, -3.365, 31.223}, {-1.61682, 0.2656, -2.714, 25.364}}},
    {"c", 2.74, -18.83, -1.61, {2.1659, 1.4412, 3.8269}, {1.7339, 9.3202, -1.2745, -1.0368},
     {{-3.43035, -6.5393, -16.786, -79.433}, {-2.86154, -2.8903, -4.234, -40.040}, {-2.56677, -1.5384, -2.809, 0}}},
    {"ct", 0.7, -16.18, -2.89, {3.2512, 1.6047, 4.9588}, {2.5261, 6.1654, -3.7956, -6.0285},
     {{-3.95877, -9.0531, -28.428, -134.155}, {-3.41049, -4.3904, -9.036, -45.374},
      {-3.12705, -2.5856, -3.925, -22.380}}},
    {"ctt", 0.54, -17.17, -3.21, {4.0003, 1.658, 4.8288}, {3.0778, 4.9529, -4.1477, -5.9359},
     {{-4.37113, -11.5882, -35.819, -334.047}, {-3.83239, -5.9057, -12.490, -118.284},
      {-3.55326, -3.6596, -5.293, -63.559}}}};

const MacKinnon& table_of(const std::string& regression) {
  for (const MacKinnon& t : kTables)
    if (regression == t.name) return t;
  throw Error("adfuller: regression must be c, ct, ctt or n, got " + regression);
}

}  // namespace

double mackinnon_p(double stat, const std::string& regression) {
  const MacKinnon& t = table_of(regression);
  if (stat > t.tau_max) return 1.0;
  if (stat < t.tau_min) return 0.0;
  double y;
  if (stat <= t.tau_star) {
    y = ((t.small[2] * 1e-2) * stat + t.small[1]) * stat + t.small[0];
  } else {
    y = (((t.large[3] * 1e-2) * stat + t.large[2] * 1e-1) * stat + t.large[1] * 1e-1) * stat + t.large[0];
  }
  return normal_cdf64(y);
}

namespace {

// The ADF design for p lagged differences over the last `rows` usable rows: level, then p lagged
// differences, with the deterministic columns first (prepend) or last.
struct Design {
  std::vector<double> X, y;
  int64_t n = 0, k = 0;
};

Design adf_design(const std::vector<double>& x, int64_t rows, int64_t p, int64_t ncols_lag, const std::string& reg,
                  bool prepend) {
  const int64_t nx = static_cast<int64_t>(x.size());
  const int64_t ntrend = reg == "n" ? 0 : static_cast<int64_t>(reg.size());
  Design d;
  d.n = rows;
  d.k = ntrend + ncols_lag;
  d.X.reserve(static_cast<size_t>(rows * d.k));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = nx - 1 - rows + r;  // the row's time: y = x[t+1] - x[t]
    std::vector<double> det;
    if (ntrend >= 1) det.push_back(1.0);
    if (ntrend >= 2) det.push_back(static_cast<double>(r + 1));
    if (ntrend >= 3) det.push_back(static_cast<double>(r + 1) * static_cast<double>(r + 1));
    std::vector<double> lag;
    lag.push_back(x[t]);
    for (int64_t j = 1; j < ncols_lag; ++j) lag.push_back(x[t - j + 1] - x[t - j]);
    if (prepend) d.X.insert(d.X.end(), det.begin(), det.end());
    d.X.insert(d.X.end(), lag.begin(), lag.end());
    if (!prepend) d.X.insert(d.X.end(), det.begin(), det.end());
    d.y.push_back(x[t + 1] - x[t]);
  }
  (void)p;
  return d;
}

constexpr double kLog2Pi = 1.8378770664093454836;

}  // namespace

AdfResult adfuller(const std::vector<double>& x, int64_t maxlag, const std::string& regression,
                   const std::string& autolag) {
  check_series("adfuller", x, 4);
  table_of(regression);
  BL_CHECK(autolag == "aic" || autolag == "bic" || autolag == "none", "adfuller: autolag must be aic, bic or none, got ",
           autolag);
  const auto [mn, mx] = std::minmax_element(x.begin(), x.end());
  BL_CHECK(*mn != *mx, "adfuller: the series is constant");
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t ntrend = regression == "n" ? 0 : static_cast<int64_t>(regression.size());
  if (maxlag < 0) {
    maxlag = std::min(n / 2 - ntrend - 1, schwert_lags(n));
    BL_CHECK(maxlag >= 0, "adfuller: the series (", n, " values) is too short for regression ", regression);
  } else {
    BL_CHECK(maxlag <= n / 2 - ntrend - 1, "adfuller: maxlag ", maxlag, " must be at most n/2 - 1 - ntrend = ",
             n / 2 - ntrend - 1);
  }
  AdfResult res;
  int64_t used = maxlag;
  res.icbest = std::numeric_limits<double>::quiet_NaN();
  if (autolag != "none") {
    const int64_t rows = n - 1 - maxlag;
    double best = std::numeric_limits<double>::infinity();
    int64_t best_lag = 0;
    for (int64_t p = 0; p <= maxlag; ++p) {
      Design d = adf_design(x, rows, p, p + 1, regression, true);
      LeastSquares ls;
      BL_CHECK(least_squares64(d.X, d.n, d.k, d.y, ls), "adfuller: the regression with ", p,
               " lags is singular");
      const double nn = static_cast<double>(rows);
      const double llf = -nn / 2.0 * kLog2Pi - nn / 2.0 * log64(ls.ssr / nn) - nn / 2.0;
      const double pen = autolag == "aic" ? 2.0 : log64(nn);
      const double ic = -2.0 * llf + pen * static_cast<double>(d.k);
      if (ic < best) {
        best = ic;
        best_lag = p;
      }
    }
    used = best_lag;
    res.icbest = best;
  }
  const int64_t rows = n - 1 - used;
  Design d = adf_design(x, rows, used, used + 1, regression, false);
  LeastSquares ls;
  BL_CHECK(least_squares64(d.X, d.n, d.k, d.y, ls), "adfuller: the regression is singular");
  BL_CHECK(d.n > d.k, "adfuller: the series is too short for the regression");
  const double sigma2 = ls.ssr / static_cast<double>(d.n - d.k);
  res.statistic = ls.coef[0] / std::sqrt(sigma2 * ls.xtx_inv_diag[0]);
  res.pvalue = mackinnon_p(res.statistic, regression);
  res.used_lag = used;
  res.nobs = rows;
  const MacKinnon& t = table_of(regression);
  const double inv = 1.0 / static_cast<double>(rows);
  for (int l = 0; l < 3; ++l) res.crit[l] = ((t.crit[l][3] * inv + t.crit[l][2]) * inv + t.crit[l][1]) * inv + t.crit[l][0];
  return res;
}

KpssResult kpss(const std::vector<double>& x, const std::string& regression, int64_t nlags) {
  check_series("kpss", x, 3);
  BL_CHECK(regression == "c" || regression == "ct", "kpss: regression must be c or ct, got ", regression);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<double> r;
  static const double kCritC[4] = {0.347, 0.463, 0.574, 0.739}, kCritCt[4] = {0.119, 0.146, 0.176, 0.216};
  const double* crit = regression == "c" ? kCritC : kCritCt;
  if (regression == "c") {
    r = demeaned(x);
  } else {
    std::vector<double> X(static_cast<size_t>(2 * n));
    for (int64_t i = 0; i < n; ++i) {
      X[2 * i] = 1.0;
      X[2 * i + 1] = static_cast<double>(i + 1);
    }
    LeastSquares ls;
    BL_CHECK(least_squares64(X, n, 2, x, ls), "kpss: the trend regression is singular");
    r.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) r[i] = x[i] - (ls.coef[0] + ls.coef[1] * static_cast<double>(i + 1));
  }
  const double nd = static_cast<double>(n);
  if (nlags == -1) {
    const int64_t cov = static_cast<int64_t>(exp64(log64(nd) * (2.0 / 9.0)));
    double s0 = lag_product(r, 0) / nd, s1 = 0.0;
    for (int64_t i = 1; i <= cov; ++i) {
      const double prod = lag_product(r, i) / (nd / 2.0);
      s0 += prod;
      s1 += static_cast<double>(i) * prod;
    }
    const double s_hat = s1 / s0;
    const double sq = s_hat * s_hat;
    const double gam = 1.1447 * (sq > 0.0 ? exp64(log64(sq) * (1.0 / 3.0)) : 0.0);
    nlags = std::min(static_cast<int64_t>(gam * exp64(log64(nd) * (1.0 / 3.0))), n - 1);
  } else if (nlags == -2) {
    nlags = std::min(schwert_lags(n), n - 1);
  } else {
    BL_CHECK(nlags >= 0 && nlags < n, "kpss: nlags ", nlags, " must be in [0, ", n, ")");
  }
  double cs = 0.0, eta = 0.0;
  for (double v : r) {
    cs += v;
    eta += cs * cs;
  }
  eta /= nd * nd;
  double s_hat = lag_product(r, 0);
  for (int64_t i = 1; i <= nlags; ++i)
    s_hat += 2.0 * lag_product(r, i) * (1.0 - static_cast<double>(i) / (static_cast<double>(nlags) + 1.0));
  s_hat /= nd;
  BL_CHECK(s_hat > 0.0, "kpss: the long-run variance is not positive (a constant series?)");
  KpssResult res;
  res.statistic = eta / s_hat;
  res.lags = nlags;
  static const double kP[4] = {0.10, 0.05, 0.025, 0.01};
  const double s = res.statistic;
  if (s <= crit[0]) {
    res.pvalue = kP[0];
  } else if (s >= crit[3]) {
    res.pvalue = kP[3];
  } else {
    int j = 0;
    while (!(s < crit[j + 1])) ++j;
    const double slope = (kP[j + 1] - kP[j]) / (crit[j + 1] - crit[j]);
    res.pvalue = slope * (s - crit[j]) + kP[j];
  }
  for (int i = 0; i < 4; ++i) res.crit[i] = crit[i];
  return res;
}

}  // namespace bl::ml::ts
