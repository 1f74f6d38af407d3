// Histogram gradient boosting: accuracy (regression, binary, multiclass), identity across thread
// counts, training scores equal predictions, missing values, growth policies, bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

TEST(HistGradientBoosting, Regression) {
  Dataset train = make_data(2000, 5, 0, 101), test = make_data(500, 5, 0, 102);
  auto est = make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "60"}});
  est->fit(train.X, train.y);
  EXPECT_GT(est->score(test.X, test.y), 0.85);
  expect_round_trip(*est, test.X);
  expect_thread_identity("hist_gradient_boosting_regressor",
                         {{"max_iter", "15"}, {"subsample", "0.7"}, {"colsample_bytree", "0.6"},
                          {"l1_regularization", "0.1"}, {"l2_regularization", "1"}},
                         train, test.X, false);
}

TEST(HistGradientBoosting, BinaryAndMulticlass) {
  Dataset train = make_data(2000, 5, 2, 111), test = make_data(500, 5, 2, 112);
  auto est = make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "50"}});
  est->fit(train.X, train.y);
  EXPECT_GT(est->score(test.X, test.y), 0.85);
  expect_round_trip(*est, test.X);
  expect_thread_identity("hist_gradient_boosting_classifier", {{"max_iter", "10"}}, train, test.X, true);
  Dataset mtrain = make_data(2000, 5, 4, 113), mtest = make_data(500, 5, 4, 114);
  auto m = make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "40"}});
  m->fit(mtrain.X, mtrain.y);
  EXPECT_GT(m->score(mtest.X, mtest.y), 0.7);
  Tensor p = m->predict_proba(mtest.X);
  ASSERT_EQ(p.dim(1), 4);
  expect_thread_identity("hist_gradient_boosting_classifier",
                         {{"max_iter", "6"}, {"grow_policy", "depthwise"}, {"max_depth", "4"},
                          {"max_leaf_nodes", "none"}},
                         mtrain, mtest.X, true);
}

TEST(HistGradientBoosting, MissingValuesLearnADirection) {
  // y depends on whether x0 is missing: only the learned default direction can separate it.
  const int64_t n = 1000;
  std::vector<float> x(static_cast<size_t>(n * 2)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[2 * i] = (i % 3 == 0) ? NAN : static_cast<float>(i % 17);
    x[2 * i + 1] = static_cast<float>(i % 5);
    y[i] = (i % 3 == 0) ? 10.0f : 0.0f;
  }
  Tensor X = Tensor::from_vector(x, {n, 2}), Y = Tensor::from_vector(y, {n});
  auto est = make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "30"}, {"learning_rate", "0.3"}});
  est->fit(X, Y);
  EXPECT_GT(est->score(X, Y), 0.99);
}

TEST(HistGradientBoosting, GrowthLimits) {
  Dataset train = make_data(3000, 4, 0, 121);
  auto lg = make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "3"}, {"max_leaf_nodes", "7"}});
  lg->fit(train.X, train.y);
  nlohmann::json j = nlohmann::json::parse(lg->to_json_text());
  for (const auto& t : j["state"]["trees"]) EXPECT_LE(t["feature"].size(), 13u);  // 7 leaves
  auto dw = make_estimator("hist_gradient_boosting_regressor",
                           {{"max_iter", "3"}, {"grow_policy", "depthwise"}, {"max_depth", "2"},
                            {"max_leaf_nodes", "none"}, {"min_samples_leaf", "1"}});
  dw->fit(train.X, train.y);
  j = nlohmann::json::parse(dw->to_json_text());
  for (const auto& t : j["state"]["trees"]) EXPECT_EQ(t["feature"].size(), 7u);  // full depth 2
}

TEST(HistGradientBoosting, BadInput) {
  Dataset train = make_data(100, 3, 2, 131);
  std::vector<float> y(100, 2.0f);
  auto est = make_estimator("hist_gradient_boosting_classifier");
  EXPECT_THROW(est->fit(train.X, Tensor::from_vector(y, {100})), Error);
  y[0] = NAN;
  EXPECT_THROW(est->fit(train.X, Tensor::from_vector(y, {100})), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"max_bins", "300"}}), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"grow_policy", "leafwise"}}), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"subsample", "0"}}), Error);
}

}  // namespace
}  // namespace bl::ml::testing
