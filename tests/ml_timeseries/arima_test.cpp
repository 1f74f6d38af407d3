// arima_test.cpp: arima and sarimax (src/ml/timeseries/arima.cpp, arima_model.h). The Kalman-filter
// log-likelihood against the exact Gaussian likelihood of the full covariance matrix of the
// differenced series (autocovariances from the MA(infinity) weights, a dense Cholesky factor: an
// independent binary64 reference) to 1e-12 relative, with a sabotage arm (the same filter started
// from a zero state covariance must miss it); the Monahan / Jones transform and its inverse;
// forecasts of AR(1) and the random walk against their closed forms; the fit at a local maximum;
// identical bytes at 1, 2 and 3 threads; the model file round trip; the iteration-limit warning;
// named refusals of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "conformance/test_rng_splitmix.h"
#include "ml/timeseries/arima_model.h"
#include "ml/timeseries/forecaster.h"
#include "ml_common/family_checks.h"
#include "ml_timeseries/series_data.h"

namespace bl {
namespace {

using Vec = std::vector<double>;
namespace ar = ml::arima;

// The product of two polynomials in B (coefficient of B^k at k).
Vec poly_mul(const Vec& a, const Vec& b) {
  Vec c(a.size() + b.size() - 1, 0.0);
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) c[i + j] += a[i] * b[j];
  return c;
}

// 1 - sum c_i B^(lag i) (sign -1: AR) or 1 + sum c_i B^(lag i) (sign +1: MA).
Vec lag_poly(const Vec& c, int64_t lag, double sign) {
  Vec p(static_cast<size_t>(c.size() * lag + 1), 0.0);
  p[0] = 1.0;
  for (size_t i = 0; i < c.size(); ++i) p[(i + 1) * lag] = sign * c[i];
  return p;
}

// The exact log-likelihood of w under phi(B) w = theta(B) e (phi, theta as polynomials with
// constant 1), e ~ N(0, sigma2): autocovariances from 2000 MA(infinity) weights, the dense n x n
// covariance, its Cholesky factor.
double reference_loglike(const Vec& phi, const Vec& theta, double sigma2, const Vec& w) {
  const int64_t n = static_cast<int64_t>(w.size()), terms = 2000;
  Vec psi(static_cast<size_t>(terms), 0.0);
  for (int64_t j = 0; j < terms; ++j) {
    double v = j < static_cast<int64_t>(theta.size()) ? theta[j] : 0.0;
    for (int64_t i = 1; i < static_cast<int64_t>(phi.size()) && i <= j; ++i) v -= phi[i] * psi[j - i];
    psi[j] = v;
  }
  Vec gamma(static_cast<size_t>(n), 0.0);
  for (int64_t h = 0; h < n; ++h) {
    double s = 0.0;
    for (int64_t j = 0; j + h < terms; ++j) s += psi[j] * psi[j + h];
    gamma[h] = sigma2 * s;
  }
  Vec L(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = gamma[i - j];
      for (int64_t k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = i == j ? std::sqrt(s) : s / L[j * n + j];
    }
  Vec z = w;
  double logdet = 0.0, q = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < i; ++k) z[i] -= L[i * n + k] * z[k];
    z[i] /= L[i * n + i];
    q += z[i] * z[i];
    logdet += 2.0 * std::log(L[i * n + i]);
  }
  return -0.5 * (static_cast<double>(n) * std::log(2.0 * M_PI) + logdet + q);
}

// A seeded series: an ARMA-ish signal plus a trend and an exogenous effect.
struct Series {
  Vec y, x;
};
Series simulated(int64_t n, uint64_t seed, int64_t k_exog) {
  test_rng::SplitMix64 rng(seed);
  Series s;
  double prev = 0.0, e_prev = 0.0;
  for (int64_t t = 0; t < n; ++t) {
    const double e = rng.uniform_pm1();
    double xt = 0.0;
    for (int64_t j = 0; j < k_exog; ++j) {
      const double v = rng.uniform_pm1();
      s.x.push_back(v);
      xt += (j + 1.0) * v;
    }
    prev = 0.6 * prev + e + 0.3 * e_prev;
    e_prev = e;
    s.y.push_back(5.0 + 0.05 * static_cast<double>(t) + prev + xt);
  }
  return s;
}

void expect_rel(double got, double want, double tol, const char* what) {
  EXPECT_LE(std::fabs(got - want), tol * std::fabs(want)) << what << ": " << got << " vs " << want;
}

TEST(ArimaLikelihood, MatchesFullCovarianceReference) {
  const Series s = simulated(40, 11, 0);
  // ARMA(2, 1) with a constant.
  ar::Spec a;
  a.p = 2;
  a.q = 1;
  a.trend = "c";
  const Vec pa = {5.5, 0.5, -0.3, 0.4};
  Vec w(s.y.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = s.y[i] - 5.5;
  const Vec z = ar::design(a, {}, 40, 0);
  expect_rel(ar::loglike(a, pa, 1.7, s.y, z),
             reference_loglike(lag_poly({0.5, -0.3}, 1, -1.0), lag_poly({0.4}, 1, 1.0), 1.7, w), 1e-12, "ARMA(2,1)");
  // Sabotage: the filter started at a zero state covariance (a conditional likelihood) misses it.
  {
    double cond = 0.0;
    Vec e(w.size(), 0.0);  // one-step errors of the recursion from zero pre-sample values
    for (size_t t = 0; t < w.size(); ++t) {
      double pred = 0.0;
      if (t >= 1) pred += 0.5 * w[t - 1] + 0.4 * e[t - 1];
      if (t >= 2) pred += -0.3 * w[t - 2];
      e[t] = w[t] - pred;
      cond += e[t] * e[t];
    }
    const double conditional = -0.5 * (40.0 * std::log(2.0 * M_PI * 1.7) + cond / 1.7);
    EXPECT_GT(std::fabs(conditional - ar::loglike(a, pa, 1.7, s.y, z)), 1e-6);
  }
  // Seasonal SARIMA(1,1,1)(1,0,1,4) with a time trend and two regressors: the reference differences
  // y - X beta itself.
  const Series s2 = simulated(48, 12, 2);
  ar::Spec b;
  b.p = 1;
  b.d = 1;
  b.q = 1;
  b.P = 1;
  b.Q = 1;
  b.s = 4;
  b.trend = "t";
  b.k_exog = 2;
  const Vec pb = {0.04, 0.9, 2.1, 0.3, -0.2, 0.5, 0.35};
  Vec u(48);
  for (int64_t t = 0; t < 48; ++t)
    u[t] = s2.y[t] - 0.04 * static_cast<double>(t + 1) - 0.9 * s2.x[t * 2] - 2.1 * s2.x[t * 2 + 1];
  Vec w2;
  for (int64_t t = 1; t < 48; ++t) w2.push_back(u[t] - u[t - 1]);
  const Vec phi = poly_mul(lag_poly({0.3}, 1, -1.0), lag_poly({0.5}, 4, -1.0));
  const Vec theta = poly_mul(lag_poly({-0.2}, 1, 1.0), lag_poly({0.35}, 4, 1.0));
  const Vec zb = ar::design(b, s2.x, 48, 0);
  const double ref = reference_loglike(phi, theta, 0.8, w2);
  expect_rel(ar::loglike(b, pb, 0.8, s2.y, zb), ref, 1e-12, "SARIMA(1,1,1)(1,0,1,4)");
  // The concentrated likelihood is the full one at sigma2 = its estimate.
  double s2hat = 0.0;
  const double lc = ar::loglike_concentrated(b, pb, s2.y, zb, &s2hat);
  expect_rel(lc, ar::loglike(b, pb, s2hat, s2.y, zb), 1e-13, "concentrated");
  // A non-stationary AR part has no stationary start: -inf.
  EXPECT_TRUE(std::isinf(ar::loglike(a, {5.5, 1.2, 0.1, 0.0}, 1.0, s.y, z)));
}

TEST(ArimaTransform, RoundTripAndStationarity) {
  const Vec u = {0.7, -1.9, 3.0, 0.2};
  const Vec c = ar::constrain_stationary(u);
  Vec P;
  EXPECT_TRUE(ar::stationary_covariance(c, {}, P));
  Vec back;
  ASSERT_TRUE(ar::unconstrain_stationary(c, back));
  for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(back[i], u[i], 1e-12 * (1.0 + std::fabs(u[i])));
  EXPECT_FALSE(ar::unconstrain_stationary({1.1}, back));
  EXPECT_FALSE(ar::stationary_covariance({1.0}, {}, P));
  EXPECT_FALSE(ar::stationary_covariance({0.5, 0.6}, {}, P));  // root inside the unit circle
  // AR(1): the stationary variance is 1 / (1 - phi^2).
  ASSERT_TRUE(ar::stationary_covariance({0.8}, {}, P));
  expect_rel(P[0], 1.0 / (1.0 - 0.64), 1e-14, "AR(1) variance");
}

TEST(ArimaForecast, ClosedForms) {
  const Series s = simulated(60, 21, 0);
  // AR(1) with mean mu: mean_h = mu + phi^h (y_n - mu), var_h = sigma2 sum_{j<h} phi^2j.
  ar::Spec a;
  a.p = 1;
  a.trend = "c";
  Vec mean, var;
  ar::forecast(a, {4.0, 0.7}, 2.0, s.y, {}, {}, 5, mean, var);
  double pw = 1.0, acc = 0.0;
  for (int h = 0; h < 5; ++h) {
    acc += pw * pw;
    pw *= 0.7;
    expect_rel(mean[h], 4.0 + pw * (s.y.back() - 4.0), 1e-13, "AR(1) mean");
    expect_rel(var[h], 2.0 * acc, 1e-13, "AR(1) variance");
  }
  // Random walk ARIMA(0,1,0): mean y_n, var h sigma2.
  ar::Spec rw;
  rw.d = 1;
  ar::forecast(rw, {}, 0.5, s.y, {}, {}, 4, mean, var);
  for (int h = 0; h < 4; ++h) {
    EXPECT_EQ(mean[h], s.y.back());
    expect_rel(var[h], 0.5 * (h + 1), 1e-14, "random walk variance");
  }
}

Tensor f32_tensor(const Vec& v, std::vector<int64_t> shape) {
  return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), shape);
}

TEST(ArimaFit, LocalMaximumAndForecastInterface) {
  const Series s = simulated(120, 31, 1);
  auto est = ml::make_estimator("arima", {{"p", "1"}, {"q", "1"}, {"trend", "ct"}});
  est->fit(f32_tensor(s.x, {120, 1}), f32_tensor(s.y, {120}));
  const nlohmann::json st = ml_common::state_of(*est);
  const Vec params = ml_common::f64_field(st, "params");
  const double llf = ml_common::f64_field(st, "llf")[0];
  ASSERT_EQ(params.size(), 5u);
  EXPECT_NEAR(params[3], 0.6, 0.2);  // the simulated AR coefficient
  // Every small move of one parameter lowers the (concentrated) likelihood.
  ar::Spec sp;
  sp.p = 1;
  sp.q = 1;
  sp.trend = "ct";
  sp.k_exog = 1;
  Vec y(s.y.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(s.y[i]);
  Vec x(s.x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(s.x[i]);
  const Vec z = ar::design(sp, x, 120, 0);
  expect_rel(ar::loglike_concentrated(sp, params, y, z, nullptr), llf, 1e-15, "stored llf");
  for (size_t i = 0; i < params.size(); ++i)
    for (double h : {-1e-3, 1e-3}) {
      Vec p = params;
      p[i] += h * std::max(1.0, std::fabs(p[i]));
      EXPECT_LT(ar::loglike_concentrated(sp, p, y, z, nullptr), llf) << "parameter " << i;
    }
  // aic / bic from llf (k = 5 parameters + sigma2, nobs = 120).
  expect_rel(ml_common::f64_field(st, "aic")[0], -2.0 * llf + 12.0, 1e-15, "aic");
  expect_rel(ml_common::f64_field(st, "bic")[0], -2.0 * llf + 6.0 * std::log(120.0), 1e-13, "bic");
  // Forecast through the interface; the interval is symmetric and widens.
  const auto* fc = dynamic_cast<const ml::Forecaster*>(est.get());
  ASSERT_NE(fc, nullptr);
  ml::Forecast f = fc->forecast(3, Tensor::from_vector(std::vector<float>{0.1f, -0.2f, 0.3f}, {3, 1}), 0.1);
  ASSERT_EQ(f.mean.size(), 3u);
  for (int h = 0; h < 3; ++h) EXPECT_NEAR(f.upper[h] - f.mean[h], f.mean[h] - f.lower[h], 1e-9);
  EXPECT_LT(f.upper[0] - f.lower[0], f.upper[2] - f.lower[2]);
  // The model file round trip: same file, same predictions and forecasts.
  auto loaded = ml::estimator_from_json_text(est->to_json_text());
  EXPECT_EQ(loaded->to_json_text(), est->to_json_text());
  const Tensor X = f32_tensor(s.x, {120, 1});
  EXPECT_EQ(loaded->predict(X).to_vector<float>(), est->predict(X).to_vector<float>());
  ml::Forecast g = dynamic_cast<const ml::Forecaster*>(loaded.get())
                       ->forecast(3, Tensor::from_vector(std::vector<float>{0.1f, -0.2f, 0.3f}, {3, 1}), 0.1);
  EXPECT_EQ(g.mean, f.mean);
  EXPECT_EQ(g.lower, f.lower);
  // A state with a non-stationary AR coefficient, a NaN in y or a short params field is refused.
  auto refused = [&](const nlohmann::json& j, const std::string& part) {
    ml_common::expect_refusal_names(
        [&] { ml::make_estimator("arima", {{"p", "1"}, {"q", "1"}, {"trend", "ct"}})->load_state(j); }, part);
  };
  nlohmann::json bad = st;
  Vec moved = params;
  moved[3] = 1.5;
  std::vector<int64_t> bits(5);
  std::memcpy(bits.data(), moved.data(), 5 * sizeof(double));
  bad["params"] = ml::i64_to_hex(bits);
  refused(bad, "not stationary");
  bad = st;
  bad["params"] = ml::i64_to_hex(std::vector<int64_t>(bits.begin(), bits.begin() + 4));
  refused(bad, "params");
  bad = st;
  Vec ynan = ml_common::f64_field(st, "y");
  ynan[2] = std::nan("");
  std::vector<int64_t> ybits(ynan.size());
  std::memcpy(ybits.data(), ynan.data(), ynan.size() * sizeof(double));
  bad["y"] = ml::i64_to_hex(ybits);
  refused(bad, "'y'");
}

TEST(ArimaFit, SameBytesAtThreads123) {
  const Series s = simulated(80, 41, 1);
  ml_common::HostData data;
  data.n = 80;
  data.d = 1;
  data.x.assign(s.x.begin(), s.x.end());
  data.y.assign(s.y.begin(), s.y.end());
  const ml::Params params = {{"p", "1"}, {"q", "1"}, {"seasonal_p", "1"}, {"s", "4"}, {"trend", "ct"}};
  ml_common::expect_same_bytes_at_threads_123("sarimax", params, data.X(), data.Y(), data.X());
  ml_common::expect_input_change_moves_the_model("sarimax", params, data, 3.0f);
  // The airline series (log) with the airline model, no regressors.
  std::vector<float> air;
  for (double v : ts_test::airline()) air.push_back(static_cast<float>(std::log(v)));
  const Tensor ya = Tensor::from_vector(air, {144});
  const Tensor none = Tensor::zeros({144, 0});
  ml_common::expect_same_bytes_at_threads_123(
      "sarimax", {{"p", "0"}, {"d", "1"}, {"q", "1"}, {"seasonal_d", "1"}, {"seasonal_q", "1"}, {"s", "12"}}, none,
      ya, none);
}

TEST(ArimaFit, IterationLimitWarns) {
  const Series s = simulated(60, 51, 0);
  ml::WarningCollector warnings;
  auto est = ml::make_estimator("arima", {{"p", "2"}, {"q", "1"}, {"trend", "c"}, {"max_iter", "1"}});
  est->fit(Tensor::zeros({60, 0}), f32_tensor(s.y, {60}));
  ASSERT_FALSE(warnings.messages().empty());
  EXPECT_NE(warnings.messages()[0].find("max_iter=1"), std::string::npos) << warnings.messages()[0];
}

TEST(ArimaFit, BadInputIsRefusedByName) {
  const Series s = simulated(30, 61, 0);
  const Tensor none = Tensor::zeros({30, 0});
  const Tensor y = f32_tensor(s.y, {30});
  auto refuse = [&](const ml::Params& p, const Tensor& X, const Tensor& yy, const std::string& part) {
    ml_common::expect_refusal_names([&] { ml::make_estimator("sarimax", p)->fit(X, yy); }, part, part.c_str());
  };
  refuse({{"p", "-1"}}, none, y, "p");
  refuse({{"p", "20"}, {"q", "20"}}, none, y, "too short for the order");
  refuse({{"d", "1"}, {"seasonal_d", "1"}, {"s", "30"}}, none, y, "seasonal_d * s = 31");
  refuse({{"seasonal_p", "1"}}, none, y, "seasonal period");
  refuse({{"d", "1"}, {"trend", "c"}}, none, y, "differencing");
  std::vector<float> nan_y(s.y.begin(), s.y.end());
  nan_y[7] = std::nanf("");
  refuse({}, none, Tensor::from_vector(nan_y, {30}), "y[7]");
  refuse({}, Tensor::zeros({29, 1}), y, "rows");
  auto est = ml::make_estimator("sarimax", {});
  est->fit(none, y);
  const auto* fc = dynamic_cast<const ml::Forecaster*>(est.get());
  ml_common::expect_refusal_names([&] { fc->forecast(0, Tensor(), 0.05); }, "steps", "steps 0");
  ml_common::expect_refusal_names([&] { fc->forecast(2, Tensor(), 1.5); }, "alpha", "alpha 1.5");
  ml_common::expect_refusal_names([&] { fc->forecast(2, Tensor::zeros({2, 1}), 0.05); }, "exogenous", "exog");
  ml_common::expect_refusal_names([&] { est->predict(Tensor::zeros({30, 1})); }, "columns", "predict width");
}

TEST(ArimaParams, StatsmodelsOrderSpellings) {
  auto a = ml::make_estimator("sarimax", {{"order", "(2,1,1)"}, {"seasonal_order", "1, 1, 0, 12"}});
  auto b = ml::make_estimator("sarimax", {{"p", "2"}, {"d", "1"}, {"q", "1"}, {"seasonal_p", "1"},
                                          {"seasonal_d", "1"}, {"seasonal_q", "0"}, {"s", "12"}});
  EXPECT_EQ(a->get_params(), b->get_params());
  ml_common::expect_refusal_names([&] { ml::make_estimator("arima", {{"order", "1,1"}}); }, "p,d,q", "short order");
  ml_common::expect_refusal_names([&] { ml::make_estimator("arima", {{"seasonal_order", "1,1,0,12"}}); },
                                  "unknown parameter", "seasonal order of arima");
}

}  // namespace
}  // namespace bl
