// Decision trees, random forests and extra trees: accuracy on synthetic data, identity across
// thread counts (model-file SHA-256, prediction bytes), save/load, limits and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

TEST(DecisionTree, ClassifierLearnsAndIsThreadIdentical) {
  Dataset train = make_data(600, 5, 3, 11), test = make_data(300, 5, 3, 12);
  auto est = make_estimator("decision_tree_classifier", {{"max_depth", "6"}});
  est->fit(train.X, train.y);
  EXPECT_GT(est->score(train.X, train.y), 0.85);
  EXPECT_GT(est->score(test.X, test.y), 0.7);
  Tensor p = est->predict_proba(test.X);
  EXPECT_EQ(p.dim(1), 3);
  expect_round_trip(*est, test.X);
  for (const char* crit : {"gini", "entropy"}) {
    expect_thread_identity("decision_tree_classifier", {{"criterion", crit}, {"max_features", "2"}}, train,
                           test.X, true);
  }
}

TEST(DecisionTree, UnlimitedTreeFitsTrainingDataExactly) {
  Dataset train = make_data(400, 4, 2, 21);
  auto est = make_estimator("decision_tree_classifier");
  est->fit(train.X, train.y);
  EXPECT_EQ(est->score(train.X, train.y), 1.0);
  auto reg = make_estimator("decision_tree_regressor");
  reg->fit(train.X, train.X.slice(1, 0, 1).contiguous().reshape({400}));
  EXPECT_EQ(reg->score(train.X, train.X.slice(1, 0, 1).contiguous().reshape({400})), 1.0);
}

TEST(DecisionTree, RegressorAndLimits) {
  Dataset train = make_data(800, 4, 0, 31), test = make_data(300, 4, 0, 32);
  auto est = make_estimator("decision_tree_regressor", {{"max_depth", "3"}, {"min_samples_leaf", "30"}});
  est->fit(train.X, train.y);
  nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  const auto& tree = j["state"]["trees"][0];
  EXPECT_LE(tree["feature"].size(), 15u);  // depth 3: at most 15 nodes
  EXPECT_GT(est->score(test.X, test.y), 0.5);
  expect_round_trip(*est, test.X);
  expect_thread_identity("decision_tree_regressor", {{"max_depth", "8"}}, train, test.X, false);
}

TEST(DecisionTree, LabelsKeepTheirValues) {
  std::vector<float> x = {0, 1, 2, 3, 4, 5};
  std::vector<int64_t> y = {-7, -7, -7, 40, 40, 40};
  auto est = make_estimator("decision_tree_classifier");
  est->fit(Tensor::from_vector(x, {6, 1}), Tensor::from_vector(y, {6}));
  std::vector<float> p = est->predict(Tensor::from_vector(std::vector<float>{0.5f, 4.5f}, {2, 1})).to_vector<float>();
  EXPECT_EQ(p[0], -7.0f);
  EXPECT_EQ(p[1], 40.0f);
}

TEST(Forest, RandomForestAndExtraTrees) {
  Dataset train = make_data(1000, 6, 2, 41), test = make_data(400, 6, 2, 42);
  for (const char* name : {"random_forest_classifier", "extra_trees_classifier"}) {
    auto est = make_estimator(name, {{"n_estimators", "30"}, {"random_state", "3"}});
    est->fit(train.X, train.y);
    EXPECT_GT(est->score(test.X, test.y), 0.8) << name;
    expect_round_trip(*est, test.X);
    expect_thread_identity(name, {{"n_estimators", "10"}}, train, test.X, true);
  }
  Dataset rtrain = make_data(1000, 6, 0, 43), rtest = make_data(400, 6, 0, 44);
  for (const char* name : {"random_forest_regressor", "extra_trees_regressor"}) {
    auto est = make_estimator(name, {{"n_estimators", "30"}});
    est->fit(rtrain.X, rtrain.y);
    EXPECT_GT(est->score(rtest.X, rtest.y), 0.6) << name;
    expect_thread_identity(name, {{"n_estimators", "8"}, {"max_depth", "6"}}, rtrain, rtest.X, false);
  }
}

TEST(Forest, SeedChangesTheModel) {
  Dataset train = make_data(300, 5, 2, 51);
  auto a = make_estimator("random_forest_classifier", {{"n_estimators", "5"}, {"random_state", "1"}});
  auto b = make_estimator("random_forest_classifier", {{"n_estimators", "5"}, {"random_state", "2"}});
  a->fit(train.X, train.y);
  b->fit(train.X, train.y);
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

TEST(TreeBadInput, ClearErrors) {
  Dataset train = make_data(50, 3, 2, 61);
  auto est = make_estimator("decision_tree_classifier");
  std::vector<float> y(50, 1.0f);
  try {
    est->fit(train.X, Tensor::from_vector(y, {50}));
    FAIL() << "single class accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("single class"), std::string::npos) << e.what();
  }
  y[3] = NAN;
  EXPECT_THROW(est->fit(train.X, Tensor::from_vector(y, {50})), Error);
  y[3] = 0.5f;
  EXPECT_THROW(est->fit(train.X, Tensor::from_vector(y, {50})), Error);  // not an integer label
  EXPECT_THROW(make_estimator("decision_tree_classifier", {{"criterion", "squared_error"}}), Error);
  EXPECT_THROW(make_estimator("random_forest_regressor", {{"n_estimators", "0"}}), Error);
  EXPECT_THROW(make_estimator("decision_tree_regressor", {{"no_such", "1"}}), Error);
  EXPECT_THROW(est->predict(train.X), Error);  // not fitted
  est->fit(train.X, train.y);
  EXPECT_THROW(est->predict(Tensor::zeros({4, 2})), Error);  // wrong feature count
  // A model file of another estimator under this name: the state does not validate.
  auto reg = make_estimator("decision_tree_regressor");
  reg->fit(train.X, train.y);
  std::string text = reg->to_json_text();
  text.replace(text.find("decision_tree_regressor"), 23, "decision_tree_classifier");
  EXPECT_THROW(estimator_from_json_text(text, "swapped"), Error);
}

}  // namespace
}  // namespace bl::ml::testing
