// Native categorical features of histogram gradient boosting (categorical_features): a feature whose
// category, not its code's numeric order, carries the signal (the categorical fit beats the numeric
// one), identical model bytes at 1, 2 and 3 threads with a sabotage arm, save / load, unseen and
// invalid codes at predict following the missing values, invalid codes at fit, consistent code
// renumbering (the categorical fit does not move; the numeric one does), constraints, TreeSHAP and
// model-file checks; the support rule of the category search (hessian sums when the hessians vary,
// as scikit-learn) and the code checks of early stopping's validation rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/error.h"
#include "ml/boosting/hgb_losses.h"
#include "ml/boosting/hist_gbm.h"
#include "ml/tree/tree_model.h"
#include "ml/tree/tree_shap.h"
#include "ml_common/estimator_checks.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

constexpr int64_t kCats = 20;

// Effect of each category code: a fixed scrambled table, so the codes' numeric order says nothing.
double effect(int64_t c) {
  static const double t[kCats] = {2.0, -1.5, 0.3, 1.8, -2.2, 0.9, -0.4, 2.4, -1.1, 0.0,
                                  1.2, -2.6, 0.6, -0.8, 2.1, -1.9, 1.5, -0.1, -2.4, 0.8};
  return t[c];
}

// X [n, 3]: column 0 a category code in [0, kCats) (NaN at every 13th row, effect 1.0; codes in
// `skip` never drawn), columns 1 and 2 Philox normals. y = effect + 0.5 x1 + noise (k == 0) or its
// sign (k == 2).
Dataset cat_data(int64_t n, int k, uint64_t seed, std::vector<int64_t> skip = {}) {
  std::vector<float> x(static_cast<size_t>(n * 3)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = random_below(seed, 5, static_cast<uint64_t>(i), kCats);
    while (std::find(skip.begin(), skip.end(), c) != skip.end()) c = (c + 1) % kCats;
    const bool miss = i % 13 == 0;
    x[i * 3] = miss ? NAN : static_cast<float>(c);
    x[i * 3 + 1] = bl::normal_element(seed, 1, static_cast<uint64_t>(2 * i));
    x[i * 3 + 2] = bl::normal_element(seed, 1, static_cast<uint64_t>(2 * i + 1));
    const double s = (miss ? 1.0 : effect(c)) + 0.5 * x[i * 3 + 1] + 0.3 * bl::normal_element(seed, 2, static_cast<uint64_t>(i));
    y[i] = k == 0 ? static_cast<float>(s) : (s > 0.0 ? 1.0f : 0.0f);
  }
  return {Tensor::from_vector(x, {n, 3}), Tensor::from_vector(y, {n})};
}

using ml_common::error_of;

// X with column 0 replaced by v (every row).
Tensor with_column0(const Tensor& X, float v) {
  std::vector<float> x = X.contiguous().to_vector<float>();
  for (size_t i = 0; i < x.size(); i += 3) x[i] = v;
  return Tensor::from_vector(x, {X.dim(0), 3});
}

TEST(HgbCategorical, CategoryBeatsNumericOrder) {
  Dataset train = cat_data(3000, 0, 11), test = cat_data(1000, 0, 12);
  const Params base = {{"max_iter", "30"}, {"max_depth", "3"}};
  Params cat = base;
  cat["categorical_features"] = "[0]";
  // Fits the categorical and the numeric form of `kind` on train; returns both, scored on test.
  auto fit_both = [&](const char* kind, const Dataset& tr, const Dataset& te, std::unique_ptr<Estimator>& with_cat) {
    with_cat = make_estimator(kind, cat);
    auto numeric = make_estimator(kind, base);
    with_cat->fit(tr.X, tr.y);
    numeric->fit(tr.X, tr.y);
    return std::make_pair(with_cat->score(te.X, te.y), numeric->score(te.X, te.y));
  };
  std::unique_ptr<Estimator> a, c;
  const auto [r2_cat, r2_num] = fit_both("hist_gradient_boosting_regressor", train, test, a);
  EXPECT_GT(r2_cat, 0.9);
  EXPECT_GT(r2_cat, r2_num + 0.05) << "categorical " << r2_cat << " numeric " << r2_num;
  EXPECT_EQ(a->get_params().at("categorical_features"), "0");
  EXPECT_EQ(make_estimator("hist_gradient_boosting_regressor", base)->get_params().count("categorical_features"), 0u);
  nlohmann::json j = nlohmann::json::parse(a->to_json_text());
  EXPECT_TRUE(j["state"]["trees"][0].contains("cat_left"));

  Dataset ctrain = cat_data(3000, 2, 13), ctest = cat_data(1000, 2, 14);
  const auto [acc_cat, acc_num] = fit_both("hist_gradient_boosting_classifier", ctrain, ctest, c);
  EXPECT_GT(acc_cat, 0.85);
  EXPECT_GT(acc_cat, acc_num + 0.02) << "categorical " << acc_cat << " numeric " << acc_num;
}

TEST(HgbCategorical, ThreadIdentityAndRoundTrip) {
  Dataset train = cat_data(2500, 0, 21), test = cat_data(500, 0, 22);
  const std::string sha = expect_thread_identity(
      "hist_gradient_boosting_regressor",
      {{"max_iter", "12"}, {"categorical_features", "0"}, {"subsample", "0.7"}, {"l2_regularization", "0.5"}}, train,
      test.X, false);
  // Sabotage arm: one target changed gives other model bytes (the identity check can fail).
  std::vector<float> y = train.y.to_vector<float>();
  y[40] += 5.0f;
  Dataset moved{train.X, Tensor::from_vector(y, {train.X.dim(0)})};
  const std::string other = expect_thread_identity(
      "hist_gradient_boosting_regressor",
      {{"max_iter", "12"}, {"categorical_features", "0"}, {"subsample", "0.7"}, {"l2_regularization", "0.5"}}, moved,
      test.X, false);
  EXPECT_NE(sha, other);
  Dataset ctrain = cat_data(2500, 2, 23), ctest = cat_data(500, 2, 24);
  expect_thread_identity("hist_gradient_boosting_classifier",
                         {{"max_iter", "8"}, {"categorical_features", "0"}, {"grow_policy", "depthwise"},
                          {"max_depth", "4"}, {"max_leaf_nodes", "none"}},
                         ctrain, ctest.X, true);
  auto est = make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "10"}, {"categorical_features", "0"}});
  est->fit(ctrain.X, ctrain.y);
  expect_round_trip(*est, ctest.X);
}

TEST(HgbCategorical, UnseenAndInvalidCodesFollowMissing) {
  // Codes 7 and 19 never occur at fit; they, NaN and values that are no code take the same path.
  for (bool with_nan : {true, false}) {
    Dataset train = cat_data(2000, 0, 31, {7, 19});
    if (!with_nan) train.X = Tensor::from_vector([&] {
      std::vector<float> x = train.X.to_vector<float>();
      for (size_t i = 0; i < x.size(); i += 3) {
        if (x[i] != x[i]) x[i] = 3.0f;
      }
      return x;
    }(), {2000, 3});
    auto est = make_estimator("hist_gradient_boosting_regressor",
                              {{"max_iter", "15"}, {"categorical_features", "0"}});
    est->fit(train.X, train.y);
    Dataset test = cat_data(300, 0, 32);
    const std::string missing = tensor_sha(est->predict(with_column0(test.X, NAN)));
    for (float v : {7.0f, 19.0f, 20.0f, 254.0f, 255.0f, 300.0f, -1.0f, 2.5f, 1e9f, INFINITY, -INFINITY}) {
      EXPECT_EQ(tensor_sha(est->predict(with_column0(test.X, v))), missing) << "value " << v << " nan " << with_nan;
    }
    // A seen code is routed by its own category (here: not the missing path).
    EXPECT_NE(tensor_sha(est->predict(with_column0(test.X, 4.0f))), missing);
  }
}

TEST(HgbCategorical, CodeRenumberingDoesNotMoveTheFit) {
  // The same categories under other codes (a fixed permutation in train and test): the categorical
  // fit gives the same predictions; sabotage arm: the numeric fit does not.
  Dataset train = cat_data(2000, 0, 41), test = cat_data(500, 0, 42);
  auto renumber = [](const Tensor& X) {
    std::vector<float> x = X.to_vector<float>();
    for (size_t i = 0; i < x.size(); i += 3) {
      if (x[i] == x[i]) x[i] = static_cast<float>((static_cast<int64_t>(x[i]) * 7 + 3) % kCats);
    }
    return Tensor::from_vector(x, {X.dim(0), 3});
  };
  for (bool categorical : {true, false}) {
    Params p = {{"max_iter", "10"}, {"max_depth", "3"}};
    if (categorical) p["categorical_features"] = "0";
    auto a = make_estimator("hist_gradient_boosting_regressor", p);
    auto b = make_estimator("hist_gradient_boosting_regressor", p);
    a->fit(train.X, train.y);
    b->fit(renumber(train.X), train.y);
    const std::string pa = tensor_sha(a->predict(test.X)), pb = tensor_sha(b->predict(renumber(test.X)));
    if (categorical) EXPECT_EQ(pa, pb);
    else EXPECT_NE(pa, pb);
  }
}

TEST(HgbCategorical, InvalidCodesAtFit) {
  Dataset train = cat_data(200, 0, 51);
  std::vector<float> x = train.X.to_vector<float>();
  struct Case {
    float v;
    std::string max_bins, want;
  };
  for (const Case& c : {Case{-1.0f, "255", "value -1 at row 5"}, Case{2.5f, "255", "value 2.5 at row 5"},
                        Case{255.0f, "255", "value 255 at row 5"}, Case{40.0f, "32", "in [0, 32)"},
                        Case{INFINITY, "255", "value inf at row 5"}}) {
    std::vector<float> bad = x;
    bad[5 * 3] = c.v;
    auto est = make_estimator("hist_gradient_boosting_regressor",
                              {{"categorical_features", "0"}, {"max_bins", c.max_bins}, {"max_iter", "2"}});
    const std::string msg = error_of([&] { est->fit(Tensor::from_vector(bad, {200, 3}), train.y); });
    EXPECT_NE(msg.find("categorical feature 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.want), std::string::npos) << msg;
  }
  // The same values in a numeric column are fine.
  std::vector<float> ok = x;
  ok[5 * 3 + 1] = 2.5f;
  auto est = make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "0"}, {"max_iter", "2"}});
  EXPECT_NO_THROW(est->fit(Tensor::from_vector(ok, {200, 3}), train.y));
  // Bad parameters and combinations.
  auto far = make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "3"}, {"max_iter", "2"}});
  EXPECT_NE(error_of([&] { far->fit(train.X, train.y); }).find("categorical_features names feature 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "0,0"}}); })
                .find("listed twice"),
            std::string::npos);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "-1"}}), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "a"}}), Error);
  auto mono = make_estimator("hist_gradient_boosting_regressor",
                             {{"categorical_features", "0"}, {"monotonic_cst", "1,0,0"}, {"max_iter", "2"}});
  EXPECT_NE(error_of([&] { mono->fit(train.X, train.y); }).find("feature 0 is categorical and cannot have a monotonic"),
            std::string::npos);
  auto sym = make_estimator("hist_gradient_boosting_regressor",
                            {{"categorical_features", "0"}, {"grow_policy", "symmetric"}, {"max_iter", "2"}});
  EXPECT_NE(error_of([&] { sym->fit(train.X, train.y); }).find("grow_policy=symmetric"), std::string::npos);
  auto none = make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "none"}});
  EXPECT_EQ(none->get_params().count("categorical_features"), 0u);
}

TEST(HgbCategorical, ConstraintsRankerAndShap) {
  Dataset train = cat_data(2000, 0, 61), test = cat_data(200, 0, 62);
  // Monotonic on another feature and interaction constraints work with a categorical feature.
  auto mono = make_estimator("hist_gradient_boosting_regressor",
                             {{"categorical_features", "0"}, {"monotonic_cst", "0,1,0"}, {"max_iter", "20"}});
  mono->fit(train.X, train.y);
  EXPECT_GT(mono->score(test.X, test.y), 0.85);
  auto inter = make_estimator("hist_gradient_boosting_regressor",
                              {{"categorical_features", "0"}, {"interaction_cst", "[[0], [1, 2]]"}, {"max_iter", "20"}});
  inter->fit(train.X, train.y);
  EXPECT_GT(inter->score(test.X, test.y), 0.85);
  // TreeSHAP: the contributions and the bias add up to the raw prediction.
  auto est = make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "0"}, {"max_iter", "15"}});
  est->fit(train.X, train.y);
  int64_t cols = 0;
  std::vector<float> xs = test.X.to_vector<float>();
  xs[0] = 300.0f;  // not a code: the missing path
  const Tensor probe = Tensor::from_vector(xs, {test.X.dim(0), 3});
  const std::vector<double> phi = estimator_shap_values(*est, probe, &cols);
  ASSERT_EQ(cols, 4);
  const std::vector<float> pred = est->predict(probe).to_vector<float>();
  for (int64_t i = 0; i < probe.dim(0); ++i) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += phi[i * cols + c];
    EXPECT_NEAR(s, pred[i], 1e-4) << "row " << i;
  }
  // Ranker: the indices count the feature columns (the group column excluded).
  std::vector<float> rx(static_cast<size_t>(2000 * 4));
  std::vector<float> tx = train.X.to_vector<float>(), ty = train.y.to_vector<float>(), rel(2000);
  for (int64_t i = 0; i < 2000; ++i) {
    rx[i * 4] = static_cast<float>(i / 20);
    for (int j = 0; j < 3; ++j) rx[i * 4 + 1 + j] = tx[i * 3 + j];
    rel[i] = static_cast<float>(std::min(4.0, std::max(0.0, std::floor(ty[i] + 2.0))));
  }
  Dataset rank{Tensor::from_vector(rx, {2000, 4}), Tensor::from_vector(rel, {2000})};
  const Params rp = {{"group_column", "0"}, {"categorical_features", "0"}, {"max_iter", "10"}};
  expect_thread_identity("hist_gradient_boosting_ranker", rp, rank, rank.X, false);
  auto r = make_estimator("hist_gradient_boosting_ranker", rp);
  r->fit(rank.X, rank.y);
  EXPECT_GT(r->score(rank.X, rank.y), 0.8);
  nlohmann::json j = nlohmann::json::parse(r->to_json_text());
  EXPECT_TRUE(j["state"]["trees"][0].contains("cat_left"));
}

TEST(HgbCategorical, ModelFileChecks) {
  Dataset train = cat_data(1000, 0, 71);
  auto est = make_estimator("hist_gradient_boosting_regressor", {{"categorical_features", "0"}, {"max_iter", "3"}});
  est->fit(train.X, train.y);
  nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  ASSERT_TRUE(j["state"]["trees"][0].contains("categorical"));
  nlohmann::json short_bits = j;
  std::string& h = short_bits["state"]["trees"][0]["cat_left"].get_ref<std::string&>();
  h = h.substr(0, h.size() - 16);
  EXPECT_NE(error_of([&] { estimator_from_json_text(short_bits.dump(), "m"); }).find(".cat_left: expected"),
            std::string::npos);
  nlohmann::json lone = j;
  lone["state"]["trees"][0].erase("cat_left");
  EXPECT_NE(error_of([&] { estimator_from_json_text(lone.dump(), "m"); }).find("categorical and cat_left"),
            std::string::npos);
  nlohmann::json leaf = j;
  auto& t0 = leaf["state"]["trees"][0];
  const size_t last = t0["feature"].size() - 1;  // the last node is a leaf
  t0["categorical"][last] = 1;
  EXPECT_NE(error_of([&] { estimator_from_json_text(leaf.dump(), "m"); }).find("a leaf cannot be categorical"),
            std::string::npos);
}

// One column of category codes built from parts of equal rows.
struct Part {
  int code;
  int64_t rows;
  float y, weight;
};

// The left codes of the root of a one-split squared-error fit (max_iter 1, 2 leaves,
// min_samples_leaf 20) on the parts, with their weights (unweighted when every weight is 1).
std::vector<int> root_left_codes(const std::vector<Part>& parts) {
  std::vector<float> x, y, w;
  bool weighted = false;
  for (const Part& p : parts) {
    for (int64_t i = 0; i < p.rows; ++i) {
      x.push_back(static_cast<float>(p.code));
      y.push_back(p.y);
      w.push_back(p.weight);
    }
    weighted = weighted || p.weight != 1.0f;
  }
  const int64_t n = static_cast<int64_t>(x.size());
  auto est = make_estimator("hist_gradient_boosting_regressor",
                            {{"categorical_features", "0"}, {"max_iter", "1"}, {"max_leaf_nodes", "2"}});
  if (weighted) est->fit_weighted(Tensor::from_vector(x, {n, 1}), Tensor::from_vector(y, {n}), Tensor::from_vector(w, {n}));
  else est->fit(Tensor::from_vector(x, {n, 1}), Tensor::from_vector(y, {n}));
  const nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  const Tree t = tree_from_json(j["state"]["trees"][0], 1, "tree");
  EXPECT_TRUE(t.is_categorical(0));
  std::vector<int> left;
  for (const Part& p : parts) {
    if (t.goes_left(0, static_cast<float>(p.code))) left.push_back(p.code);
  }
  return left;
}

TEST(HgbCategorical, SupportCountsRowsWithConstantHessians) {
  // Codes 0-4: 100 rows of y = code; code 5: y = 10 on 9 or 10 rows. Unweighted squared error has
  // constant hessians, so the support is the row count: 10 rows join the search, 9 stay right.
  // Expected left sets: scikit-learn's search on these sums (python/tests/test_hgb_categorical_peer.py
  // runs scikit-learn itself).
  std::vector<Part> parts;
  for (int c = 0; c < 5; ++c) parts.push_back({c, 100, static_cast<float>(c), 1.0f});
  parts.push_back({5, 9, 10.0f, 1.0f});
  EXPECT_EQ(root_left_codes(parts), (std::vector<int>{0, 1}));
  parts.back().rows = 10;
  EXPECT_EQ(root_left_codes(parts), (std::vector<int>{3, 4, 5}));
}

TEST(HgbCategorical, SupportCountsHessiansWhenTheyVary) {
  // Weights make the hessians vary: a category's support is its hessian sum in units of the
  // node's mean hessian (H_c * n / H >= 10, scikit-learn's MIN_CAT_SUPPORT rule), not its rows.
  std::vector<Part> base;
  for (int c = 0; c < 5; ++c) base.push_back({c, 100, static_cast<float>(c), 1.0f});
  // 6 heavy rows (support 30 * 506 / 530 = 28.6) join the search and go left with code 4; counted
  // by rows they would stay right and the split would be {0, 1}.
  std::vector<Part> heavy = base;
  heavy.push_back({5, 6, 10.0f, 5.0f});
  EXPECT_EQ(root_left_codes(heavy), (std::vector<int>{4, 5}));
  // 15 light rows of an extreme target (support 0.15 * 515 / 500.15 = 0.15) stay right; counted by
  // rows they would lead the order and the split would be {4, 5}.
  std::vector<Part> light = base;
  light.push_back({5, 15, 1000.0f, 0.01f});
  EXPECT_EQ(root_left_codes(light), (std::vector<int>{0, 1}));
  // The exact boundary: code 5 has 5 rows of weight 2 and code 6 10 rows of weight 0.5, so the
  // node's mean hessian is 1: code 5's support is exactly 10 (kept), code 6's is 5 (right, though
  // it has 10 rows: counted by rows the split would be {0, 6}). At weight 1.99 code 5 drops too.
  std::vector<Part> edge = base;
  edge.push_back({5, 5, 10.0f, 2.0f});
  edge.push_back({6, 10, -10.0f, 0.5f});
  EXPECT_EQ(root_left_codes(edge), (std::vector<int>{3, 4, 5}));
  edge[5].weight = 1.99f;
  EXPECT_EQ(root_left_codes(edge), (std::vector<int>{0, 1}));
}

TEST(HgbCategorical, SupportRuleThreadIdentity) {
  // A classifier whose categories reach extreme probabilities (varying hessians, support by
  // hessian sums in most nodes): the same model bytes at 1, 2 and 3 threads, weighted or not.
  Dataset ctrain = cat_data(2500, 2, 81), ctest = cat_data(500, 2, 82);
  const Params p = {{"max_iter", "25"}, {"learning_rate", "0.3"}, {"categorical_features", "0"}};
  expect_thread_identity("hist_gradient_boosting_classifier", p, ctrain, ctest.X, true);
}

TEST(HgbCategorical, ValidationRowsAreChecked) {
  // Early stopping holds rows out of X before fitting: a bad code in a held-out row is refused as in
  // a training row, and the message counts the rows of X (held out or not).
  const int64_t n = 400;
  Dataset train = cat_data(n, 0, 91);
  const std::vector<char> held = validation_mask(n, nullptr, 1, 0.25, 3);
  int64_t held_row = -1, kept_row = -1;
  for (int64_t i = 17; i < n && (held_row < 0 || kept_row < 0); ++i) (held[i] ? held_row : kept_row) = i;
  ASSERT_GE(held_row, 0);
  ASSERT_GE(kept_row, 0);
  const Params p = {{"categorical_features", "0"}, {"max_iter", "5"}, {"early_stopping", "true"},
                    {"validation_fraction", "0.25"}, {"random_state", "3"}};
  for (int64_t row : {held_row, kept_row}) {
    for (float v : {-1.0f, 2.5f, 255.0f}) {
      std::vector<float> x = train.X.to_vector<float>();
      x[row * 3] = v;
      auto est = make_estimator("hist_gradient_boosting_regressor", p);
      const std::string msg = error_of([&] { est->fit(Tensor::from_vector(x, {n, 3}), train.y); });
      std::ostringstream want;
      want << "categorical feature 0 has value " << v << " at row " << row << ";";
      EXPECT_NE(msg.find(want.str()), std::string::npos) << msg << " (held " << held[row] << ")";
    }
  }
  // The classifier (stratified hold-out) and the ranker (whole queries held out) check the same way.
  Dataset ctrain = cat_data(n, 2, 92);
  std::vector<float> cx = ctrain.X.to_vector<float>();
  cx[(n - 1) * 3] = 300.0f;
  auto cls = make_estimator("hist_gradient_boosting_classifier", p);
  EXPECT_NE(error_of([&] { cls->fit(Tensor::from_vector(cx, {n, 3}), ctrain.y); }).find("value 300 at row 399;"),
            std::string::npos);
  std::vector<float> rx(static_cast<size_t>(n * 4));
  std::vector<float> tx = train.X.to_vector<float>(), rel(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    rx[i * 4] = static_cast<float>(i / 20);
    for (int j = 0; j < 3; ++j) rx[i * 4 + 1 + j] = tx[i * 3 + j];
    rel[i] = static_cast<float>(i % 3);
  }
  for (int64_t row : {0, 201, 399}) {
    std::vector<float> bad = rx;
    bad[row * 4 + 1] = -3.0f;
    auto r = make_estimator("hist_gradient_boosting_ranker",
                            {{"group_column", "0"}, {"categorical_features", "0"}, {"max_iter", "5"},
                             {"early_stopping", "true"}, {"validation_fraction", "0.3"}});
    const std::string msg = error_of([&] { r->fit(Tensor::from_vector(bad, {n, 4}), Tensor::from_vector(rel, {n})); });
    EXPECT_NE(msg.find("value -3 at row " + std::to_string(row) + ";"), std::string::npos) << msg;
  }
  // The engine checks the validation rows it is given, naming them as such.
  std::vector<float> xs = train.X.to_vector<float>(), ys = train.y.to_vector<float>();
  std::vector<float> vx(xs.begin(), xs.begin() + 50 * 3), vy(ys.begin(), ys.begin() + 50);
  vx[7 * 3] = 2.5f;
  BoostParams bp;
  bp.categorical = {0};
  bp.max_iter = 2;
  bp.early_stopping = true;
  BoostValidation val;
  val.X = vx.data();
  val.n = 50;
  val.y_value = vy.data();
  EXPECT_NE(error_of([&] { fit_boosting(xs.data(), n, 3, ys.data(), nullptr, bp, nullptr, &val); })
                .find("categorical feature 0 has value 2.5 at validation row 7;"),
            std::string::npos);
  vx[7 * 3] = 4.0f;  // a valid code: the fit runs
  EXPECT_NO_THROW(fit_boosting(xs.data(), n, 3, ys.data(), nullptr, bp, nullptr, &val));
}

}  // namespace
}  // namespace bl::ml::testing
