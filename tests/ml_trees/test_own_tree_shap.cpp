// TreeSHAP of bitlearn's own trees (decision and extra trees, forests, histogram gradient boosting)
// from the training cover their builders record (tree_model.h): per row the values plus the
// expected value add up to the model's margin (the binary64 sum of the leaf values the model adds),
// and they equal the Shapley values by subset enumeration, where v(S) follows the row on the
// features in S and weighs both children by their recorded cover elsewhere (trees read back from
// the model file, so the file's cover is what is checked). Also: the same bytes at threads 1, 2 and
// 3, multiclass groups, NaN rows (default direction), a sabotage arm (one wrong leaf cover must break
// the agreement) and a model file without cover (loads and predicts; SHAP names the cause).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/tree/tree_model.h"
#include "ml/tree/tree_shap.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

// The explained model read back from its file: trees, groups, base margins and the leaf divisor.
struct Explained {
  std::vector<Tree> trees;
  int64_t groups = 1;
  std::vector<double> base;
  double divisor = 1.0;
};

Explained read_model(const Estimator& est, int64_t d) {
  const nlohmann::json j = nlohmann::json::parse(est.to_json_text());
  const nlohmann::json& s = j.at("state");
  Explained m;
  for (size_t i = 0; i < s.at("trees").size(); ++i) m.trees.push_back(tree_from_json(s["trees"][i], d, "tree"));
  if (s.contains("base")) {  // boosting: base + the sum of the trees, tree t in group t % n_groups
    m.groups = s.at("n_groups").get<int64_t>();
    for (float b : f32_from_hex(s["base"].get<std::string>(), "base")) m.base.push_back(b);
  } else {  // CART: the mean of the trees' value vectors
    m.groups = m.trees[0].n_values;
    m.base.assign(static_cast<size_t>(m.groups), 0.0);
    m.divisor = static_cast<double>(m.trees.size());
  }
  return m;
}

// Output `out` (tree-major, value-minor: group out % groups) of tree t as a leaf value.
double leaf_value(const Explained& m, const Tree& t, int64_t node, int64_t c) {
  return static_cast<double>(t.value[node * t.n_values + c]) / m.divisor;
}

bool row_left(const Tree& t, const float* x, int64_t node) {
  const float v = x[t.feature[node]];
  return std::isnan(v) ? t.default_left[node] != 0 : v <= t.threshold[node];
}

// v(S) of one tree output: features in mask follow the row, others both children by cover.
double v_of(const Explained& m, const Tree& t, int64_t c, const std::vector<double>& cover, const float* x,
            uint32_t mask, int64_t node) {
  if (t.feature[node] < 0) return leaf_value(m, t, node, c);
  const int32_t l = t.left[node], r = t.right[node];
  if (mask >> t.feature[node] & 1u) return v_of(m, t, c, cover, x, mask, row_left(t, x, node) ? l : r);
  return (cover[l] * v_of(m, t, c, cover, x, mask, l) + cover[r] * v_of(m, t, c, cover, x, mask, r)) / cover[node];
}

double factorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

// Shapley values by enumeration of every coalition, [groups * (d + 1)] as TreeSHAP's row (the last
// column of a group: v(empty set) summed with the base). covers: per tree (empty: the tree's own).
std::vector<double> oracle_row(const Explained& m, const float* x, int64_t d,
                               const std::vector<std::vector<double>>& covers = {}) {
  std::vector<double> out(static_cast<size_t>(m.groups * (d + 1)), 0.0);
  for (int64_t k = 0; k < m.groups; ++k) out[k * (d + 1) + d] = m.base[k];
  const int md = static_cast<int>(d);
  int64_t o = 0;
  for (size_t t = 0; t < m.trees.size(); ++t) {
    const Tree& tree = m.trees[t];
    const std::vector<double>& cover = covers.empty() ? tree.cover : covers[t];
    for (int64_t c = 0; c < tree.n_values; ++c, ++o) {
      double* g = &out[(o % m.groups) * (d + 1)];
      g[d] += v_of(m, tree, c, cover, x, 0u, 0);
      for (int j = 0; j < md; ++j) {
        for (uint32_t s = 0; s < (1u << md); ++s) {
          if (s >> j & 1u) continue;
          const int size = __builtin_popcount(s);
          const double w = factorial(size) * factorial(md - size - 1) / factorial(md);
          g[j] += w * (v_of(m, tree, c, cover, x, s | (1u << j), 0) - v_of(m, tree, c, cover, x, s, 0));
        }
      }
    }
  }
  return out;
}

// The model's margin per group in binary64: base + each tree's leaf value (/ divisor), tree order.
std::vector<double> margin_row(const Explained& m, const float* x) {
  std::vector<double> g(m.base);
  int64_t o = 0;
  for (const Tree& t : m.trees) {
    const int32_t leaf = t.leaf_of(x);
    for (int64_t c = 0; c < t.n_values; ++c, ++o) g[o % m.groups] += leaf_value(m, t, leaf, c);
  }
  return g;
}

std::vector<double> shap_of(const Estimator& est, const Tensor& X, int64_t* cols) {
  return estimator_shap_values(est, X, cols);
}

struct Case {
  std::string name;
  Params params;
  int k;  // 0: regression, else classes
  bool nan_train;
};

std::vector<Case> cases() {
  return {
      {"decision_tree_regressor", {{"max_depth", "5"}}, 0, false},
      {"decision_tree_classifier", {{"max_depth", "4"}}, 3, false},
      {"extra_tree_regressor", {{"max_depth", "4"}}, 0, false},
      {"random_forest_classifier", {{"n_estimators", "5"}, {"max_depth", "4"}}, 3, false},
      {"random_forest_regressor", {{"n_estimators", "4"}, {"max_depth", "4"}}, 0, false},
      {"extra_trees_classifier", {{"n_estimators", "4"}, {"max_depth", "3"}}, 2, false},
      {"hist_gradient_boosting_regressor", {{"max_iter", "6"}, {"max_leaf_nodes", "8"}, {"min_samples_leaf", "5"}},
       0, true},
      {"hist_gradient_boosting_regressor",
       {{"max_iter", "5"}, {"grow_policy", "depthwise"}, {"max_depth", "3"}, {"min_samples_leaf", "5"}}, 0, true},
      {"hist_gradient_boosting_regressor",
       {{"max_iter", "4"}, {"grow_policy", "symmetric"}, {"max_depth", "3"}, {"min_samples_leaf", "5"}}, 0, true},
      {"hist_gradient_boosting_classifier", {{"max_iter", "5"}, {"max_leaf_nodes", "6"}, {"min_samples_leaf", "5"}},
       2, true},
      {"hist_gradient_boosting_classifier",
       {{"max_iter", "4"}, {"max_leaf_nodes", "5"}, {"min_samples_leaf", "5"}, {"subsample", "0.8"}}, 3, true},
  };
}

constexpr int64_t kD = 5;

// Test rows with a NaN now and then (every tree sends them its default way).
Tensor test_rows() { return make_data(40, kD, 0, 77, /*nan_every=*/7).X; }

TEST(OwnTreeShap, AdditiveAndEqualToSubsetEnumeration) {
  const Tensor Xt = test_rows();
  const float* xt = Xt.data<float>();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + " " + (c.params.count("grow_policy") ? c.params.at("grow_policy") : ""));
    const Dataset train = make_data(300, kD, c.k, 11, c.nan_train ? 13 : 0);
    auto est = make_estimator(c.name, c.params);
    est->fit(train.X, train.y);
    const Explained m = read_model(*est, kD);
    for (const Tree& t : m.trees) ASSERT_EQ(t.cover.size(), static_cast<size_t>(t.n_nodes()));
    int64_t cols = 0;
    const std::vector<double> phi = shap_of(*est, Xt, &cols);
    ASSERT_EQ(cols, m.groups * (kD + 1));
    ASSERT_EQ(phi.size(), static_cast<size_t>(Xt.dim(0) * cols));
    double worst_sum = 0.0, worst_oracle = 0.0;
    for (int64_t i = 0; i < Xt.dim(0); ++i) {
      const float* x = xt + i * kD;
      const double* row = &phi[i * cols];
      const std::vector<double> margin = margin_row(m, x);
      const std::vector<double> ref = oracle_row(m, x, kD);
      double scale = 1e-300;
      for (double v : ref) scale = std::max(scale, std::fabs(v));
      for (int64_t j = 0; j < cols; ++j) worst_oracle = std::max(worst_oracle, std::fabs(row[j] - ref[j]) / scale);
      for (int64_t k = 0; k < m.groups; ++k) {
        double sum = 0.0;
        for (int64_t j = 0; j <= kD; ++j) sum += row[k * (kD + 1) + j];
        worst_sum = std::max(worst_sum, std::fabs(sum - margin[k]) / std::max(1.0, std::fabs(margin[k])));
      }
    }
    EXPECT_LE(worst_sum, 1e-9);
    EXPECT_LE(worst_oracle, 1e-12);
    std::cout << "  " << c.name << ": groups " << m.groups << ", trees " << m.trees.size()
              << ", additivity " << worst_sum << ", vs enumeration " << worst_oracle << "\n";
  }
}

// The estimator's own float32 output agrees with the binary64 sum (regression values, class
// fractions, the boosting regressor's raw score).
TEST(OwnTreeShap, SumsMatchTheEstimatorsPredictions) {
  const Tensor Xt = test_rows();
  for (const char* name : {"random_forest_regressor", "hist_gradient_boosting_regressor"}) {
    const Dataset train = make_data(300, kD, 0, 12, 0);
    auto est = make_estimator(name, std::string(name)[0] == 'h' ? Params{{"max_iter", "5"}, {"min_samples_leaf", "5"}}
                                                                : Params{{"n_estimators", "4"}});
    est->fit(train.X, train.y);
    int64_t cols = 0;
    const std::vector<double> phi = shap_of(*est, Xt, &cols);
    const std::vector<float> pred = est->predict(Xt).to_vector<float>();
    for (int64_t i = 0; i < Xt.dim(0); ++i) {
      double sum = 0.0;
      for (int64_t j = 0; j < cols; ++j) sum += phi[i * cols + j];
      EXPECT_NEAR(sum, pred[i], 1e-5 * std::max(1.0, std::fabs(sum))) << name << " row " << i;
    }
  }
  const Dataset train = make_data(300, kD, 3, 13, 0);
  auto est = make_estimator("random_forest_classifier", {{"n_estimators", "4"}});
  est->fit(train.X, train.y);
  int64_t cols = 0;
  const std::vector<double> phi = shap_of(*est, Xt, &cols);
  const std::vector<float> proba = est->predict_proba(Xt).to_vector<float>();
  for (int64_t i = 0; i < Xt.dim(0); ++i) {
    for (int64_t k = 0; k < 3; ++k) {
      double sum = 0.0;
      for (int64_t j = 0; j <= kD; ++j) sum += phi[i * cols + k * (kD + 1) + j];
      EXPECT_NEAR(sum, proba[i * 3 + k], 1e-6);
    }
  }
}

TEST(OwnTreeShap, SameBytesAtThreads123) {
  const Tensor Xt = make_data(100, kD, 0, 78, 9).X;
  const int before = num_threads();
  for (const Case& c : {cases()[3], cases()[10]}) {
    const Dataset train = make_data(300, kD, c.k, 14, c.nan_train ? 13 : 0);
    auto est = make_estimator(c.name, c.params);
    est->fit(train.X, train.y);
    std::vector<double> first;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      int64_t cols = 0;
      const std::vector<double> phi = shap_of(*est, Xt, &cols);
      if (first.empty()) first = phi;
      ASSERT_EQ(phi.size(), first.size());
      EXPECT_EQ(std::memcmp(phi.data(), first.data(), phi.size() * sizeof(double)), 0) << c.name << " threads " << threads;
    }
    set_num_threads(before);
  }
  set_num_threads(before);
}

// Sabotage: one leaf's cover doubled in the model file (still a valid file). TreeSHAP follows the
// file, so it must now disagree with the enumeration on the true covers, and agree with the
// enumeration on the sabotaged ones.
TEST(OwnTreeShap, SabotageWrongCoverIsCaught) {
  const Tensor Xt = test_rows();
  for (const char* name : {"decision_tree_regressor", "hist_gradient_boosting_regressor"}) {
    const Dataset train = make_data(300, kD, 0, 15, 0);
    auto est = make_estimator(name, {});
    est->set_params(std::string(name)[0] == 'h' ? Params{{"max_iter", "3"}, {"min_samples_leaf", "5"}}
                                                : Params{{"max_depth", "4"}});
    est->fit(train.X, train.y);
    const Explained m = read_model(*est, kD);
    nlohmann::json j = nlohmann::json::parse(est->to_json_text());
    Tree t0 = m.trees[0];
    ASSERT_GE(t0.feature[0], 0);
    // A leaf's cover (an internal node's would cancel: only child / parent ratios along a path
    // matter, and its children's covers are divided by it again).
    int64_t leaf = 0;
    while (t0.feature[leaf] >= 0) ++leaf;
    t0.cover[leaf] *= 2.0;
    nlohmann::json jt;
    tree_to_json(t0, jt);
    j["state"]["trees"][0] = jt;
    auto bad = estimator_from_json_text(j.dump(), "sabotaged");
    int64_t cols = 0;
    const std::vector<double> phi = shap_of(*bad, Xt, &cols);
    std::vector<std::vector<double>> covers;
    for (const Tree& t : m.trees) covers.push_back(t.cover);
    covers[0] = t0.cover;
    double worst_true = 0.0, worst_sabotaged = 0.0;
    for (int64_t i = 0; i < Xt.dim(0); ++i) {
      const float* x = Xt.data<float>() + i * kD;
      const std::vector<double> ref = oracle_row(m, x, kD), ref_bad = oracle_row(m, x, kD, covers);
      double scale = 1e-300;
      for (double v : ref) scale = std::max(scale, std::fabs(v));
      for (int64_t c = 0; c < cols; ++c) {
        worst_true = std::max(worst_true, std::fabs(phi[i * cols + c] - ref[c]) / scale);
        worst_sabotaged = std::max(worst_sabotaged, std::fabs(phi[i * cols + c] - ref_bad[c]) / scale);
      }
    }
    EXPECT_GT(worst_true, 1e-6) << name;
    EXPECT_LE(worst_sabotaged, 1e-12) << name;
  }
}

// A model file written before the cover was recorded: it loads and predicts the same; SHAP says why not.
TEST(OwnTreeShap, ModelFileWithoutCover) {
  const Tensor Xt = test_rows();
  for (const char* name : {"random_forest_classifier", "hist_gradient_boosting_classifier"}) {
    const Dataset train = make_data(200, kD, 2, 16, 0);
    auto est = make_estimator(name, {});
    est->set_params(std::string(name)[0] == 'h' ? Params{{"max_iter", "3"}} : Params{{"n_estimators", "3"}});
    est->fit(train.X, train.y);
    nlohmann::json j = nlohmann::json::parse(est->to_json_text());
    for (auto& t : j["state"]["trees"]) {
      ASSERT_TRUE(t.contains("cover"));
      t.erase("cover");
    }
    auto old = estimator_from_json_text(j.dump(), "old model");
    EXPECT_EQ(tensor_sha(old->predict_proba(Xt)), tensor_sha(est->predict_proba(Xt)));
    int64_t cols = 0;
    try {
      shap_of(*old, Xt, &cols);
      ADD_FAILURE() << name << ": expected an error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(name), std::string::npos) << msg;
      EXPECT_NE(msg.find("has no training cover"), std::string::npos) << msg;
      EXPECT_NE(msg.find("refit"), std::string::npos) << msg;
    }
    // A cover of the wrong length is a load error naming the field.
    j = nlohmann::json::parse(est->to_json_text());
    j["state"]["trees"][0]["cover"] = i64_to_hex({1, 2});
    try {
      estimator_from_json_text(j.dump(), "bad model");
      ADD_FAILURE() << name << ": expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(".cover: expected"), std::string::npos) << e.what();
    }
  }
}

TEST(OwnTreeShap, Errors) {
  const Dataset train = make_data(100, kD, 0, 17, 0);
  auto est = make_estimator("decision_tree_regressor", {});
  int64_t cols = 0;
  EXPECT_THROW(shap_of(*est, train.X, &cols), Error);  // before fit
  est->fit(train.X, train.y);
  try {
    shap_of(*est, make_data(10, kD + 1, 0, 1).X, &cols);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("features"), std::string::npos) << e.what();
  }
  auto knn = make_estimator("linear_regression", {});
  knn->fit(train.X, train.y);
  try {
    shap_of(*knn, train.X, &cols);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SHAP values are not supported"), std::string::npos) << e.what();
  }
}

// CART covers are scikit-learn's weighted_n_node_samples: the (bootstrap-count times sample-weight)
// sum of the rows reaching each node; a node's cover is the sum of its children's.
TEST(OwnTreeShap, CartCoverIsTheWeightedRowCount) {
  const Dataset train = make_data(150, kD, 2, 18, 0);
  auto est = make_estimator("decision_tree_classifier", {{"max_depth", "3"}});
  std::vector<float> w(150);
  for (int i = 0; i < 150; ++i) w[i] = 0.25f * static_cast<float>(1 + i % 4);
  est->fit_weighted(train.X, train.y, Tensor::from_vector(w, {150}));
  const Explained m = read_model(*est, kD);
  double total = 0.0;
  for (float v : w) total += v;
  const Tree& t = m.trees[0];
  EXPECT_EQ(t.cover[0], total);
  for (int64_t i = 0; i < t.n_nodes(); ++i) {
    if (t.feature[i] >= 0) EXPECT_EQ(t.cover[i], t.cover[t.left[i]] + t.cover[t.right[i]]);
  }
}

// Recording the cover adds the "cover" keys and changes nothing else: the model file of a fit pinned
// before the cover existed (test_boost_bits_pinned.cpp, "regression_lossguide"), its cover keys
// removed, has the digest pinned then.
TEST(OwnTreeShap, FileWithoutCoverKeysIsThePinnedFile) {
  const Dataset train = make_data(1500, 6, 0, 211, 7);
  auto est = make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "20"}});
  est->fit(train.X, train.y);
  nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  for (auto& t : j["state"]["trees"]) {
    ASSERT_TRUE(t.contains("cover"));
    t.erase("cover");
  }
  auto stripped = estimator_from_json_text(j.dump(), "stripped");
  const std::string text = stripped->to_json_text();
  EXPECT_EQ(sha256_hex(text.data(), text.size()), "b1660d1c4aaebcc09a965be6eb3319a49c4deca12368cd6e9902ba429fe84ec8");
}

}  // namespace
}  // namespace bl::ml::testing
