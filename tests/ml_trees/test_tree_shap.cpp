// TreeSHAP (src/ml/tree/tree_shap.h) against the definition of the Shapley value: for small random
// trees (up to 6 features, features repeated along paths) every subset S of the features is
// enumerated, v(S) is the path-dependent expectation (a feature in S follows the row, any other
// feature follows both children weighted by their cover), and
//   phi_j = sum over S not holding j of |S|! (M - |S| - 1)! / M! (v(S + j) - v(S)).
// TreeSHAP must match to 1e-12 of the row's largest |value|; the sabotage arm weighs the subsets
// wrongly (Banzhaf's 1 / 2^(M-1)) and must miss that tolerance. Also: additivity, the expected value,
// the same bytes at threads 1, 2 and 3, and the tree checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/tree/tree_model.h"
#include "ml/tree/tree_shap.h"

namespace bl::ml::testing {
namespace {

struct RandomTree {
  ShapTree tree;
  std::vector<double> threshold;
};

// A random tree of up to max_depth levels on d features: covers are integers, an internal node's
// cover the sum of its children's. Uniform words from Philox (seed, stream 7).
RandomTree random_tree(uint64_t seed, int64_t d, int max_depth) {
  uint64_t counter = 0;
  auto u = [&](uint32_t n) { return random_below(seed, 7, counter++, n); };
  RandomTree r;
  ShapTree& t = r.tree;
  std::vector<int> depth;
  auto add = [&](int dep) {
    t.feature.push_back(-1);
    t.left.push_back(-1);
    t.right.push_back(-1);
    t.cover.push_back(0.0);
    t.value.push_back(0.0);
    r.threshold.push_back(0.0);
    depth.push_back(dep);
    return static_cast<int32_t>(t.feature.size() - 1);
  };
  add(0);
  for (size_t i = 0; i < t.feature.size(); ++i) {  // breadth-first: children after parents
    const bool split = depth[i] < max_depth && (depth[i] == 0 || u(10) < 7);
    if (!split) {
      t.value[i] = (static_cast<double>(u(2001)) - 1000.0) / 137.0;
      t.cover[i] = 1.0 + u(20);
      continue;
    }
    t.feature[i] = static_cast<int32_t>(u(static_cast<uint32_t>(d)));
    r.threshold[i] = (static_cast<double>(u(201)) - 100.0) / 100.0;
    const int32_t l = add(depth[i] + 1);
    const int32_t rr = add(depth[i] + 1);
    t.left[i] = l;
    t.right[i] = rr;
  }
  for (size_t i = t.feature.size(); i-- > 0;) {
    if (t.feature[i] >= 0) t.cover[i] = t.cover[t.left[i]] + t.cover[t.right[i]];
  }
  return r;
}

std::vector<uint8_t> decisions(const RandomTree& r, const std::vector<double>& x) {
  std::vector<uint8_t> left(r.tree.feature.size(), 0);
  for (size_t i = 0; i < left.size(); ++i) {
    if (r.tree.feature[i] >= 0) left[i] = x[r.tree.feature[i]] <= r.threshold[i];
  }
  return left;
}

// v(S): the expectation of the tree's output when the features in mask follow the row.
double v_of(const ShapTree& t, const std::vector<uint8_t>& left, uint32_t mask, int32_t node) {
  if (t.feature[node] < 0) return t.value[node];
  if (mask >> t.feature[node] & 1u) return v_of(t, left, mask, left[node] ? t.left[node] : t.right[node]);
  return (t.cover[t.left[node]] * v_of(t, left, mask, t.left[node]) +
          t.cover[t.right[node]] * v_of(t, left, mask, t.right[node])) / t.cover[node];
}

double factorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

// Shapley values by enumeration; banzhaf: the sabotage weight 1 / 2^(M-1) instead.
std::vector<double> brute_force(const ShapTree& t, const std::vector<uint8_t>& left, int64_t d, bool banzhaf) {
  std::vector<double> phi(static_cast<size_t>(d), 0.0);
  const int m = static_cast<int>(d);
  for (int j = 0; j < m; ++j) {
    for (uint32_t s = 0; s < (1u << m); ++s) {
      if (s >> j & 1u) continue;
      const int size = __builtin_popcount(s);
      const double w = banzhaf ? 1.0 / static_cast<double>(1u << (m - 1))
                               : factorial(size) * factorial(m - size - 1) / factorial(m);
      phi[j] += w * (v_of(t, left, s | (1u << j), 0) - v_of(t, left, s, 0));
    }
  }
  return phi;
}

std::vector<double> row_of(uint64_t seed, int64_t d) {
  std::vector<double> x(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) x[j] = (static_cast<double>(random_below(seed, 9, j, 221)) - 110.0) / 100.0;
  return x;
}

// The largest difference between TreeSHAP and the reference over many trees and rows, relative
// to each row's largest |value|.
double worst_difference(bool banzhaf) {
  double worst = 0.0;
  std::vector<ShapPathEntry> scratch;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const int64_t d = 1 + static_cast<int64_t>(seed % 6);
    const RandomTree r = random_tree(seed, d, 1 + static_cast<int>(seed % 5));
    check_shap_tree(r.tree, d, "random tree");
    for (uint64_t row = 0; row < 4; ++row) {
      const std::vector<double> x = row_of(seed * 16 + row, d);
      const std::vector<uint8_t> left = decisions(r, x);
      std::vector<double> phi(static_cast<size_t>(d), 0.0);
      tree_shap_add(r.tree, left.data(), phi.data(), scratch);
      const std::vector<double> ref = brute_force(r.tree, left, d, banzhaf);
      double scale = 1e-300;
      for (double v : ref) scale = std::max(scale, std::fabs(v));
      for (int64_t j = 0; j < d; ++j) worst = std::max(worst, std::fabs(phi[j] - ref[j]) / scale);
    }
  }
  return worst;
}

TEST(TreeShap, MatchesShapleyEnumeration) {
  const double worst = worst_difference(false);
  std::cout << "  TreeSHAP vs subset enumeration: largest relative difference " << worst << "\n";
  EXPECT_LE(worst, 1e-12);
}

TEST(TreeShap, SabotageWrongSubsetWeightIsCaught) {
  EXPECT_GT(worst_difference(true), 1e-6) << "Banzhaf weights pass the check: it does not pin the Shapley weights";
}

TEST(TreeShap, AdditivityAndExpectedValue) {
  std::vector<ShapPathEntry> scratch;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const int64_t d = 1 + static_cast<int64_t>(seed % 6);
    const RandomTree r = random_tree(seed + 1000, d, 4);
    const std::vector<double> x = row_of(seed, d);
    const std::vector<uint8_t> left = decisions(r, x);
    const double e = shap_expected_value(r.tree);
    EXPECT_NEAR(e, v_of(r.tree, left, 0u, 0), 1e-12 * (1.0 + std::fabs(e)));
    std::vector<double> phi(static_cast<size_t>(d), 0.0);
    tree_shap_add(r.tree, left.data(), phi.data(), scratch);
    double sum = e;
    for (double p : phi) sum += p;
    const double fx = v_of(r.tree, left, (1u << d) - 1u, 0);
    EXPECT_NEAR(sum, fx, 1e-12 * (1.0 + std::fabs(fx))) << "seed " << seed;
  }
}

TEST(TreeShap, EnsembleSameBytesAtThreads123) {
  const int64_t d = 5, n = 70, groups = 2;
  std::vector<RandomTree> forest;
  std::vector<ShapTree> trees;
  for (uint64_t s = 0; s < 6; ++s) {
    forest.push_back(random_tree(500 + s, d, 5));
    trees.push_back(forest.back().tree);
  }
  std::vector<std::vector<double>> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(row_of(900 + static_cast<uint64_t>(i), d));
  auto decide = [&](size_t t, int64_t i, uint8_t* left) {
    const std::vector<uint8_t> l = decisions(forest[t], rows[i]);
    std::memcpy(left, l.data(), l.size());
  };
  const int saved = num_threads();
  std::vector<double> first;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<double> out = ensemble_shap(trees, groups, {0.25, -0.5}, n, d, decide);
    ASSERT_EQ(out.size(), static_cast<size_t>(n * groups * (d + 1)));
    if (threads == 1) first = out;
    else EXPECT_EQ(std::memcmp(out.data(), first.data(), out.size() * sizeof(double)), 0) << "threads=" << threads;
  }
  set_num_threads(saved);
  // Each group's values add up to its margin: base + the group's trees' leaf values.
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      double margin = g == 0 ? 0.25 : -0.5, sum = 0.0;
      for (size_t t = static_cast<size_t>(g); t < trees.size(); t += groups) {
        margin += v_of(trees[t], decisions(forest[t], rows[i]), (1u << d) - 1u, 0);
      }
      for (int64_t j = 0; j <= d; ++j) sum += first[(i * groups + g) * (d + 1) + j];
      EXPECT_NEAR(sum, margin, 1e-12 * (1.0 + std::fabs(margin)));
    }
  }
}

TEST(TreeShap, TreeChecks) {
  RandomTree r = random_tree(3, 4, 3);
  ShapTree t = r.tree;
  t.cover[0] = 0.0;
  EXPECT_THROW(check_shap_tree(t, 4, "t"), Error);
  t = r.tree;
  t.left[0] = 0;
  EXPECT_THROW(check_shap_tree(t, 4, "t"), Error);
  t = r.tree;
  t.feature[0] = 4;
  EXPECT_THROW(check_shap_tree(t, 4, "t"), Error);
  t = r.tree;
  t.value.pop_back();
  EXPECT_THROW(check_shap_tree(t, 4, "t"), Error);
}

// The imported XGBoost model: SHAP values add up to its margins (float32, so to 1e-5 relative), a
// saved and reloaded model gives the same bytes, and a file without sum_hessian refuses SHAP.
TEST(TreeShap, XgboostModelAddsUpAndRoundTrips) {
  const std::string dir = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/ml/xgboost/";
  for (const char* name : {"reg_squarederror", "multi_softprob", "binary_logistic"}) {
    nlohmann::json c = nlohmann::json::parse(read_file_text(dir + name + ".case.json"));
    const int64_t n = c["n"].get<int64_t>(), d = c["d"].get<int64_t>();
    Tensor X = Tensor::from_vector(f32_from_hex(c["X"].get<std::string>(), "X"), {n, d});
    auto est = make_estimator("xgboost_model", {{"model_file", dir + name + ".json"}});
    est->fit(X);
    int64_t cols = 0;
    const std::vector<double> shap = estimator_shap_values(*est, X, &cols);
    const std::vector<float> margin = est->transform(X).to_vector<float>();
    const int64_t k = cols / (d + 1);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t g = 0; g < k; ++g) {
        double sum = 0.0;
        for (int64_t j = 0; j <= d; ++j) sum += shap[i * cols + g * (d + 1) + j];
        EXPECT_NEAR(sum, margin[i * k + g], 1e-5 * (1.0 + std::fabs(margin[i * k + g]))) << name << " row " << i;
      }
    }
    auto again = estimator_from_json_text(est->to_json_text(), "round trip");
    int64_t cols2 = 0;
    const std::vector<double> shap2 = estimator_shap_values(*again, X, &cols2);
    ASSERT_EQ(shap2.size(), shap.size());
    EXPECT_EQ(std::memcmp(shap2.data(), shap.data(), shap.size() * sizeof(double)), 0) << name;
  }
  nlohmann::json j = nlohmann::json::parse(read_file_text(dir + "reg_squarederror.json"));
  for (auto& t : j["learner"]["gradient_booster"]["model"]["trees"]) t.erase("sum_hessian");
  const std::string path = ::testing::TempDir() + "/xgb_no_hessian.json";
  write_file_atomic(path, j.dump());
  auto est = make_estimator("xgboost_model", {{"model_file", path}});
  Tensor X = Tensor::from_vector(std::vector<float>(6, 0.25f), {1, 6});
  est->fit(X);
  EXPECT_NO_THROW(est->predict(X));
  int64_t cols = 0;
  EXPECT_THROW(estimator_shap_values(*est, X, &cols), Error);
  auto ridge = make_estimator("ridge");
  EXPECT_THROW(estimator_shap_values(*ridge, X, &cols), Error);
}

}  // namespace
}  // namespace bl::ml::testing
