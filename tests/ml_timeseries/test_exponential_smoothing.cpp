// test_exponential_smoothing.cpp: exponential_smoothing (src/ml/timeseries/) against a float64
// recursion written here from the textbook formulas (simple and Holt smoothing with given
// parameters and heuristic initial values, within 1e-12, prediction intervals included), against
// statsmodels 0.15's values on the airline series (SSE no larger, forecasts within 1e-6), identical
// bytes at threads 1, 2 and 3 with a sabotage arm (one ulp of y moves the model), the state round
// trip, the CLI's no-feature fit shape (X [n, 0]), and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml/timeseries/forecaster.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml_common/family_checks.h"
#include "ml_timeseries/series_data.h"

namespace bl {
namespace {

using ml_common::error_of;
using ml_common::expect_refusal_names;
using ml_common::f64_field;
using ml_common::state_of;

Tensor series_tensor(const std::vector<double>& y) {
  std::vector<float> f(y.begin(), y.end());
  return Tensor::from_vector(f, {static_cast<int64_t>(f.size())});
}
Tensor no_columns(int64_t n) { return Tensor::zeros({n, 0}); }

std::unique_ptr<ml::Estimator> fit_es(const std::vector<double>& y, const ml::Params& p) {
  auto est = ml::make_estimator("exponential_smoothing", p);
  est->fit(no_columns(static_cast<int64_t>(y.size())), series_tensor(y));
  return est;
}

const ml::Forecaster& as_forecaster(const ml::Estimator& est) {
  const auto* f = dynamic_cast<const ml::Forecaster*>(&est);
  EXPECT_NE(f, nullptr);
  return *f;
}

// The heuristic level and trend: the least-squares line through y[0..10) at t = 1..10.
void line10(const std::vector<double>& y, double& l0, double& b0) {
  double m = 0.0;
  for (int i = 0; i < 10; ++i) m += y[i];
  m /= 10.0;
  double sxy = 0.0, sxx = 0.0;
  for (int i = 0; i < 10; ++i) {
    sxy += (i + 1 - 5.5) * (y[i] - m);
    sxx += (i + 1 - 5.5) * (i + 1 - 5.5);
  }
  b0 = sxy / sxx;
  l0 = m - b0 * 5.5;
}

void near(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::max(1.0, std::fabs(want))) << what;
}

TEST(ExponentialSmoothing, SimpleAndHoltWithGivenParametersMatchTheRecursion) {
  std::vector<double> y = ts_test::airline();
  ASSERT_EQ(y.size(), 144u) << "tests/data/timeseries/airline.csv";
  y.resize(20);
  const double z = ml::prep::normal_quantile64(0.975);
  for (bool holt : {false, true}) {
    const double a = holt ? 0.4 : 0.3, b = 0.2;
    ml::Params p = {{"smoothing_level", std::to_string(a)}, {"initialization_method", "heuristic"}};
    if (holt) p.insert({{"trend", "add"}, {"smoothing_trend", std::to_string(b)}});
    auto est = fit_es(y, p);
    double l, tr;
    line10(y, l, tr);
    if (!holt) tr = 0.0;
    std::vector<double> fitted;
    double sse = 0.0;
    for (double v : y) {
      const double f = l + tr;
      fitted.push_back(f);
      sse += (f - v) * (f - v);
      const double ln = a * v + (1 - a) * (l + tr);
      if (holt) tr = b * (ln - l) + (1 - b) * tr;
      l = ln;
    }
    const std::vector<float> pred = est->predict(no_columns(20)).to_vector<float>();
    for (size_t i = 0; i < fitted.size(); ++i) EXPECT_EQ(pred[i], static_cast<float>(fitted[i])) << i;
    near(f64_field(state_of(*est), "stats_f64")[0], sse, 1e-12, "SSE");
    const ml::Forecast f = as_forecaster(*est).forecast(5, Tensor(), 0.05);
    double acc = 1.0;
    for (int h = 1; h <= 5; ++h) {
      if (h > 1) {
        const double c = a * (1 + (holt ? b * (h - 1) : 0.0));
        acc += c * c;
      }
      const double mean = l + h * tr, half = z * std::sqrt(sse / 20.0 * acc);
      near(f.mean[h - 1], mean, 1e-12, "mean h=" + std::to_string(h));
      near(f.lower[h - 1], mean - half, 1e-12, "lower");
      near(f.upper[h - 1], mean + half, 1e-12, "upper");
    }
  }
  // statsmodels 0.15 (ExponentialSmoothing(..., initialization_method="heuristic").fit(...,
  // optimized=False)) on the same 20 values.
  auto ses = fit_es(y, {{"smoothing_level", "0.3"}, {"initialization_method", "heuristic"}});
  near(f64_field(state_of(*ses), "stats_f64")[0], 5133.105842331506, 1e-12, "statsmodels SSE (simple)");
  near(as_forecaster(*ses).forecast(2, Tensor(), 0.05).mean[0], 152.60518826989298, 1e-12, "statsmodels forecast");
  auto holt = fit_es(y, {{"smoothing_level", "0.4"}, {"smoothing_trend", "0.2"}, {"trend", "add"},
                         {"initialization_method", "heuristic"}});
  near(f64_field(state_of(*holt), "stats_f64")[0], 4884.438322145592, 1e-12, "statsmodels SSE (Holt)");
  near(as_forecaster(*holt).forecast(3, Tensor(), 0.05).mean[2], 178.62216619100647, 1e-12, "statsmodels Holt");
}

TEST(ExponentialSmoothing, AirlineMatchesStatsmodels) {
  const std::vector<double> y = ts_test::airline();
  // statsmodels 0.15: ExponentialSmoothing(y, trend="add", seasonal="mul", seasonal_periods=12).fit()
  auto est = fit_es(y, {{"trend", "add"}, {"seasonal", "mul"}, {"seasonal_periods", "12"}});
  const std::vector<double> st = f64_field(state_of(*est), "stats_f64");
  EXPECT_LE(st[0], 15952.880435010864 * (1 + 1e-12));  // SSE: no larger than statsmodels'
  near(st[0], 15952.880435010864, 1e-8, "SSE");
  near(st[1], 709.8917192771407, 1e-10, "aic");
  const std::vector<double> v = f64_field(state_of(*est), "values_f64");
  near(v[0], 0.31858660179002635, 1e-4, "alpha");
  near(v[2], 0.6013535031917566, 1e-4, "gamma");
  const ml::Forecast f = as_forecaster(*est).forecast(14, Tensor(), 0.05);
  const double want[] = {445.24240105, 418.22535059, 465.30970583, 494.95120809, 505.47584599};
  for (int h = 0; h < 5; ++h) near(f.mean[h], want[h], 1e-6, "forecast " + std::to_string(h + 1));
  // A multiplicative component: no closed-form interval.
  EXPECT_TRUE(std::isnan(f.lower[0]) && std::isnan(f.upper[0]));
}

TEST(ExponentialSmoothing, SameBytesAtThreads123AndOneUlpMovesTheModel) {
  const std::vector<double> y = ts_test::airline();
  const ml::Params p = {{"trend", "add"}, {"damped_trend", "true"}, {"seasonal", "add"}, {"seasonal_periods", "12"}};
  ml_common::expect_same_bytes_at_threads_123("exponential_smoothing", p, no_columns(144), series_tensor(y),
                                              no_columns(144));
  auto a = fit_es(y, p);
  std::vector<float> moved(y.begin(), y.end());
  uint32_t bits;
  std::memcpy(&bits, &moved[0], 4);
  ++bits;
  std::memcpy(&moved[0], &bits, 4);
  auto b = ml::make_estimator("exponential_smoothing", p);
  b->fit(no_columns(144), Tensor::from_vector(moved, {144}));
  EXPECT_NE(a->to_json_text(), b->to_json_text()) << "one ulp of y[0] left the model unchanged";
}

TEST(ExponentialSmoothing, StateRoundTrip) {
  const std::vector<double> y = ts_test::airline();
  auto est = fit_es(y, {{"trend", "add"}, {"seasonal", "add"}, {"seasonal_periods", "12"}});
  auto back = ml::estimator_from_json_text(est->to_json_text());
  EXPECT_EQ(back->to_json_text(), est->to_json_text());
  const ml::Forecast f = as_forecaster(*est).forecast(30, Tensor(), 0.1);
  const ml::Forecast g = as_forecaster(*back).forecast(30, Tensor(), 0.1);
  EXPECT_EQ(std::memcmp(f.mean.data(), g.mean.data(), 30 * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(f.upper.data(), g.upper.data(), 30 * sizeof(double)), 0);
  EXPECT_EQ(back->predict(no_columns(144)).to_vector<float>(), est->predict(no_columns(144)).to_vector<float>());
  nlohmann::json st = state_of(*est);
  st["values_f64"] = "00";
  ml_common::expect_state_refused("exponential_smoothing", st, "values_f64");
}

TEST(ExponentialSmoothing, RefusalsAreNamed) {
  const std::vector<double> y = ts_test::airline();
  const std::string n = "exponential_smoothing";
  std::vector<double> short_y(y.begin(), y.begin() + 20);
  expect_refusal_names([&] { fit_es(short_y, {{"seasonal", "add"}, {"seasonal_periods", "12"}}); },
                       "fewer than two full seasonal periods");
  std::vector<double> nan_y = y;
  nan_y[7] = std::numeric_limits<double>::quiet_NaN();
  expect_refusal_names([&] { fit_es(nan_y, {}); }, "y[7] is nan");
  std::vector<double> neg = y;
  neg[3] = 0.0;
  expect_refusal_names([&] { fit_es(neg, {{"trend", "mul"}}); }, "y[3] = 0 is not positive");
  expect_refusal_names([&] { fit_es(neg, {{"seasonal", "mul"}, {"seasonal_periods", "4"}}); }, "not positive");
  expect_refusal_names([&] { fit_es(y, {{"seasonal", "add"}}); }, "seasonal_periods >= 2");
  expect_refusal_names([&] { fit_es(y, {{"damped_trend", "true"}}); }, "needs a trend");
  expect_refusal_names([&] { fit_es(y, {{"smoothing_level", "1.5"}}); }, "[0, 1]");
  expect_refusal_names([&] { ml::make_estimator(n, {{"seasonal", "quadratic"}}); }, "seasonal");
  // 17 values hold two periods of 8 but not the heuristic's 10 + 2 (8 / 2) = 18 values.
  std::vector<double> y17(y.begin(), y.begin() + 17);
  expect_refusal_names([&] { fit_es(y17, {{"initialization_method", "heuristic"}, {"trend", "add"},
                                          {"seasonal", "add"}, {"seasonal_periods", "8"}}); },
                       "10 + 2 (seasonal_periods / 2)");
  fit_es(y17, {{"trend", "add"}, {"seasonal", "add"}, {"seasonal_periods", "8"}});  // "estimated": simple start
  auto wide = ml::make_estimator(n);
  expect_refusal_names([&] { wide->fit(Tensor::zeros({144, 2}), series_tensor(y)); }, "no exogenous regressors");
  auto unfitted = ml::make_estimator(n);
  expect_refusal_names([&] { as_forecaster(*unfitted).forecast(3, Tensor(), 0.05); }, "forecast before fit");
  auto est = fit_es(y, {});
  const ml::Forecaster& f = as_forecaster(*est);
  expect_refusal_names([&] { f.forecast(0, Tensor(), 0.05); }, "steps must be in [1");
  expect_refusal_names([&] { f.forecast(-3, Tensor(), 0.05); }, "steps must be in [1");
  expect_refusal_names([&] { f.forecast(3, Tensor(), 0.0); }, "alpha must be in (0, 1)");
  expect_refusal_names([&] { f.forecast(3, Tensor(), 1.5); }, "alpha must be in (0, 1)");
  expect_refusal_names([&] { f.forecast(3, Tensor::zeros({3, 1}), 0.05); }, "no exogenous regressors");
  expect_refusal_names([&] { est->predict(no_columns(10)); }, "in-sample one-step predictions");
}

}  // namespace
}  // namespace bl
