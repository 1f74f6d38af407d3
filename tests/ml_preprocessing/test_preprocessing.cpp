// test_preprocessing.cpp: the preprocessing transformers (src/ml/preprocessing/). standard_scaler,
// min_max_scaler and normalizer against float64 references (within a few binary32 ulps);
// max_abs_scaler exactly (one correctly rounded division); robust_scaler's median and quantiles
// exactly as numpy's linear interpolation on small columns; polynomial_features exactly (its
// column order and its binary32 product chains x_i1 (x_i2 (... x_ik))). All: identical bytes at threads 1, 2 and
// 3, a moved input moves the model (the sabotage arm of that check), the state round trip, and each
// refusal named (transform before fit, wrong width, NaN, bad parameters).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::expect_refusal_names;
using ml_common::state_f32;
using ml_common::state_of;
using ml_common::transform_of;

const char* const kNames[] = {"standard_scaler", "min_max_scaler", "max_abs_scaler", "robust_scaler", "normalizer",
                              "polynomial_features"};

// n rows of d columns: column j uniform in [-1, 1) times (j + 1) plus j (columns of different
// location and spread).
Data make_data(int64_t n, int64_t d, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    out.y.push_back(0.0f);
    for (int64_t j = 0; j < d; ++j)
      out.x.push_back(rng.uniform_pm1() * static_cast<float>(j + 1) + static_cast<float>(j));
  }
  return out;
}

// |a - b| within `ulps` binary32 ulps of b (relative 2^-23 each), with an absolute floor.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double ulps, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], ulps * 1.1920929e-7 * std::max(1.0, std::fabs(want[i]))) << what << " at " << i;
}

TEST(StandardScaler, MatchesFloat64AndConstantColumnsStayUnscaled) {
  Data x = make_data(37, 4, 3);
  for (int64_t i = 0; i < x.n; ++i) x.x[i * 4 + 3] = 0.1f;  // a constant column
  auto est = ml::make_estimator("standard_scaler");
  est->fit(x.X());
  std::vector<double> want(x.x.size());
  for (int64_t j = 0; j < 4; ++j) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < x.n; ++i) m += x.x[i * 4 + j];
    m /= static_cast<double>(x.n);
    for (int64_t i = 0; i < x.n; ++i) v += (x.x[i * 4 + j] - m) * (x.x[i * 4 + j] - m);
    v /= static_cast<double>(x.n);
    EXPECT_NEAR(state_f32(*est, "mean")[j], m, 1e-6 * std::max(1.0, std::fabs(m)));
    for (int64_t i = 0; i < x.n; ++i) want[i * 4 + j] = j == 3 ? 0.0 : (x.x[i * 4 + j] - m) / std::sqrt(v);
  }
  expect_close(transform_of(*est, x), want, 8, "standard_scaler");
  EXPECT_EQ(state_f32(*est, "mean")[3], 0.1f);
  EXPECT_EQ(state_f32(*est, "var")[3], 0.0f);
  EXPECT_EQ(state_f32(*est, "scale")[3], 1.0f);
  // with_mean=false divides only; with_std=false subtracts only.
  auto no_mean = ml::make_estimator("standard_scaler", {{"with_mean", "false"}});
  no_mean->fit(x.X());
  std::vector<float> s = state_f32(*est, "scale"), z = transform_of(*no_mean, x);
  for (size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[i], x.x[i] / s[i % 4]);
  auto no_std = ml::make_estimator("standard_scaler", {{"with_std", "false"}});
  no_std->fit(x.X());
  std::vector<float> mu = state_f32(*est, "mean");
  z = transform_of(*no_std, x);
  for (size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[i], x.x[i] - mu[i % 4]);
}

TEST(MinMaxScaler, MatchesFloat64InTheRangeAndClips) {
  const Data x = make_data(29, 3, 5);
  auto est = ml::make_estimator("min_max_scaler", {{"feature_range", "(-2, 3)"}});
  EXPECT_EQ(est->get_params().at("feature_range"), "-2,3");
  est->fit(x.X());
  std::vector<double> want(x.x.size());
  for (int64_t j = 0; j < 3; ++j) {
    double lo = 1e30, hi = -1e30;
    for (int64_t i = 0; i < x.n; ++i) {
      lo = std::min(lo, static_cast<double>(x.x[i * 3 + j]));
      hi = std::max(hi, static_cast<double>(x.x[i * 3 + j]));
    }
    for (int64_t i = 0; i < x.n; ++i) want[i * 3 + j] = -2.0 + 5.0 * (x.x[i * 3 + j] - lo) / (hi - lo);
  }
  expect_close(transform_of(*est, x), want, 64, "min_max_scaler");
  Data outside = x;
  outside.x[0] = 100.0f;
  outside.x[1] = -100.0f;
  auto clip = ml::make_estimator("min_max_scaler", {{"feature_range", "-2,3"}, {"clip", "true"}});
  clip->fit(x.X());
  std::vector<float> z = transform_of(*clip, outside);
  EXPECT_EQ(z[0], 3.0f);
  EXPECT_EQ(z[1], -2.0f);
  EXPECT_GT(transform_of(*est, outside)[0], 3.0f);
}

TEST(MaxAbsScaler, ExactDivisionByTheLargestMagnitude) {
  Data x = make_data(31, 3, 7);
  for (int64_t i = 0; i < x.n; ++i) x.x[i * 3 + 2] = 0.0f;  // all zero: scale 1
  auto est = ml::make_estimator("max_abs_scaler");
  est->fit(x.X());
  std::vector<float> m(3, 0.0f);
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t j = 0; j < 3; ++j) m[j] = std::max(m[j], std::fabs(x.x[i * 3 + j]));
  EXPECT_EQ(state_f32(*est, "max_abs"), m);
  m[2] = 1.0f;
  EXPECT_EQ(state_f32(*est, "scale"), m);
  std::vector<float> z = transform_of(*est, x);
  for (size_t i = 0; i < z.size(); ++i)
    ASSERT_EQ(z[i], static_cast<float>(static_cast<double>(x.x[i]) / static_cast<double>(m[i % 3])));
}

TEST(RobustScaler, MedianAndQuantilesAsNumpyLinear) {
  // Column 0: {1, 2, 3, 4, 10} (odd n): median 3, Q25 = 2, Q75 = 4. Column 1: {0, 1, 2, 3, 3}: median 2,
  // Q25 = 1, Q75 = 3. Rows in scrambled order (fit sorts).
  Data x;
  x.n = 5;
  x.d = 2;
  x.x = {4, 3, 10, 0, 1, 2, 3, 1, 2, 3};
  x.y.assign(5, 0.0f);
  auto est = ml::make_estimator("robust_scaler");
  est->fit(x.X());
  EXPECT_EQ(state_f32(*est, "center"), (std::vector<float>{3.0f, 2.0f}));
  EXPECT_EQ(state_f32(*est, "scale"), (std::vector<float>{2.0f, 2.0f}));
  // Even n = 4, {0, 1, 2, 3}: median 1.5; quantile_range (10, 90): index 0.3 -> 0.3, index 2.7 -> 2.7
  // (t = 0.7: b - (b - a) 0.3), scale 2.4 in binary64 rounded once.
  Data e;
  e.n = 4;
  e.d = 1;
  e.x = {3, 0, 2, 1};
  e.y.assign(4, 0.0f);
  auto q = ml::make_estimator("robust_scaler", {{"quantile_range", "[10, 90]"}});
  q->fit(e.X());
  EXPECT_EQ(state_f32(*q, "center"), (std::vector<float>{1.5f}));
  const double q90 = 3.0 - (3.0 - 2.0) * (1.0 - (0.9 * 3.0 - 2.0)), q10 = 0.0 + 1.0 * (0.1 * 3.0);
  EXPECT_EQ(state_f32(*q, "scale"), (std::vector<float>{static_cast<float>(q90 - q10)}));
  // Transform: (x - center) / scale in binary32.
  std::vector<float> z = transform_of(*est, x);
  for (int64_t i = 0; i < 5; ++i) {
    ASSERT_EQ(z[i * 2], (x.x[i * 2] - 3.0f) / 2.0f);
    ASSERT_EQ(z[i * 2 + 1], (x.x[i * 2 + 1] - 2.0f) / 2.0f);
  }
  auto none = ml::make_estimator("robust_scaler", {{"with_centering", "false"}, {"with_scaling", "false"}});
  none->fit(x.X());
  EXPECT_EQ(transform_of(*none, x), x.x);
  // A constant column: scale 1.
  Data c = e;
  c.x = {2, 2, 2, 2};
  q->fit(c.X());
  EXPECT_EQ(state_f32(*q, "scale"), (std::vector<float>{1.0f}));
}

TEST(Normalizer, RowNormsMatchFloat64AndZeroRowsStay) {
  Data x = make_data(23, 5, 11);
  for (int64_t j = 0; j < 5; ++j) x.x[7 * 5 + j] = 0.0f;  // a zero row
  x.x[3 * 5 + 1] = 1e30f;                                // no overflow in the l2 norm
  for (const char* norm : {"l1", "l2", "max"}) {
    auto est = ml::make_estimator("normalizer", {{"norm", norm}});
    est->fit(x.X());
    std::vector<double> want(x.x.size());
    for (int64_t i = 0; i < x.n; ++i) {
      double r = 0;
      for (int64_t j = 0; j < 5; ++j) {
        const double v = x.x[i * 5 + j];
        r = std::string(norm) == "l1" ? r + std::fabs(v) : std::string(norm) == "l2" ? r + v * v : std::max(r, std::fabs(v));
      }
      if (std::string(norm) == "l2") r = std::sqrt(r);
      for (int64_t j = 0; j < 5; ++j) want[i * 5 + j] = r == 0 ? 0.0 : x.x[i * 5 + j] / r;
    }
    expect_close(transform_of(*est, x), want, 8, norm);
  }
}

// The monomials of degree <= k in scikit-learn's order: index tuples i1 <= ... <= ik (strictly
// increasing for interaction_only), degree by degree, lexicographic within a degree.
void monomials(int64_t d, int64_t k, bool strict, int64_t first, std::vector<int64_t>& cur,
               std::vector<std::vector<int64_t>>& out) {
  if (static_cast<int64_t>(cur.size()) == k) {
    out.push_back(cur);
    return;
  }
  for (int64_t f = first; f < d; ++f) {
    cur.push_back(f);
    monomials(d, k, strict, strict ? f + 1 : f, cur, out);
    cur.pop_back();
  }
}

TEST(PolynomialFeatures, OrderAndProductChainsExact) {
  const Data x = make_data(13, 4, 17);
  for (bool strict : {false, true})
    for (bool bias : {true, false})
      for (int64_t degree : {1, 2, 3, 5}) {
        auto est = ml::make_estimator("polynomial_features", {{"degree", std::to_string(degree)},
                                                              {"interaction_only", strict ? "true" : "false"},
                                                              {"include_bias", bias ? "true" : "false"}});
        est->fit(x.X());
        std::vector<std::vector<int64_t>> terms;
        for (int64_t k = bias ? 0 : 1; k <= degree; ++k) {
          std::vector<int64_t> cur;
          monomials(4, k, strict, 0, cur, terms);
        }
        const int64_t m = static_cast<int64_t>(terms.size());
        EXPECT_EQ(state_of(*est)["n_output_features"].get<int64_t>(), m);
        Tensor Z = est->transform(x.X());
        ASSERT_EQ(Z.dim(1), m) << degree << strict << bias;
        std::vector<float> z = Z.to_vector<float>();
        for (int64_t i = 0; i < x.n; ++i)
          for (int64_t t = 0; t < m; ++t) {
            float want = 1.0f;  // x_i1 (x_i2 (... x_ik)): the product chain from the right
            const std::vector<int64_t>& term = terms[t];
            if (!term.empty()) want = x.x[i * 4 + term.back()];
            for (size_t r = term.size(); r-- > 1;) want = x.x[i * 4 + term[r - 1]] * want;
            ASSERT_EQ(z[i * m + t], want) << "degree " << degree << " row " << i << " term " << t;
          }
      }
  // degree 0: the bias column alone; without it no column, refused.
  auto zero = ml::make_estimator("polynomial_features", {{"degree", "0"}});
  zero->fit(x.X());
  EXPECT_EQ(zero->transform(x.X()).to_vector<float>(), std::vector<float>(13, 1.0f));
  auto empty = ml::make_estimator("polynomial_features", {{"degree", "0"}, {"include_bias", "false"}});
  expect_refusal_names([&] { empty->fit(x.X()); }, "no output column");
  auto huge = ml::make_estimator("polynomial_features", {{"degree", "1000"}});
  expect_refusal_names([&] { huge->fit(x.X()); }, "output columns");
  // A state whose column count does not match its parameters is refused.
  auto est = ml::make_estimator("polynomial_features");
  est->fit(x.X());
  nlohmann::json st = state_of(*est);
  st["n_output_features"] = 14;
  ml_common::expect_state_refused("polynomial_features", st, "n_output_features");
}

TEST(Preprocessing, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = make_data(700, 6, 31), test = make_data(300, 6, 32);
  for (const char* name : kNames) ml_common::expect_same_bytes_at_threads_123(name, {}, train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("min_max_scaler", {{"feature_range", "-1,1"}, {"clip", "true"}},
                                              train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("robust_scaler", {{"quantile_range", "5,95"}}, train.X(), Tensor(),
                                              test.X());
  const Data small = make_data(9, 3, 5);
  // X[0, 0] = 50 is the new maximum, minimum of magnitude and an outlier of the quantiles' column.
  for (const char* name : {"standard_scaler", "min_max_scaler", "max_abs_scaler", "robust_scaler"})
    ml_common::expect_input_change_moves_the_model(name, {}, small, 50.0f);
}

TEST(Preprocessing, StateRoundTripGivesTheSameFileAndOutputs) {
  const Data train = make_data(50, 4, 41), test = make_data(20, 4, 42);
  ml_common::expect_transformer_state_round_trips(kNames, train.X(), test.X());
  // A state with a zero scale or a non-finite mean is refused, naming the field.
  auto est = ml::make_estimator("standard_scaler");
  est->fit(train.X());
  nlohmann::json st = state_of(*est);
  st["scale"] = ml::f32_to_hex({1.0f, 0.0f, 1.0f, 1.0f});
  ml_common::expect_state_refused("standard_scaler", st, "scale");
  st = state_of(*est);
  st["mean"] = ml::f32_to_hex({1.0f, std::numeric_limits<float>::infinity(), 1.0f, 1.0f});
  ml_common::expect_state_refused("standard_scaler", st, "mean");
  st = state_of(*est);
  st["var"] = ml::f32_to_hex({1.0f});
  ml_common::expect_state_refused("standard_scaler", st, "var");
}

TEST(Preprocessing, RefusalsAreNamed) {
  expect_refusal_names([] { ml::make_estimator("min_max_scaler", {{"feature_range", "1,0"}}); }, "feature_range");
  expect_refusal_names([] { ml::make_estimator("min_max_scaler", {{"feature_range", "1"}}); }, "feature_range");
  expect_refusal_names([] { ml::make_estimator("min_max_scaler", {{"feature_range", "0,x"}}); }, "feature_range");
  expect_refusal_names([] { ml::make_estimator("min_max_scaler", {{"feature_range", "0,inf"}}); }, "feature_range");
  expect_refusal_names([] { ml::make_estimator("robust_scaler", {{"quantile_range", "80,20"}}); }, "quantile_range");
  expect_refusal_names([] { ml::make_estimator("robust_scaler", {{"quantile_range", "-1,50"}}); }, "quantile_range");
  expect_refusal_names([] { ml::make_estimator("robust_scaler", {{"quantile_range", "50,101"}}); }, "quantile_range");
  expect_refusal_names([] { ml::make_estimator("normalizer", {{"norm", "l3"}}); }, "norm");
  expect_refusal_names([] { ml::make_estimator("standard_scaler", {{"with_mean", "maybe"}}); }, "with_mean");
  // A rejected pair leaves the previous value.
  auto mm = ml::make_estimator("min_max_scaler", {{"feature_range", "2,5"}});
  error_of([&] { mm->set_params({{"feature_range", "5,2"}}); });
  EXPECT_EQ(mm->get_params().at("feature_range"), "2,5");
  const Data x = make_data(10, 3, 1), other = make_data(5, 2, 2);
  Data nan = x;
  nan.x[4] = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : kNames) ml_common::expect_transformer_input_refusals(name, x, other, nan, "non-finite");
  // Statistics that overflow binary32 are refused, naming the column.
  Data big = x;
  for (int64_t i = 0; i < x.n; ++i) big.x[i * 3 + 1] = i % 2 ? 3e38f : -3e38f;
  expect_refusal_names([&] { ml::make_estimator("standard_scaler")->fit(big.X()); }, "column 1");
  expect_refusal_names([&] { ml::make_estimator("min_max_scaler")->fit(big.X()); }, "column 1");
}

}  // namespace
}  // namespace bl
