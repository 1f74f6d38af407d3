// test_linear_models_bad_input.cpp: clear errors from the second-wave linear estimators for NaN
// labels, wrong shapes, a single class (sgd_classifier), targets outside a distribution's support,
// bad hyper-parameters, and a model file written by another estimator.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "ml_test_util.h"

namespace bl {
namespace {

const char* kRegressors[] = {"sgd_regressor", "huber_regressor", "quantile_regressor", "poisson_regressor",
                             "gamma_regressor", "tweedie_regressor", "ard_regression", "lars", "lasso_lars"};

TEST(LinearModelsBadInput, NanLabelsAndWrongShapes) {
  Tensor X = ml_test::normal_data(20, 3, 1);
  std::vector<float> yv(20, 1.0f);
  yv[3] = std::nanf("");
  Tensor y_nan = Tensor::from_vector(yv, {20});
  Tensor y_short = Tensor::from_vector(std::vector<float>(19, 1.0f), {19});
  Tensor y_2d = Tensor::from_vector(std::vector<float>(20, 1.0f), {20, 1});
  Tensor X_1d = Tensor::from_vector(std::vector<float>(20, 1.0f), {20});
  std::vector<std::string> names(std::begin(kRegressors), std::end(kRegressors));
  names.push_back("sgd_classifier");
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    EXPECT_ERROR_HAS(ml::make_estimator(name)->fit(X, y_nan), "NaN");
    EXPECT_ERROR_HAS(ml::make_estimator(name)->fit(X, y_short), "y has 19 entries but X has 20 rows");
    EXPECT_ERROR_HAS(ml::make_estimator(name)->fit(X, y_2d), "y must be 1-d");
    EXPECT_ERROR_HAS(ml::make_estimator(name)->fit(X_1d, y_short), name);
    EXPECT_ERROR_HAS(ml::make_estimator(name)->predict(X), "before fit");
    auto est = ml::make_estimator(name);
    std::vector<float> y(20);
    for (int i = 0; i < 20; ++i) y[i] = static_cast<float>(i % 2 + 1);
    est->fit(X, Tensor::from_vector(y, {20}));
    EXPECT_ERROR_HAS(est->predict(ml_test::normal_data(4, 5, 2)), "X has 5 features but the model was fit with 3");
    EXPECT_ERROR_HAS(ml::make_estimator(name, {{"alpah", "1"}}), "unknown parameter 'alpah'");
  }
}

TEST(LinearModelsBadInput, ClassifierAndDistributionChecks) {
  Tensor X = ml_test::normal_data(20, 3, 1);
  Tensor y_one = Tensor::from_vector(std::vector<float>(20, 4.0f), {20});
  EXPECT_ERROR_HAS(ml::make_estimator("sgd_classifier")->fit(X, y_one), "single class");
  std::vector<float> half(20);
  for (int i = 0; i < 20; ++i) half[i] = static_cast<float>(i % 2) + 0.5f;
  EXPECT_ERROR_HAS(ml::make_estimator("sgd_classifier")->fit(X, Tensor::from_vector(half, {20})), "not an integer");
  std::vector<float> lab(20);
  for (int i = 0; i < 20; ++i) lab[i] = static_cast<float>(i % 2);
  auto hinge = ml::make_estimator("sgd_classifier");
  hinge->fit(X, Tensor::from_vector(lab, {20}));
  EXPECT_ERROR_HAS(hinge->predict_proba(X), "predict_proba needs loss=log_loss");
  EXPECT_ERROR_HAS(ml::make_estimator("sgd_classifier", {{"loss", "squared_hinge"}}), "expected one of");
  EXPECT_ERROR_HAS(ml::make_estimator("sgd_classifier", {{"learning_rate", "constant"}, {"eta0", "0"}})
                       ->fit(X, Tensor::from_vector(lab, {20})),
                   "needs eta0 > 0");
  EXPECT_ERROR_HAS(ml::make_estimator("sgd_regressor", {{"learning_rate", "optimal"}, {"alpha", "0"}})
                       ->fit(X, Tensor::from_vector(lab, {20})),
                   "needs alpha > 0");
  std::vector<float> neg(20, 1.0f);
  neg[5] = -1.0f;
  Tensor y_neg = Tensor::from_vector(neg, {20});
  EXPECT_ERROR_HAS(ml::make_estimator("poisson_regressor")->fit(X, y_neg), "y must be >= 0");
  EXPECT_ERROR_HAS(ml::make_estimator("gamma_regressor")->fit(X, Tensor::from_vector(lab, {20})), "y must be > 0");
  EXPECT_ERROR_HAS(ml::make_estimator("tweedie_regressor", {{"power", "0.5"}})->fit(X, y_neg), "power=0.5");
  EXPECT_ERROR_HAS(ml::make_estimator("tweedie_regressor", {{"power", "1.5"}, {"link", "identity"}})->fit(X, y_neg),
                   "link=identity needs power=0");
  EXPECT_ERROR_HAS(ml::make_estimator("poisson_regressor")->fit(X, Tensor::zeros({20})), "mean of y must be > 0");
  EXPECT_ERROR_HAS(ml::make_estimator("quantile_regressor", {{"quantile", "1"}})->fit(X, y_neg), "quantile=1");
  EXPECT_ERROR_HAS(ml::make_estimator("huber_regressor", {{"epsilon", "0.5"}}), "epsilon=0.5");
}

TEST(LinearModelsBadInput, ModelFileFromAnotherEstimator) {
  Tensor X = ml_test::normal_data(30, 3, 1);
  std::vector<float> y(30);
  for (int i = 0; i < 30; ++i) y[i] = static_cast<float>(i % 3 + 1);
  std::vector<std::string> names(std::begin(kRegressors), std::end(kRegressors));
  names.push_back("sgd_classifier");
  for (const std::string& writer : names) {
    auto est = ml::make_estimator(writer);
    est->fit(X, Tensor::from_vector(y, {30}));
    nlohmann::json j = nlohmann::json::parse(est->to_json_text());
    for (const std::string& reader : names) {
      if (reader == writer) continue;
      SCOPED_TRACE(writer + " read as " + reader);
      nlohmann::json other = j;
      other["estimator"] = reader;
      other["params"] = nlohmann::json::object();  // the reader's defaults: only the state is foreign
      EXPECT_ERROR_HAS(ml::estimator_from_json_text(other.dump(), "m.json"), "written by " + writer);
    }
    nlohmann::json bad = j;
    bad["state"]["coef"] = "00ff";
    EXPECT_ERROR_HAS(ml::estimator_from_json_text(bad.dump(), "m.json"), "coef");
  }
}

}  // namespace
}  // namespace bl
