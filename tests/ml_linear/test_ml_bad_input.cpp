// test_ml_bad_input.cpp: clear errors for NaN labels, a single class, more clusters than rows,
// unknown parameters, a model file from another estimator or version, and the wrong feature count.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "ml_test_util.h"

namespace bl {
namespace {

TEST(MlBadInput, ClearErrors) {
  Tensor X = ml_test::normal_data(20, 3, 1);
  std::vector<float> yv(20, 1.0f);
  Tensor y_one = Tensor::from_vector(yv, {20});
  yv[3] = std::nanf("");
  Tensor y_nan = Tensor::from_vector(yv, {20});
  EXPECT_ERROR_HAS(ml::make_estimator("ridge")->fit(X, y_nan), "NaN");
  EXPECT_ERROR_HAS(ml::make_estimator("logistic_regression")->fit(X, y_nan), "NaN");
  EXPECT_ERROR_HAS(ml::make_estimator("logistic_regression")->fit(X, y_one), "single class");
  EXPECT_ERROR_HAS(ml::make_estimator("kmeans", {{"n_clusters", "21"}})->fit(X), "more clusters than rows");
  EXPECT_ERROR_HAS(ml::make_estimator("minibatch_kmeans", {{"n_clusters", "25"}})->fit(X),
                   "more clusters than rows");
  EXPECT_ERROR_HAS(ml::make_estimator("kneighbors_regressor", {{"n_neighbors", "30"}})->fit(X, y_one),
                   "n_neighbors=30");
  EXPECT_ERROR_HAS(ml::make_estimator("ridge", {{"alpah", "1"}}), "unknown parameter 'alpah'");
  EXPECT_ERROR_HAS(ml::make_estimator("ridge", {{"alpha", "-1"}}), "alpha=-1");
  EXPECT_ERROR_HAS(ml::make_estimator("logistic_regression", {{"penalty", "l3"}}), "expected one of");
  EXPECT_ERROR_HAS(ml::make_estimator("pca", {{"n_components", "4"}})->fit(X), "n_components=4");
  EXPECT_ERROR_HAS(ml::make_estimator("isotonic_regression")->fit(X, y_one), "exactly one feature");
  std::vector<float> yl(20);
  for (int i = 0; i < 20; ++i) yl[i] = static_cast<float>(i % 2) + 0.5f;
  EXPECT_ERROR_HAS(ml::make_estimator("logistic_regression")->fit(X, Tensor::from_vector(yl, {20})),
                   "not an integer");

  auto ridge = ml::make_estimator("ridge");
  ridge->fit(X, Tensor::from_vector(std::vector<float>(20, 2.0f), {20}));
  EXPECT_ERROR_HAS(ridge->predict(ml_test::normal_data(4, 5, 2)), "X has 5 features but the model was fit with 3");
  EXPECT_ERROR_HAS(ml::make_estimator("lasso")->predict(X), "before fit");

  // Model files: another estimator's state, another version, corrupt state.
  nlohmann::json j = nlohmann::json::parse(ridge->to_json_text());
  nlohmann::json other = j;
  other["estimator"] = "kmeans";
  EXPECT_ERROR_HAS(ml::estimator_from_json_text(other.dump(), "m.json"), "kmeans");
  other["estimator"] = "pca";
  EXPECT_ERROR_HAS(ml::estimator_from_json_text(other.dump(), "m.json"), "pca");
  nlohmann::json ver = j;
  ver["version"] = 2;
  EXPECT_ERROR_HAS(ml::estimator_from_json_text(ver.dump(), "m.json"), "version 2");
  nlohmann::json bad = j;
  bad["state"]["coef"] = "00ff";
  EXPECT_ERROR_HAS(ml::estimator_from_json_text(bad.dump(), "m.json"), "coef");
}

}  // namespace
}  // namespace bl
