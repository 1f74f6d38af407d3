// test_quantile_power.cpp: quantile_transformer and power_transformer (src/ml/preprocessing/
// quantile_transformer.cpp, power_transformer.cpp) and their binary64 helpers (host_numerics.h).
// The helpers against the C library and scipy's normal quantiles; quantile_transformer's quantiles
// exactly as numpy's linear percentiles at linspace references, its transform exactly on small
// columns (a run of tied quantiles maps to the middle of its references: the sabotage arm is the
// one-sided interpolation, which gives another value), the normal output's clipping; power
// transformer's lambda against a float64 likelihood evaluated with the C library (a maximum: the
// likelihood at lambda +- 1e-3 is lower), its transform against float64, constant columns,
// box-cox's refusals. Both: identical bytes at threads 1, 2 and 3, a moved input moves the model,
// the state round trip and refused states, each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::expect_refusal_names;
using ml_common::host_table;
using ml_common::state_of;
using ml_common::transform_of;

const char* const kNames[] = {"quantile_transformer", "power_transformer"};

// n rows of d skewed columns: column j = exp(2 u) - 0.5 j with u uniform in [-1, 1) (SplitMix64).
Data skewed(int64_t n, int64_t d, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> x;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j)
      x.push_back(static_cast<float>(std::exp(2.0 * rng.uniform_pm1()) - 0.5 * static_cast<double>(j)));
  return host_table(n, d, std::move(x));
}

TEST(PreprocessingHostNumerics, AgainstTheCLibraryAndScipy) {
  for (double x : {-0.75, -1e-9, 0.0, 1e-12, 3e-5, 0.5, 7.0, 1e6}) {
    EXPECT_NEAR(ml::prep::log1p64(x), std::log1p(x), 4e-16 * std::max(1e-300, std::fabs(std::log1p(x)))) << x;
    if (x < 100) EXPECT_NEAR(ml::prep::expm1_64(x / 8), std::expm1(x / 8), 1e-15 * std::fabs(std::expm1(x / 8))) << x;
  }
  // scipy.stats.norm.ppf at these points (printed to 16 digits).
  const std::pair<double, double> ref[] = {{0.975, 1.959963984540054},
                                           {1e-7 - 2.220446049250313e-16, -5.199337582605575},
                                           {1e-300, -37.0470962993612},
                                           {0.3, -0.5244005127080409},
                                           {1 - 1e-12, 7.0344869100478356}};
  for (const auto& [p, want] : ref) EXPECT_NEAR(ml::prep::normal_quantile64(p), want, 2e-15 * std::fabs(want)) << p;
  EXPECT_EQ(ml::prep::normal_quantile64(0.5), 0.0);
  EXPECT_EQ(ml::prep::normal_quantile64(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(ml::prep::normal_quantile64(1.0), std::numeric_limits<double>::infinity());
  // Brent's bounded search finds the minimum of a parabola, and stays in the bounds for a slope.
  EXPECT_NEAR(ml::prep::minimize_bounded([](double x) { return (x - 0.3) * (x - 0.3); }, -5, 5, 1e-10), 0.3, 1e-8);
  EXPECT_NEAR(ml::prep::minimize_bounded([](double x) { return x; }, -2, 3, 1e-10), -2.0, 1e-7);
}

std::vector<double> quantiles(const ml::Estimator& est) {
  return ml_common::f64_field(state_of(est), "quantiles_f64");
}

TEST(QuantileTransformer, QuantilesAsNumpyLinearAndTransformExact) {
  // 5 rows, n_quantiles 5: references k / 4 and virtual indices (5 - 1) k / 4 = k are exact.
  // Column 0 {4, 0, 3, 1, 2}: quantiles 0 .. 4; column 1 {0, 1, 1, 1, 9}: quantiles 0, 1, 1, 1, 9.
  const Data x = host_table(5, 2, {4, 0, 0, 1, 3, 1, 1, 1, 2, 9});
  auto est = ml::make_estimator("quantile_transformer", {{"n_quantiles", "5"}});
  est->fit(x.X());
  EXPECT_EQ(state_of(*est)["n_quantiles"], 5);
  const std::vector<double> q = quantiles(*est);
  const std::vector<double> c1 = {0, 1, 1, 1, 9};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(q[k * 2], static_cast<double>(k));
    EXPECT_EQ(q[k * 2 + 1], c1[k]);
  }
  // n_quantiles 3: references 0, 1/2, 1 at indices 0, 2, 4. More quantiles than rows: the row count.
  auto three = ml::make_estimator("quantile_transformer", {{"n_quantiles", "3"}});
  three->fit(x.X());
  EXPECT_EQ(quantiles(*three), (std::vector<double>{0, 0, 2, 1, 4, 9}));
  auto many = ml::make_estimator("quantile_transformer");
  many->fit(x.X());
  EXPECT_EQ(state_of(*many)["n_quantiles"], 5);
  // Between nodes: linear in both directions (2.5 -> 0.625; column 1: 2 -> 0.75 + 1/32, 5 -> 0.875).
  // Column 1's value 1 is the tied run of references 1/4 .. 3/4: the middle, 1/2 (the one-sided
  // interpolation, the sabotage arm, gives 3/4). Outside the quantiles: 0 and 1.
  const Data t = host_table(3, 2, {2.5f, 1.0f, -3.0f, 2.0f, 100.0f, 5.0f});
  const std::vector<float> z = transform_of(*est, t);
  EXPECT_EQ(z, (std::vector<float>{0.625f, 0.5f, 0.0f, 0.78125f, 1.0f, 0.875f}));
  EXPECT_NE(z[1], 0.75f);
  // Normal output: Phi^-1 of the uniform value, the ends clipped at Phi^-1(1e-7 - 2^-52) = -5.1993...
  auto normal = ml::make_estimator("quantile_transformer", {{"n_quantiles", "5"}, {"output_distribution", "normal"}});
  normal->fit(x.X());
  const std::vector<float> zn = transform_of(*normal, t);
  EXPECT_EQ(zn[0], static_cast<float>(ml::prep::normal_quantile64(0.625)));
  EXPECT_EQ(zn[1], 0.0f);
  EXPECT_EQ(zn[2], static_cast<float>(-5.199337582605575));
  EXPECT_EQ(zn[4], static_cast<float>(5.199337582605575));
  // The training column's order is kept: the transform is non-decreasing in x.
  const Data big = skewed(300, 3, 9);
  auto est2 = ml::make_estimator("quantile_transformer", {{"n_quantiles", "50"}});
  est2->fit(big.X());
  const std::vector<float> zb = transform_of(*est2, big);
  for (int64_t i = 0; i < big.n; ++i)
    for (int64_t k = 0; k < big.n; ++k)
      if (big.x[i * 3] < big.x[k * 3]) ASSERT_LE(zb[i * 3], zb[k * 3]);
}

// float64 references of the power transforms and the log-likelihood (C library functions).
double yj64(double x, double l) {
  if (x >= 0) return std::fabs(l) < 2.220446049250313e-16 ? std::log1p(x) : std::expm1(l * std::log1p(x)) / l;
  return std::fabs(l - 2) > 2.220446049250313e-16 ? -std::expm1((2 - l) * std::log1p(-x)) / (2 - l) : -std::log1p(-x);
}
double bc64(double x, double l) { return l == 0 ? std::log(x) : std::expm1(l * std::log(x)) / l; }

double log_likelihood(const std::vector<double>& col, double l, bool box) {
  double m = 0, s = 0;
  std::vector<double> t;
  for (double x : col) {
    t.push_back(box ? bc64(x, l) : yj64(x, l));
    m += t.back();
    s += box ? std::log(x) : (x < 0 ? -std::log1p(-x) : std::log1p(x));
  }
  m /= static_cast<double>(t.size());
  double v = 0;
  for (double y : t) v += (y - m) * (y - m);
  v /= static_cast<double>(t.size());
  return -static_cast<double>(t.size()) / 2 * std::log(v) + (l - 1) * s;
}

TEST(PowerTransformer, LambdaMaximizesTheLikelihoodAndTransformMatchesFloat64) {
  Data x = skewed(200, 3, 5);
  for (const char* method : {"yeo-johnson", "box-cox"}) {
    const bool box = std::string(method) == "box-cox";
    Data data = x;
    if (box)
      for (float& v : data.x) v = std::fabs(v) + 0.1f;
    for (bool standardize : {true, false}) {
      auto est = ml::make_estimator("power_transformer",
                                    {{"method", method}, {"standardize", standardize ? "true" : "false"}});
      est->fit(data.X());
      const nlohmann::json st = state_of(*est);
      const std::vector<double> lambdas = ml_common::f64_field(st, "lambdas_f64");
      const std::vector<float> z = transform_of(*est, data);
      for (int64_t j = 0; j < 3; ++j) {
        std::vector<double> col;
        for (int64_t i = 0; i < data.n; ++i) col.push_back(data.x[i * 3 + j]);
        const double l = lambdas[j], best = log_likelihood(col, l, box);
        // A maximum: 1e-3 away on either side the likelihood is lower (sabotage arm of the search).
        EXPECT_GT(best, log_likelihood(col, l + 1e-3, box)) << method << j;
        EXPECT_GT(best, log_likelihood(col, l - 1e-3, box)) << method << j;
        std::vector<double> t;
        double m = 0, v = 0;
        for (double c : col) {
          t.push_back(box ? bc64(c, l) : yj64(c, l));
          m += t.back();
        }
        m /= static_cast<double>(col.size());
        for (double y : t) v += (y - m) * (y - m);
        const double sd = std::sqrt(v / static_cast<double>(col.size()));
        for (int64_t i = 0; i < data.n; ++i) {
          const double want = standardize ? (t[i] - m) / sd : t[i];
          ASSERT_NEAR(z[i * 3 + j], want, 2.4e-7 * std::max(1.0, std::fabs(want))) << method << " " << i << "," << j;
        }
      }
    }
  }
  // A constant column: yeo-johnson keeps lambda 1 and standardizes it to 0; box-cox refuses it.
  Data c = skewed(20, 2, 3);
  for (int64_t i = 0; i < c.n; ++i) c.x[i * 2 + 1] = 2.5f;
  auto yj = ml::make_estimator("power_transformer");
  yj->fit(c.X());
  EXPECT_EQ(ml_common::f64_field(state_of(*yj), "lambdas_f64")[1], 1.0);
  const std::vector<float> zc = transform_of(*yj, c);
  for (int64_t i = 0; i < c.n; ++i) EXPECT_EQ(zc[i * 2 + 1], 0.0f);
  for (float& v : c.x) v = std::fabs(v) + 0.1f;
  const std::string m = error_of([&] { ml::make_estimator("power_transformer", {{"method", "box-cox"}})->fit(c.X()); });
  EXPECT_NE(m.find("column 1 is constant"), std::string::npos) << m;
}

TEST(QuantilePower, SameBytesAtThreads123AndChangesMoveTheModel) {
  Data train = skewed(700, 6, 31), test = skewed(300, 6, 32);
  for (const char* name : kNames) ml_common::expect_same_bytes_at_threads_123(name, {}, train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("quantile_transformer",
                                              {{"n_quantiles", "100"}, {"output_distribution", "normal"}}, train.X(),
                                              Tensor(), test.X());
  for (float& v : train.x) v = std::fabs(v) + 0.1f;
  for (float& v : test.x) v = std::fabs(v) + 0.1f;
  ml_common::expect_same_bytes_at_threads_123("power_transformer", {{"method", "box-cox"}}, train.X(), Tensor(),
                                              test.X());
  const Data small = skewed(9, 3, 5);
  for (const char* name : kNames) ml_common::expect_input_change_moves_the_model(name, {}, small, 50.0f);
}

TEST(QuantilePower, StateRoundTripGivesTheSameFileAndOutputs) {
  const Data train = skewed(60, 4, 41), test = skewed(20, 4, 42);
  ml_common::expect_transformer_state_round_trips(kNames, train.X(), test.X());
  // Quantiles out of order, or a non-positive scale, are refused naming the field.
  auto q = ml::make_estimator("quantile_transformer");
  q->fit(train.X());
  nlohmann::json st = state_of(*q);
  std::vector<double> v = ml_common::f64_field(st, "quantiles_f64");
  std::swap(v[0], v[4 * 59]);
  std::vector<int64_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));
  st["quantiles_f64"] = ml::i64_to_hex(bits);
  ml_common::expect_state_refused("quantile_transformer", st, "non-decreasing");
  auto p = ml::make_estimator("power_transformer");
  p->fit(train.X());
  st = state_of(*p);
  st["scale_f64"] = ml::i64_to_hex({0, 0, 0, 0});
  ml_common::expect_state_refused("power_transformer", st, "scale_f64");
}

TEST(QuantilePower, RefusalsAreNamed) {
  expect_refusal_names([] { ml::make_estimator("quantile_transformer", {{"n_quantiles", "0"}}); }, "n_quantiles");
  expect_refusal_names([] { ml::make_estimator("quantile_transformer", {{"output_distribution", "gamma"}}); },
                       "output_distribution");
  expect_refusal_names([] { ml::make_estimator("power_transformer", {{"method", "log"}}); }, "method");
  expect_refusal_names([] { ml::make_estimator("power_transformer", {{"standardize", "maybe"}}); }, "standardize");
  const Data x = skewed(10, 3, 1), other = skewed(5, 2, 2);
  Data nan = x;
  nan.x[4] = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : kNames) ml_common::expect_transformer_input_refusals(name, x, other, nan, "non-finite");
  // box-cox needs positive data, at fit and at transform.
  expect_refusal_names([&] { ml::make_estimator("power_transformer", {{"method", "box-cox"}})->fit(x.X()); },
                       "strictly positive");
  Data pos = x;
  for (float& v : pos.x) v = std::fabs(v) + 0.1f;
  auto box = ml::make_estimator("power_transformer", {{"method", "box-cox"}});
  box->fit(pos.X());
  expect_refusal_names([&] { box->transform(x.X()); }, "strictly positive");
  // A transform beyond binary32 is refused naming the column (lambda != 1: one of +-3e38 overflows).
  auto yj = ml::make_estimator("power_transformer");
  yj->fit(x.X());
  Data huge = x;
  huge.x[1] = 3e38f;
  huge.x[4] = -3e38f;
  expect_refusal_names([&] { yj->transform(huge.X()); }, "column 1");
}

}  // namespace
}  // namespace bl
