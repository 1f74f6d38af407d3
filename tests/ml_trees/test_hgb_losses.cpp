// Histogram gradient boosting's regression losses (absolute error, quantile, Poisson, gamma,
// Tweedie), early stopping and monotonic constraints: exact small cases against float64
// references, identity across thread counts, a sabotage arm for the monotonic constraint, the
// validation split and the stopping rule, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ml/boosting/hgb_losses.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

// x = 0..9 (one feature) and y: a low half and a high half, so that the only split allowed by
// min_samples_leaf = 5 separates them.
Dataset ten_rows() {
  std::vector<float> x(10), y = {1, 2, 3, 4, 5, 10, 11, 12, 13, 20};
  for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i);
  return {Tensor::from_vector(x, {10, 1}), Tensor::from_vector(y, {10})};
}

// Linear interpolation between order statistics (the float64 reference of the leaf quantile).
double lin_quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(h);
  return lo + 1 < v.size() ? v[lo] + (v[lo + 1] - v[lo]) * (h - static_cast<double>(lo)) : v[lo];
}

const Params kOneSplit = {{"max_iter", "1"}, {"min_samples_leaf", "5"}, {"learning_rate", "0.1"}};

Params with(Params p, const Params& more) {
  for (const auto& kv : more) p[kv.first] = kv.second;
  return p;
}

TEST(HgbLosses, QuantileLeavesAreResidualQuantiles) {
  Dataset data = ten_rows();
  const std::vector<float> y = data.y.to_vector<float>();
  for (double q : {0.5, 0.8, 0.1}) {
    Params p = with(kOneSplit, {{"loss", q == 0.5 ? "absolute_error" : "quantile"}, {"quantile", param_text(q)}});
    auto est = make_estimator("hist_gradient_boosting_regressor", p);
    est->fit(data.X, data.y);
    const float base = static_cast<float>(lin_quantile(std::vector<double>(y.begin(), y.end()), q));
    std::vector<float> pred = est->predict(data.X).to_vector<float>();
    for (int side = 0; side < 2; ++side) {
      std::vector<double> res;
      for (int i = 5 * side; i < 5 * side + 5; ++i) res.push_back(static_cast<double>(y[i] - base));
      const float leaf = static_cast<float>(0.1 * lin_quantile(res, q));
      for (int i = 5 * side; i < 5 * side + 5; ++i) EXPECT_EQ(pred[i], base + leaf) << "q=" << q << " row " << i;
    }
  }
}

TEST(HgbLosses, LogLinkLeavesMatchFloat64) {
  Dataset data = ten_rows();
  const std::vector<float> y = data.y.to_vector<float>();
  for (const char* loss : {"poisson", "gamma", "tweedie"}) {
    auto est = make_estimator("hist_gradient_boosting_regressor", with(kOneSplit, {{"loss", loss}, {"power", "1.5"}}));
    est->fit(data.X, data.y);
    double mean = 0.0;
    for (float v : y) mean += v;
    const double base = std::log(mean / 10.0);
    std::vector<float> pred = est->predict(data.X).to_vector<float>();
    for (int side = 0; side < 2; ++side) {
      double G = 0.0, H = 0.0;
      for (int i = 5 * side; i < 5 * side + 5; ++i) {
        if (std::string(loss) == "poisson") {
          G += std::exp(base) - y[i];
          H += std::exp(base);
        } else if (std::string(loss) == "gamma") {
          G += 1.0 - y[i] * std::exp(-base);
          H += y[i] * std::exp(-base);
        } else {
          G += std::exp(0.5 * base) - y[i] * std::exp(-0.5 * base);
          H += 0.5 * std::exp(0.5 * base) + 0.5 * y[i] * std::exp(-0.5 * base);
        }
      }
      const double want = std::exp(base - 0.1 * G / H);
      for (int i = 5 * side; i < 5 * side + 5; ++i) EXPECT_NEAR(pred[i], want, 2e-5 * want) << loss << " row " << i;
    }
  }
}

TEST(HgbLosses, HuberClipsTheGradient) {
  Dataset data = ten_rows();
  const std::vector<float> y = data.y.to_vector<float>();
  auto est = make_estimator("hist_gradient_boosting_regressor", with(kOneSplit, {{"loss", "huber"}, {"alpha", "2"}}));
  est->fit(data.X, data.y);
  double mean = 0.0;
  for (float v : y) mean += v;
  const float base = static_cast<float>(mean / 10.0);
  std::vector<float> pred = est->predict(data.X).to_vector<float>();
  for (int side = 0; side < 2; ++side) {
    double G = 0.0;
    for (int i = 5 * side; i < 5 * side + 5; ++i) G += std::min(2.0, std::max(-2.0, static_cast<double>(base - y[i])));
    const float leaf = static_cast<float>(-0.1 * G / 5.0);
    for (int i = 5 * side; i < 5 * side + 5; ++i) EXPECT_EQ(pred[i], base + leaf) << "row " << i;
  }
}

// Count-like targets: exp of the regression rule, so the log-link losses fit them well.
Dataset positive_data(int64_t n, uint64_t seed) {
  Dataset d = make_data(n, 4, 0, seed);
  std::vector<float> y = d.y.to_vector<float>();
  for (float& v : y) v = std::floor(std::exp(0.4f * v) * 3.0f) + 1.0f;
  return {d.X, Tensor::from_vector(y, {n})};
}

TEST(HgbLosses, LogLinkLossesBeatTheConstantAndAreThreadInvariant) {
  Dataset train = positive_data(3000, 201), test = positive_data(800, 202);
  for (const char* loss : {"poisson", "gamma", "tweedie"}) {
    auto est = make_estimator("hist_gradient_boosting_regressor", {{"loss", loss}, {"max_iter", "60"}});
    est->fit(train.X, train.y);
    EXPECT_GT(est->score(test.X, test.y), 0.6) << loss;
    expect_round_trip(*est, test.X);
    expect_thread_identity("hist_gradient_boosting_regressor",
                           {{"loss", loss}, {"max_iter", "8"}, {"subsample", "0.8"}, {"grow_policy", "depthwise"},
                            {"max_depth", "3"}},
                           train, test.X, false);
  }
  for (const char* loss : {"absolute_error", "quantile", "huber"}) {
    expect_thread_identity("hist_gradient_boosting_regressor",
                           {{"loss", loss}, {"quantile", "0.3"}, {"max_iter", "8"}, {"colsample_bytree", "0.7"}},
                           train, test.X, false);
  }
}

TEST(HgbLosses, QuantileCoversItsShare) {
  Dataset train = make_data(4000, 4, 0, 211), test = make_data(2000, 4, 0, 212);
  for (double q : {0.2, 0.9}) {
    auto est = make_estimator("hist_gradient_boosting_regressor",
                              {{"loss", "quantile"}, {"quantile", param_text(q)}, {"max_iter", "80"}});
    est->fit(train.X, train.y);
    std::vector<float> pred = est->predict(test.X).to_vector<float>(), y = test.y.to_vector<float>();
    int64_t below = 0;
    for (size_t i = 0; i < y.size(); ++i) below += y[i] <= pred[i];
    EXPECT_NEAR(static_cast<double>(below) / static_cast<double>(y.size()), q, 0.05) << "q=" << q;
  }
}

TEST(HgbLosses, DefaultsKeepTheModelBytes) {
  Dataset train = make_data(600, 4, 0, 221);
  auto plain = make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "5"}});
  auto spelled = make_estimator("hist_gradient_boosting_regressor",
                                {{"max_iter", "5"}, {"loss", "squared_error"}, {"early_stopping", "false"},
                                 {"monotonic_cst", "none"}, {"validation_fraction", "0.1"}, {"tol", "1e-7"},
                                 {"n_iter_no_change", "10"}, {"quantile", "none"}, {"scoring", "loss"}});
  plain->fit(train.X, train.y);
  spelled->fit(train.X, train.y);
  EXPECT_EQ(plain->to_json_text(), spelled->to_json_text());
  // auto switches early stopping on above 10000 rows only.
  auto autos = make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "5"}, {"early_stopping", "auto"}});
  autos->fit(train.X, train.y);
  EXPECT_FALSE(nlohmann::json::parse(autos->to_json_text())["state"].contains("n_iter"));
}

// y rises with x0 overall but wiggles; x1 is noise.
Dataset wiggly(int64_t n, uint64_t seed, float sign) {
  std::vector<float> x(static_cast<size_t>(n * 2)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float a = bl::uniform_element(seed, 1, static_cast<uint64_t>(i)) * 4.0f;
    x[2 * i] = a;
    x[2 * i + 1] = bl::normal_element(seed, 2, static_cast<uint64_t>(i));
    y[i] = sign * (a + 1.5f * std::sin(4.0f * a)) + 0.3f * bl::normal_element(seed, 3, static_cast<uint64_t>(i));
  }
  return {Tensor::from_vector(x, {n, 2}), Tensor::from_vector(y, {n})};
}

// The largest drop (sign +1) of the predictions along a grid of x0 at a few fixed x1.
double worst_violation(const Estimator& est, float sign) {
  const int64_t g = 200;
  double worst = 0.0;
  for (float x1 : {-1.0f, 0.0f, 0.7f}) {
    std::vector<float> x;
    for (int64_t i = 0; i < g; ++i) {
      x.push_back(4.0f * static_cast<float>(i) / static_cast<float>(g - 1));
      x.push_back(x1);
    }
    std::vector<float> p = est.predict(Tensor::from_vector(x, {g, 2})).to_vector<float>();
    for (int64_t i = 1; i < g; ++i) worst = std::max(worst, static_cast<double>(sign * (p[i - 1] - p[i])));
  }
  return worst;
}

TEST(HgbLosses, MonotonicConstraintHoldsAndMatters) {
  for (float sign : {1.0f, -1.0f}) {
    Dataset train = wiggly(3000, 231, sign);
    const std::string cst = sign > 0 ? "1,0" : "-1,0";
    for (const char* policy : {"lossguide", "depthwise"}) {
      Params p = {{"max_iter", "60"}, {"grow_policy", policy}, {"max_depth", "6"}, {"learning_rate", "0.2"}};
      auto free = make_estimator("hist_gradient_boosting_regressor", p);
      free->fit(train.X, train.y);
      EXPECT_GT(worst_violation(*free, sign), 0.05) << policy << ": the data must tempt a violation";  // sabotage arm
      p["monotonic_cst"] = cst;
      auto bound = make_estimator("hist_gradient_boosting_regressor", p);
      bound->fit(train.X, train.y);
      EXPECT_EQ(worst_violation(*bound, sign), 0.0) << policy;
      EXPECT_GT(bound->score(train.X, train.y), 0.5);
      expect_round_trip(*bound, train.X);
      // Leaf values replaced by residual quantiles stay within the constraint's bounds.
      p["loss"] = "quantile";
      p["quantile"] = "0.7";
      auto q = make_estimator("hist_gradient_boosting_regressor", p);
      q->fit(train.X, train.y);
      EXPECT_EQ(worst_violation(*q, sign), 0.0) << policy << " (quantile)";
      p.erase("loss");
    }
  }
  Dataset train = wiggly(2000, 232, 1.0f);
  expect_thread_identity("hist_gradient_boosting_regressor",
                         {{"max_iter", "10"}, {"monotonic_cst", "[1, 0]"}, {"loss", "poisson"}}, 
                         {train.X, Tensor::from_vector(std::vector<float>(2000, 1.0f), {2000})}, train.X, false);
  expect_thread_identity("hist_gradient_boosting_regressor",
                         {{"max_iter", "10"}, {"monotonic_cst", "1,-1"}, {"grow_policy", "depthwise"}}, train,
                         train.X, false);
  Dataset ctrain = make_data(2000, 3, 2, 233);
  expect_thread_identity("hist_gradient_boosting_classifier", {{"max_iter", "10"}, {"monotonic_cst", "1,-1,0"}},
                         ctrain, ctrain.X, true);
}

// Whether some root-to-leaf path of a fitted model splits on a feature of `a` and one of `b`.
bool path_mixes(const Estimator& est, const std::vector<int>& a, const std::vector<int>& b) {
  nlohmann::json st = nlohmann::json::parse(est.to_json_text())["state"];
  auto in = [](const std::vector<int>& s, int f) { return std::find(s.begin(), s.end(), f) != s.end(); };
  for (const auto& t : st["trees"]) {
    const std::vector<int> feature = t["feature"].get<std::vector<int>>(), left = t["left"].get<std::vector<int>>(),
                           right = t["right"].get<std::vector<int>>();
    std::vector<std::pair<int, int>> stack = {{0, 0}};  // node, bits: 1 saw a, 2 saw b
    while (!stack.empty()) {
      auto [node, seen] = stack.back();
      stack.pop_back();
      if (feature[node] < 0) continue;
      seen |= (in(a, feature[node]) ? 1 : 0) | (in(b, feature[node]) ? 2 : 0);
      if (seen == 3) return true;
      stack.push_back({left[node], seen});
      stack.push_back({right[node], seen});
    }
  }
  return false;
}

TEST(HgbLosses, InteractionConstraints) {
  // y = x0 * x2 + x1: an unconstrained tree splits on x0 and x2 along one path.
  const int64_t n = 3000;
  std::vector<float> x(static_cast<size_t>(n * 3)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) {
      x[i * 3 + j] = bl::normal_element(261, static_cast<uint64_t>(j), static_cast<uint64_t>(i));
    }
    y[i] = x[i * 3] * x[i * 3 + 2] + x[i * 3 + 1];
  }
  Dataset train{Tensor::from_vector(x, {n, 3}), Tensor::from_vector(y, {n})};
  Params p = {{"max_iter", "20"}};
  auto free = make_estimator("hist_gradient_boosting_regressor", p);
  free->fit(train.X, train.y);
  EXPECT_TRUE(path_mixes(*free, {0, 1}, {2}));  // sabotage arm: the data tempts the mix
  for (const char* cst : {"0,1", "[[0, 1]]", "0,1;2"}) {
    p["interaction_cst"] = cst;
    auto bound = make_estimator("hist_gradient_boosting_regressor", p);
    bound->fit(train.X, train.y);
    EXPECT_FALSE(path_mixes(*bound, {0, 1}, {2})) << cst;  // x2 is in a group of its own
    EXPECT_TRUE(path_mixes(*bound, {0}, {1})) << cst;
    expect_round_trip(*bound, train.X);
  }
  p["interaction_cst"] = "no_interactions";
  auto additive = make_estimator("hist_gradient_boosting_regressor", p);
  additive->fit(train.X, train.y);
  EXPECT_FALSE(path_mixes(*additive, {0}, {1}) || path_mixes(*additive, {0}, {2}) || path_mixes(*additive, {1}, {2}));
  expect_thread_identity("hist_gradient_boosting_regressor",
                         {{"max_iter", "8"}, {"interaction_cst", "0;1,2"}, {"grow_policy", "depthwise"}}, train,
                         train.X, false);
  expect_thread_identity("hist_gradient_boosting_regressor", {{"max_iter", "8"}, {"interaction_cst", "pairwise"}},
                         train, train.X, false);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"interaction_cst", "0,5"}})->fit(train.X, train.y),
               Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"interaction_cst", "0,x"}}), Error);
}

TEST(HgbLosses, EarlyStopping) {
  Dataset train = make_data(3000, 5, 0, 241);
  auto est = make_estimator("hist_gradient_boosting_regressor",
                            {{"max_iter", "500"}, {"early_stopping", "true"}, {"learning_rate", "0.3"}});
  est->fit(train.X, train.y);
  nlohmann::json st = nlohmann::json::parse(est->to_json_text())["state"];
  const int64_t n_iter = st["n_iter"].get<int64_t>();
  EXPECT_LT(n_iter, 500);
  EXPECT_GT(n_iter, 10);
  EXPECT_EQ(static_cast<int64_t>(st["trees"].size()), n_iter);
  EXPECT_EQ(st["train_score"].get<std::string>().size(), static_cast<size_t>(16 * (n_iter + 1)));
  EXPECT_EQ(st["validation_score"].get<std::string>().size(), static_cast<size_t>(16 * (n_iter + 1)));
  expect_round_trip(*est, train.X);
  expect_thread_identity("hist_gradient_boosting_regressor",
                         {{"max_iter", "200"}, {"early_stopping", "true"}, {"learning_rate", "0.5"},
                          {"n_iter_no_change", "3"}, {"loss", "absolute_error"}},
                         train, train.X, false);
  // Without a validation fraction the training loss decides (it keeps falling: no stop at tol 0).
  auto on_train = make_estimator("hist_gradient_boosting_regressor",
                                 {{"max_iter", "20"}, {"early_stopping", "true"}, {"validation_fraction", "none"},
                                  {"tol", "0"}});
  on_train->fit(train.X, train.y);
  st = nlohmann::json::parse(on_train->to_json_text())["state"];
  EXPECT_EQ(st["n_iter"].get<int64_t>(), 20);
  EXPECT_FALSE(st.contains("validation_score"));
  Dataset ctrain = make_data(3000, 5, 3, 242);
  expect_thread_identity("hist_gradient_boosting_classifier",
                         {{"max_iter", "100"}, {"early_stopping", "true"}, {"learning_rate", "0.5"},
                          {"n_iter_no_change", "4"}},
                         ctrain, ctrain.X, true);
}

TEST(HgbLosses, StoppingRuleAndValidationSplit) {
  // scikit-learn's rule: stop when none of the last k scores beats the one k + 1 back by tol.
  EXPECT_FALSE(boost_should_stop({-3, -2, -1}, 3, 0.0));
  EXPECT_FALSE(boost_should_stop({-3, -2, -2, -1.5}, 3, 0.0));
  EXPECT_TRUE(boost_should_stop({-3, -2, -2, -2.5, -2}, 3, 0.0));
  EXPECT_TRUE(boost_should_stop({-3, -2, -1.99, -1.995, -1.999}, 3, 0.1));
  std::vector<int32_t> cls(1000);
  for (int i = 0; i < 1000; ++i) cls[i] = i % 10 < 7 ? 0 : 1;
  std::vector<char> m = validation_mask(1000, cls.data(), 2, 0.1, 7);
  int64_t c0 = 0, c1 = 0;
  for (int i = 0; i < 1000; ++i) (cls[i] == 0 ? c0 : c1) += m[i];
  EXPECT_EQ(c0, 70);
  EXPECT_EQ(c1, 30);
  EXPECT_EQ(m, validation_mask(1000, cls.data(), 2, 0.1, 7));
  EXPECT_NE(m, validation_mask(1000, cls.data(), 2, 0.1, 8));
  std::vector<char> plain = validation_mask(101, nullptr, 1, 0.25, 3);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 26);  // ceil(0.25 * 101)
}

TEST(HgbLosses, BadInput) {
  Dataset train = make_data(200, 3, 0, 251);
  std::vector<float> y = train.y.to_vector<float>();
  auto fit = [&](const Params& p, const std::vector<float>& yy) {
    make_estimator("hist_gradient_boosting_regressor", p)->fit(train.X, Tensor::from_vector(yy, {200}));
  };
  std::vector<float> neg(200, 1.0f), zero(200, 1.0f), all_zero(200, 0.0f);
  neg[3] = -1.0f;
  zero[5] = 0.0f;
  EXPECT_THROW(fit({{"loss", "poisson"}}, neg), Error);
  EXPECT_THROW(fit({{"loss", "poisson"}}, all_zero), Error);
  EXPECT_THROW(fit({{"loss", "tweedie"}}, neg), Error);
  EXPECT_THROW(fit({{"loss", "gamma"}}, zero), Error);
  EXPECT_NO_THROW(fit({{"loss", "poisson"}, {"max_iter", "2"}}, zero));
  EXPECT_THROW(fit({{"monotonic_cst", "1,0"}}, y), Error);  // 3 features
  EXPECT_THROW(fit({{"monotonic_cst", "1,0,-1"}, {"grow_policy", "symmetric"}}, y), Error);
  EXPECT_THROW(fit({{"early_stopping", "true"}, {"booster", "dart"}}, y), Error);
  for (const Params& bad : std::vector<Params>{{{"loss", "huberish"}}, {{"quantile", "1"}}, {{"quantile", "0"}},
                                               {{"quantile", "1.5"}}, {{"power", "2"}}, {{"alpha", "0"}},
                                               {{"monotonic_cst", "1,2,0"}},
                                               {{"early_stopping", "maybe"}}, {{"validation_fraction", "1"}},
                                               {{"n_iter_no_change", "0"}}, {{"tol", "-1"}}, {{"scoring", "r2"}}}) {
    EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", bad), Error) << bad.begin()->first;
  }
  EXPECT_THROW(make_estimator("hist_gradient_boosting_classifier", {{"loss", "squared_error"}}), Error);
  Dataset m = make_data(300, 3, 3, 252);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_classifier", {{"monotonic_cst", "1,0,0"}})->fit(m.X, m.y), Error);
}

}  // namespace
}  // namespace bl::ml::testing
