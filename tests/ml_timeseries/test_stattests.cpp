// test_stattests.cpp: acf, pacf, adfuller and kpss (ml/timeseries/stattests.h) on the airline series
// against statsmodels 0.15's values (printed with 17 digits) within 1e-10, the normal CDF against
// known values, and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ml/timeseries/stattests.h"
#include "ml/timeseries/ts_numerics.h"
#include "ml_common/family_checks.h"
#include "ml_timeseries/series_data.h"

namespace bl {
namespace {

using ml_common::expect_refusal_names;

void near(double got, double want, double tol, const char* what) {
  EXPECT_NEAR(got, want, tol * std::max(1.0, std::fabs(want))) << what;
}

TEST(TimeSeriesStatTests, AcfPacfMatchStatsmodels) {
  const std::vector<double> y = ts_test::airline();
  ASSERT_EQ(y.size(), 144u) << "tests/data/timeseries/airline.csv";
  const std::vector<double> a = ml::ts::acf(y);
  ASSERT_EQ(a.size(), 22u);  // nlags = min(floor(10 log10 144), 143) = 21
  EXPECT_EQ(a[0], 1.0);
  near(a[1], 0.9480473407524915, 1e-10, "acf 1");
  near(a[5], 0.7137699726519645, 1e-10, "acf 5");
  near(a[21], 0.4572237571141587, 1e-10, "acf 21");
  const std::vector<double> p = ml::ts::pacf(y);
  ASSERT_EQ(p.size(), 22u);
  near(p[1], 0.9546770424360757, 1e-10, "pacf 1");
  near(p[2], -0.2652773166601224, 1e-10, "pacf 2");
  near(p[13], -0.7183246035212676, 1e-10, "pacf 13");
  near(p[21], -0.0936381004996632, 1e-10, "pacf 21");
  const std::vector<double> pm = ml::ts::pacf(y, -1, "ywmle");
  near(pm[2], -0.22942187411717838, 1e-10, "pacf ywmle 2");
  near(pm[13], -0.5396912419071258, 1e-10, "pacf ywmle 13");
}

TEST(TimeSeriesStatTests, AdfullerMatchesStatsmodels) {
  const std::vector<double> y = ts_test::airline();
  struct Case {
    const char* reg;
    double stat, p, c1, c5, c10, ic;
  };
  const Case cases[] = {
      {"c", 0.8153688792060528, 0.9918802434376411, -3.4816817173418295, -2.8840418343195267, -2.578770059171598,
       996.692930839019},
      {"ct", -2.1007818138446708, 0.5456589343124544, -4.030152423759672, -3.444817634956759, -3.1471816659080565,
       993.2814778200581},
      {"ctt", -3.2336779226436256, 0.1959418739703177, -4.462541514337733, -3.8786113536640876, -3.5817528944014563,
       988.811952559496},
      {"n", 2.3906017343512316, 0.9971802685434736, -2.583153076923077, -1.9432510546199364, -1.614925969959035,
       997.0955704315448}};
  for (const Case& c : cases) {
    const ml::ts::AdfResult r = ml::ts::adfuller(y, -1, c.reg, "aic");
    EXPECT_EQ(r.used_lag, 13) << c.reg;
    EXPECT_EQ(r.nobs, 130) << c.reg;
    near(r.statistic, c.stat, 1e-10, c.reg);
    near(r.pvalue, c.p, 1e-10, c.reg);
    near(r.crit[0], c.c1, 1e-12, c.reg);
    near(r.crit[1], c.c5, 1e-12, c.reg);
    near(r.crit[2], c.c10, 1e-12, c.reg);
    near(r.icbest, c.ic, 1e-10, c.reg);
  }
}

TEST(TimeSeriesStatTests, KpssMatchesStatsmodels) {
  const std::vector<double> y = ts_test::airline();
  ml::ts::KpssResult r = ml::ts::kpss(y, "c");
  EXPECT_EQ(r.lags, 8);
  near(r.statistic, 1.6513122354165206, 1e-10, "kpss c");
  EXPECT_EQ(r.pvalue, 0.01);
  r = ml::ts::kpss(y, "ct");
  EXPECT_EQ(r.lags, 4);
  near(r.statistic, 0.09614984853532406, 1e-10, "kpss ct");
  EXPECT_EQ(r.pvalue, 0.1);
  r = ml::ts::kpss(y, "c", -2);
  EXPECT_EQ(r.lags, 14);
  near(r.statistic, 1.0521750110135095, 1e-10, "kpss legacy");
}

TEST(TimeSeriesStatTests, NormalCdf) {
  EXPECT_EQ(ml::ts::normal_cdf64(0.0), 0.5);
  near(ml::ts::normal_cdf64(1.959963984540054), 0.975, 1e-15, "Phi(z_0.975)");
  near(ml::ts::normal_cdf64(-1.0), 0.15865525393145707, 1e-15, "Phi(-1)");
  near(ml::ts::normal_cdf64(-4.0), 3.167124183311986e-05, 1e-13, "Phi(-4)");
  near(ml::ts::normal_cdf64(-8.0), 6.22096057427174e-16, 1e-12, "Phi(-8)");
  near(ml::ts::normal_cdf64(2.5), 0.9937903346742238, 1e-15, "Phi(2.5)");
}

TEST(TimeSeriesStatTests, RefusalsAreNamed) {
  const std::vector<double> y = ts_test::airline();
  expect_refusal_names([&] { ml::ts::acf({1.0}); }, "acf: the series has 1 values");
  expect_refusal_names([&] { ml::ts::acf({1.0, 1.0, 1.0}); }, "constant");
  expect_refusal_names([&] { ml::ts::pacf(y, 100); }, "at most half");
  expect_refusal_names([&] { ml::ts::pacf(y, 3, "burg"); }, "method");
  expect_refusal_names([&] { ml::ts::adfuller(std::vector<double>(20, 2.0)); }, "constant");
  expect_refusal_names([&] { ml::ts::adfuller(y, 100); }, "maxlag");
  expect_refusal_names([&] { ml::ts::adfuller(y, -1, "x"); }, "regression");
  expect_refusal_names([&] { ml::ts::kpss(y, "ctt"); }, "regression");
  expect_refusal_names([&] { ml::ts::kpss(y, "c", 144); }, "nlags");
  std::vector<double> bad = y;
  bad[3] = std::nan("");
  expect_refusal_names([&] { ml::ts::kpss(bad); }, "x[3] is not finite");
}

}  // namespace
}  // namespace bl
