// test_svm_weights.cpp: sample weights of svc, nu_svc, svr, nu_svr and one_class_svm (per-row box
// bounds C w_i) and of linear_svc and linear_svr (per-row C_i = C w_i in dual coordinate descent). Weights of 0 and 1 give the fit of the kept rows bit for bit; integer weights give
// the decision values of the repeated rows (within the solver's tolerance); the weighted dual of a
// two-class svc meets its KKT conditions with the bounds C w_i in float64; all-ones weights give the
// unweighted bits; threads 1, 2, 3 give the same bytes and a changed weight moves the model; a
// class whose rows all weigh 0 is refused by name. linear_svc / linear_svr: integer weights give the
// coefficients of the repeated rows (within the solver's tolerance), a row of weight 0 changes
// nothing whatever its values, all-ones weights give the unweighted bits, threads 1, 2, 3 the same
// bytes, and a changed weight moves the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml_common/weight_checks.h"

namespace bl {
namespace {

using ml_common::HostData;
using ml_common::WeightedHostData;

using Case = ml_common::WeightCase;

// Every form, gamma fixed (gamma=scale reads the rows of weight 0 too).
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"svc", {{"C", "2"}, {"gamma", "0.7"}, {"tol", "1e-6"}}, true},
      {"svc", {{"kernel", "linear"}, {"C", "0.5"}, {"tol", "1e-6"}, {"probability", "true"}}, true},
      {"nu_svc", {{"nu", "0.3"}, {"gamma", "0.7"}, {"tol", "1e-6"}}, true},
      {"svr", {{"C", "3"}, {"epsilon", "0.05"}, {"gamma", "0.5"}, {"tol", "1e-6"}}, false},
      {"nu_svr", {{"C", "3"}, {"nu", "0.4"}, {"gamma", "0.5"}, {"tol", "1e-6"}}, false},
      {"one_class_svm", {{"nu", "0.2"}, {"gamma", "0.5"}, {"tol", "1e-6"}}, false},
  };
  return c;
}

HostData data_for(const Case& c, int64_t n) {
  if (c.classes) return ml_common::uniform_blobs(n, 3, 3, 0.9f, 21);
  HostData r = ml_common::smooth_regression(n, 3, 22);
  if (std::string(c.name) == "one_class_svm") r.y.clear();
  return r;
}

Tensor decision(const ml::Estimator& est, const Tensor& X) {
  return std::string(est.name()) == "svr" || est.name() == "nu_svr" ? est.predict(X) : est.decision_function(X);
}

// The support vector of the largest |dual coefficient| (at its bound: its weight matters).
int64_t bound_support_row(const std::string& name, const ml::Params& params, const WeightedHostData& s) {
  auto est = ml::make_estimator(name, params);
  est->fit_weighted(s.X(), ml_common::y_of(s), s.W());
  nlohmann::json st;
  est->save_state(st);
  std::vector<int64_t> support = st["support"].get<std::vector<int64_t>>();
  std::vector<float> dual = ml::f32_from_hex(st["dual_coef"].get<std::string>(), "dual");
  size_t best = 0;
  for (size_t k = 0; k < dual.size(); ++k)
    if (std::fabs(dual[k]) > std::fabs(dual[best])) best = k;
  return support[best % support.size()];
}

TEST(SvmWeights, ZeroOneWeightsGiveTheFitOfTheKeptRowsBitForBit) {
  for (const Case& c : cases()) {
    if (c.params.count("probability")) continue;  // Platt's folds permute the pair's rows
    WeightedHostData s = ml_common::with_weights(data_for(c, 150), [](int64_t i) { return (i * 7 + 2) % 5 == 0 ? 0 : 1; });
    const HostData kept = s.kept();
    auto weighted = ml::make_estimator(c.name, c.params), plain = ml::make_estimator(c.name, c.params);
    weighted->fit_weighted(s.X(), ml_common::y_of(s), s.W());
    plain->fit(kept.X(), ml_common::y_of(kept));
    const Tensor q = ml_common::uniform_blobs(200, 3, 3, 0.9f, 23).X();
    EXPECT_EQ(decision(*weighted, q).digest(), decision(*plain, q).digest()) << c.name;
    EXPECT_EQ(weighted->predict(q).digest(), plain->predict(q).digest()) << c.name;
  }
}

TEST(SvmWeights, IntegerWeightsGiveTheDecisionOfTheRepeatedRows) {
  for (const Case& c : cases()) {
    WeightedHostData s = ml_common::with_weights(data_for(c, 120), [](int64_t i) { return (i * 5 + 1) % 4; });
    const HostData rep = s.repeated();
    auto weighted = ml::make_estimator(c.name, c.params), repeated = ml::make_estimator(c.name, c.params);
    weighted->fit_weighted(s.X(), ml_common::y_of(s), s.W());
    repeated->fit(rep.X(), ml_common::y_of(rep));
    const Tensor q = ml_common::uniform_blobs(200, 3, 3, 0.9f, 24).X();
    std::vector<float> a = decision(*weighted, q).to_vector<float>(), b = decision(*repeated, q).to_vector<float>();
    ASSERT_EQ(a.size(), b.size()) << c.name;
    double scale = 1.0, worst = 0.0;
    for (size_t k = 0; k < a.size(); ++k) {
      scale = std::max(scale, std::fabs(static_cast<double>(b[k])));
      worst = std::max(worst, std::fabs(static_cast<double>(a[k]) - b[k]));
    }
    EXPECT_LT(worst, 2e-3 * scale) << c.name << (c.params.count("probability") ? " probability" : "");
    if (c.params.count("probability")) {
      // Platt's folds differ (the repeated rows are more rows), so only the probabilities' sum is checked.
      std::vector<float> p = weighted->predict_proba(q).to_vector<float>();
      for (size_t i = 0; i < p.size() / 3; ++i) EXPECT_NEAR(p[3 * i] + p[3 * i + 1] + p[3 * i + 2], 1.0, 1e-5);
    }
  }
}

// Two-class svc: alpha_i = |coef_i| in [0, C w_i], sum y alpha = 0, y f >= 1 at alpha 0, <= 1 at
// alpha = C w_i, = 1 between (within the slack), in float64 from the stored duals.
TEST(SvmWeights, WeightedSvcMeetsKktWithPerRowBounds) {
  HostData two = ml_common::uniform_blobs(140, 4, 2, 0.3f, 25);
  WeightedHostData s = ml_common::with_weights(two, [](int64_t i) { return 0.25 + 0.5 * static_cast<double>((i * 3) % 5); });
  const double C = 0.3, slack = 2e-3 + 1e-4;
  auto est = ml::make_estimator("svc", {{"kernel", "linear"}, {"C", "0.3"}, {"tol", "0.001"}});
  est->fit_weighted(s.X(), s.Y(), s.W());
  nlohmann::json st;
  est->save_state(st);
  std::vector<int64_t> support = st["support"].get<std::vector<int64_t>>();
  std::vector<float> dual = ml::f32_from_hex(st["dual_coef"].get<std::string>(), "dual");
  // Two classes are stored negated (scikit-learn): coef = -dual_coef, rho = intercept.
  const double rho = ml::f32_from_hex(st["intercept"].get<std::string>(), "intercept")[0];
  std::vector<double> coef(static_cast<size_t>(s.n), 0.0);
  for (size_t k = 0; k < support.size(); ++k) coef[support[k]] = -static_cast<double>(dual[k]);
  double ysum = 0;
  int64_t at_bound = 0;
  for (int64_t i = 0; i < s.n; ++i) {
    const double y = s.y[i] == 0.0f ? 1.0 : -1.0, alpha = y * coef[i], bound = C * s.w[i];
    EXPECT_GE(alpha, -1e-7) << i;
    EXPECT_LE(alpha, bound * (1 + 1e-6)) << i;
    ysum += y * alpha;
    double f = -rho;
    for (int64_t j = 0; j < s.n; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < s.d; ++k) dot += static_cast<double>(s.x[j * s.d + k]) * s.x[i * s.d + k];
      if (coef[j] != 0) f += coef[j] * dot;
    }
    const double margin = y * f;
    if (alpha <= 1e-7) EXPECT_GE(margin, 1 - slack) << i;
    else if (alpha >= bound * (1 - 1e-6)) {
      EXPECT_LE(margin, 1 + slack) << i;
      ++at_bound;
    } else {
      EXPECT_NEAR(margin, 1.0, slack) << i;
    }
  }
  EXPECT_NEAR(ysum, 0.0, 1e-5 * C * s.n);
  EXPECT_GT(at_bound, 0);
}

TEST(SvmWeights, AllOnesGiveTheUnweightedBits) {
  for (const Case& c : cases()) ml_common::expect_all_ones_give_the_unweighted_bits(c.name, c.params, data_for(c, 90));
}

TEST(SvmWeights, SameBytesAtThreads123AndAChangedWeightMovesTheModel) {
  for (const Case& c : cases()) {
    WeightedHostData s =
        ml_common::with_weights(data_for(c, 100), [](int64_t i) { return 0.3 + 0.45 * static_cast<double>(i % 6); });
    ml_common::expect_weighted_bytes_at_threads_123_and_moved(c.name, c.params, s,
                                                              bound_support_row(c.name, c.params, s));
  }
}

TEST(SvmWeights, AClassOfZeroWeightIsRefused) {
  WeightedHostData s = ml_common::with_weights(ml_common::uniform_blobs(60, 3, 3, 0.9f, 26),
                                               [](int64_t i) { return i % 3 == 2 ? 0 : 1; });
  auto est = ml::make_estimator("svc");
  EXPECT_NE(ml_common::error_of([&] { est->fit_weighted(s.X(), s.Y(), s.W()); })
                .find("svc: class 2 has no row of positive sample_weight"),
            std::string::npos);
  auto nu = ml::make_estimator("nu_svc", {{"nu", "0.9"}});
  s.w.assign(static_cast<size_t>(s.n), 1.0f);
  for (int64_t i = 0; i < s.n; i += 3) s.w[i] = 20.0f;  // class 0 outweighs the others: nu=0.9 infeasible
  EXPECT_NE(ml_common::error_of([&] { nu->fit_weighted(s.X(), s.Y(), s.W()); }).find("specified nu is infeasible"),
            std::string::npos);
}

// The linear problems' fitted coef and intercept.
std::vector<double> coef_of(const ml::Estimator& est) {
  nlohmann::json st;
  est.save_state(st);
  std::vector<double> out;
  for (const char* key : {"coef", "intercept"}) {
    std::vector<float> v = ml::f32_from_hex(st[key].get<std::string>(), key);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

const std::vector<Case>& linear_cases() {
  static const std::vector<Case> c = {
      {"linear_svc", {{"C", "0.7"}, {"tol", "1e-8"}, {"max_iter", "20000"}}, true},
      {"linear_svc", {{"C", "0.7"}, {"loss", "hinge"}, {"tol", "1e-8"}, {"max_iter", "20000"}}, true},
      {"linear_svr", {{"C", "2"}, {"epsilon", "0.1"}, {"tol", "1e-8"}, {"max_iter", "20000"}}, false},
      {"linear_svr",
       {{"C", "2"}, {"loss", "squared_epsilon_insensitive"}, {"tol", "1e-8"}, {"max_iter", "20000"}},
       false},
  };
  return c;
}

TEST(LinearSvmWeights, IntegerWeightsGiveTheCoefficientsOfTheRepeatedRows) {
  for (const Case& c : linear_cases()) {
    WeightedHostData s = ml_common::with_weights(data_for(c, 150), [](int64_t i) { return (i * 5 + 1) % 4; });
    const HostData rep = s.repeated();
    auto weighted = ml::make_estimator(c.name, c.params), repeated = ml::make_estimator(c.name, c.params);
    weighted->fit_weighted(s.X(), s.Y(), s.W());
    repeated->fit(rep.X(), rep.Y());
    std::vector<double> a = coef_of(*weighted), b = coef_of(*repeated);
    double scale = 1.0;
    for (double v : b) scale = std::max(scale, std::fabs(v));
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 2e-3 * scale) << c.name << " entry " << k;
  }
}

TEST(LinearSvmWeights, ARowOfWeightZeroChangesNothing) {
  for (const Case& c : linear_cases())
    ml_common::expect_zero_weight_rows_change_nothing(
        c.name, c.params, ml_common::with_weights(data_for(c, 120), [](int64_t i) { return i % 5 == 3 ? 0 : 1.5; }));
}

TEST(LinearSvmWeights, AllOnesThreadsAndAChangedWeight) {
  for (const Case& c : linear_cases()) {
    ml::Params p = c.params;
    p["tol"] = "1e-4";
    ml_common::expect_all_ones_give_the_unweighted_bits(c.name, p, data_for(c, 90));
    WeightedHostData s =
        ml_common::with_weights(data_for(c, 100), [](int64_t i) { return 0.3 + 0.45 * static_cast<double>(i % 6); });
    // The moved row: the one of the largest error (its loss is not flat, so its weight matters).
    auto est = ml::make_estimator(c.name, p);
    est->fit_weighted(s.X(), s.Y(), s.W());
    std::vector<float> pred = (c.classes ? est->decision_function(s.X()) : est->predict(s.X())).to_vector<float>();
    int64_t moved = 0;
    double worst = -1.0;
    for (int64_t i = 0; i < s.n; ++i) {
      const double e = c.classes ? -pred[i * 3 + static_cast<int64_t>(s.y[i])] : std::fabs(pred[i] - s.y[i]);
      if (e > worst) worst = e, moved = i;
    }
    ml_common::expect_weighted_bytes_at_threads_123_and_moved(c.name, p, s, moved);
  }
}

}  // namespace
}  // namespace bl
