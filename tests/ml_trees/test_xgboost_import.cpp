// Import of XGBoost JSON models: our margins and predictions against XGBoost's own, stored by
// scripts/golden/xgboost_models.py in tests/data/ml/xgboost/.
//
// Tolerance: XGBoost adds the base margin and the leaf values in float32 in tree order, as we do,
// so margins are expected to agree to the bit; the check allows 4 ulp of the largest |margin| of a
// case (base-margin logit/log computed with a different libm is the one place where they may
// differ by an ulp). Transformed predictions (sigmoid, exp, softmax) differ from XGBoost's libm
// results by a few ulp: the check allows 1e-6 absolute + 1e-6 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "core/error.h"
#include "ml_trees/lightgbm_xgboost_golden.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

const std::string kDir = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/ml/xgboost/";

struct Case : GoldenCase {
  std::vector<float> margin, pred;  // XGBoost's margins and predictions
};

Case load_case(const std::string& name) {
  Case c;
  const nlohmann::json j = read_golden_case(kDir, name, &c);
  c.margin = f32_from_hex(j["margin"].get<std::string>(), "margin");
  c.pred = f32_from_hex(j["pred"].get<std::string>(), "pred");
  return c;
}

class XgboostImport : public ::testing::TestWithParam<const char*> {};

TEST_P(XgboostImport, MatchesXgboostPredictions) {
  Case c = load_case(GetParam());
  auto est = make_estimator("xgboost_model", {{"model_file", c.model}});
  Tensor X = Tensor::from_vector(c.X, {c.n, c.d});
  est->fit(X);
  std::vector<float> margin = est->transform(X).to_vector<float>();
  ASSERT_EQ(margin.size(), c.margin.size());
  float scale = 0.0f;
  for (float m : c.margin) scale = std::max(scale, std::fabs(m));
  const float margin_tol = 4.0f * (std::nextafter(scale, INFINITY) - scale);
  int64_t exact = 0;
  for (size_t i = 0; i < margin.size(); ++i) {
    EXPECT_NEAR(margin[i], c.margin[i], margin_tol) << GetParam() << " margin " << i;
    exact += margin[i] == c.margin[i];
  }
  std::cout << "  " << GetParam() << ": " << exact << " / " << margin.size() << " margins bit-equal to XGBoost\n";
  std::vector<float> pred;
  if (c.objective == "multi:softprob" || c.objective == "binary:logistic") {
    Tensor p = est->predict_proba(X);
    std::vector<float> all = p.to_vector<float>();
    if (c.objective == "binary:logistic") {
      for (int64_t i = 0; i < c.n; ++i) pred.push_back(all[2 * i + 1]);
    } else {
      pred = all;
    }
  } else {
    pred = est->predict(X).to_vector<float>();
  }
  ASSERT_EQ(pred.size(), c.pred.size());
  for (size_t i = 0; i < pred.size(); ++i) {
    EXPECT_NEAR(pred[i], c.pred[i], 1e-6 + 1e-6 * std::fabs(c.pred[i])) << GetParam() << " prediction " << i;
  }
  expect_round_trip(*est, X);
  expect_weighted_score(*est, X, c.objective == "multi:softprob" || c.objective == "binary:logistic");
}

INSTANTIATE_TEST_SUITE_P(Models, XgboostImport,
                         ::testing::Values("reg_squarederror", "reg_lossguide", "binary_logistic",
                                           "multi_softprob", "count_poisson"));

TEST(XgboostImportErrors, NameTheField) {
  std::string text = read_file_text(kDir + "binary_logistic.json");
  nlohmann::json j = nlohmann::json::parse(text);
  auto run = [&](nlohmann::json m, const std::string& needle) {
    std::string path = ::testing::TempDir() + "/bad_xgb.json";
    write_file_atomic(path, m.dump());
    auto est = make_estimator("xgboost_model", {{"model_file", path}});
    try {
      est->fit(Tensor());
      FAIL() << "accepted a model that should fail with " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  nlohmann::json m = j;
  m["learner"]["objective"]["name"] = "rank:pairwise";
  run(m, "learner.objective.name");
  m = j;
  m["learner"]["gradient_booster"]["name"] = "gblinear";
  run(m, "learner.gradient_booster.name");
  m = j;
  m["version"] = {0, 90, 0};
  run(m, "version");
  m = j;
  m["learner"]["gradient_booster"]["model"]["trees"][0]["split_indices"][0] = 99;
  run(m, "split_indices");
  run(nlohmann::json::object({{"a", 1}}), "learner");
  EXPECT_THROW(make_estimator("xgboost_model")->fit(Tensor()), Error);  // no model_file
}

}  // namespace
}  // namespace bl::ml::testing
