// Ensembles: bagging, isolation forest, voting, stacking, AdaBoost, DART and symmetric trees.
// Identity across thread counts (model-file SHA-256, prediction and probability bytes), save/load,
// accuracy parity with scikit-learn / XGBoost (golden numbers from scripts/golden/ml_ensembles.py
// in tests/data/ml/ensembles/parity.json), deterministic folds, bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/ml/ensemble.h"
#include "core/error.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

const std::string kParity = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/ml/ensembles/parity.json";

Tensor hex_tensor(const nlohmann::json& j, const char* key, std::vector<int64_t> shape) {
  return Tensor::from_vector(f32_from_hex(j[key].get<std::string>(), key), shape);
}

// ---- identity: threads 1/2/3 give the same model file and prediction bytes ----

struct IdentityCase {
  const char* name;
  Params params;
  int classes;  // 0: regression
};

void PrintTo(const IdentityCase& c, std::ostream* os) { *os << c.name; }

class EnsembleIdentity : public ::testing::TestWithParam<IdentityCase> {};

TEST_P(EnsembleIdentity, SameBitsAtThreads123AndRoundTrip) {
  const IdentityCase& c = GetParam();
  Dataset train = make_data(600, 5, c.classes, 201, 0), test = make_data(200, 5, c.classes, 202, 0);
  const bool proba = c.classes > 0 && std::string(c.name).find("voting") == std::string::npos;
  const std::string sha = expect_thread_identity(c.name, c.params, train, test.X, proba);
  EXPECT_EQ(sha.size(), 64u);
  auto est = make_estimator(c.name, c.params);
  est->fit(train.X, train.y);
  expect_round_trip(*est, test.X);
  // A sanity floor only (small synthetic data); accuracy parity is EnsembleParity's job.
  EXPECT_GT(est->score(test.X, test.y), c.classes > 0 ? 0.6 : 0.4) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Ensembles, EnsembleIdentity,
    ::testing::Values(
        IdentityCase{"bagging_classifier", {{"n_estimators", "6"}, {"max_features", "0.8"}}, 3},
        IdentityCase{"bagging_regressor", {{"n_estimators", "6"}, {"bootstrap_features", "true"}}, 0},
        IdentityCase{"voting_classifier",
                     {{"estimators", "logistic_regression;random_forest_classifier(n_estimators=5)"}}, 3},
        IdentityCase{"voting_regressor",
                     {{"estimators", "ridge;extra_trees_regressor(n_estimators=5)"}, {"weights", "1,2"}}, 0},
        IdentityCase{"stacking_classifier",
                     {{"estimators", "logistic_regression;decision_tree_classifier(max_depth=4)"}, {"cv", "3"}}, 3},
        IdentityCase{"stacking_regressor",
                     {{"estimators", "ridge;decision_tree_regressor(max_depth=4)"}, {"passthrough", "true"}}, 0},
        IdentityCase{"adaboost_classifier", {{"n_estimators", "15"}}, 2},
        IdentityCase{"adaboost_regressor", {{"n_estimators", "8"}, {"loss", "square"}}, 0},
        IdentityCase{"hist_gradient_boosting_classifier",
                     {{"max_iter", "12"}, {"booster", "dart"}, {"rate_drop", "0.3"}, {"one_drop", "true"}}, 3},
        IdentityCase{"hist_gradient_boosting_regressor",
                     {{"max_iter", "12"}, {"booster", "dart"}, {"normalize_type", "forest"}, {"skip_drop", "0.2"}}, 0},
        IdentityCase{"hist_gradient_boosting_classifier",
                     {{"max_iter", "10"}, {"grow_policy", "symmetric"}, {"max_depth", "4"}}, 2},
        IdentityCase{"hist_gradient_boosting_regressor",
                     {{"max_iter", "10"}, {"grow_policy", "symmetric"}, {"l2_regularization", "3"}}, 0}),
    [](const ::testing::TestParamInfo<IdentityCase>& info) {
      return std::to_string(info.index) + "_" + info.param.name;
    });

TEST(IsolationForest, IdentityScoresAndContamination) {
  Dataset train = make_data(700, 4, 0, 211, 0);
  std::string first;
  const int before = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto est = make_estimator("isolation_forest", {{"n_estimators", "40"}, {"contamination", "0.1"}});
    est->fit(train.X);
    const std::string text = est->to_json_text();
    const std::string all = sha256_hex(text.data(), text.size()) + tensor_sha(est->predict(train.X)) +
                            tensor_sha(score_samples(*est, train.X)) + tensor_sha(decision_function(*est, train.X));
    if (threads == 1) first = all;
    else EXPECT_EQ(all, first) << "threads " << threads;
  }
  set_num_threads(before);
  auto est = make_estimator("isolation_forest", {{"n_estimators", "40"}, {"contamination", "0.1"}});
  est->fit(train.X);
  expect_round_trip(*est, train.X);
  std::vector<float> label = est->predict(train.X).to_vector<float>();
  int64_t outliers = 0;
  for (float v : label) outliers += v < 0.0f;
  EXPECT_NEAR(static_cast<double>(outliers) / 700.0, 0.1, 0.01);
  // contamination=auto: offset -0.5, decision_function = score_samples + 0.5.
  auto a = make_estimator("isolation_forest", {{"n_estimators", "10"}});
  a->fit(train.X);
  std::vector<float> s = score_samples(*a, train.X).to_vector<float>();
  std::vector<float> dfn = decision_function(*a, train.X).to_vector<float>();
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_EQ(dfn[i], s[i] + 0.5f);
    ASSERT_TRUE(s[i] < 0.0f && s[i] > -1.0f);
  }
}

// ---- accuracy parity with scikit-learn / XGBoost (golden numbers) ----

TEST(EnsembleParity, ScoresMatchPeers) {
  const nlohmann::json g = nlohmann::json::parse(read_file_text(kParity));
  for (const auto& c : g["cases"]) {
    const auto& set = g["sets"][c["set"].get<std::string>()];
    const int64_t ntr = set["n_train"], nte = set["n_test"], d = set["d"];
    Tensor Xtr = hex_tensor(set, "X_train", {ntr, d}), ytr = hex_tensor(set, "y_train", {ntr});
    Tensor Xte = hex_tensor(set, "X_test", {nte, d}), yte = hex_tensor(set, "y_test", {nte});
    Params params;
    for (auto it = c["params"].begin(); it != c["params"].end(); ++it) params[it.key()] = it.value().get<std::string>();
    auto est = make_estimator(c["estimator"].get<std::string>(), params);
    est->fit(Xtr, ytr);
    const double ours = est->score(Xte, yte), peer = c["peer_score"].get<double>();
    std::printf("[parity] %-34s ours %.4f  %-52s %.4f  diff %+.4f\n", c["estimator"].get<std::string>().c_str(),
                ours, c["peer"].get<std::string>().c_str(), peer, ours - peer);
    if (c["one_sided"].get<bool>()) EXPECT_GE(ours, peer - c["tolerance"].get<double>()) << c.dump();
    else EXPECT_NEAR(ours, peer, c["tolerance"].get<double>()) << c.dump();
  }
}

TEST(EnsembleParity, IsolationForestAgreesWithScikitLearn) {
  const nlohmann::json g = nlohmann::json::parse(read_file_text(kParity))["isolation_forest"];
  const int64_t n = g["n"], d = g["d"];
  Tensor X = hex_tensor(g, "X", {n, d});
  std::vector<float> peer = f32_from_hex(g["sklearn_predict"].get<std::string>(), "p");
  std::vector<float> peer_s = f32_from_hex(g["sklearn_score_samples"].get<std::string>(), "s");
  auto est = make_estimator("isolation_forest", {{"contamination", g["contamination"].get<std::string>()}});
  est->fit(X);
  std::vector<float> ours = est->predict(X).to_vector<float>();
  std::vector<float> ours_s = score_samples(*est, X).to_vector<float>();
  int64_t agree = 0, planted = 0;
  double abs_diff = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    agree += ours[i] == peer[i];
    if (i >= 500) planted += ours[i] < 0.0f;  // rows 500.. are the uniform outliers
    abs_diff += std::abs(static_cast<double>(ours_s[i]) - peer_s[i]);
  }
  std::printf("[parity] isolation_forest: label agreement %.4f, planted outliers found %lld/25, mean |score "
              "difference| %.4f\n", static_cast<double>(agree) / n, static_cast<long long>(planted), abs_diff / n);
  EXPECT_GE(static_cast<double>(agree) / n, 0.97);
  EXPECT_GE(planted, 22);
  EXPECT_LT(abs_diff / n, 0.02);
}

// ---- deterministic pieces ----

TEST(Stacking, FoldsMatchScikitLearn) {
  // StratifiedKFold(4) and KFold(3) on these labels, as scikit-learn 1.9 assigns them.
  std::vector<int32_t> y = {2, 0, 0, 1, 2, 2, 0, 1, 1, 2, 2, 0, 2, 1, 0, 2, 2};
  std::vector<int64_t> want = {0, 0, 0, 0, 0, 1, 1, 1, 2, 1, 2, 2, 2, 3, 3, 3, 3};
  EXPECT_EQ(stratified_folds(y, 3, 4), want);
  std::vector<int64_t> want_k = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2};
  EXPECT_EQ(kfold_folds(11, 3), want_k);
}

TEST(Dart, NoDropIsPlainBoosting) {
  Dataset train = make_data(800, 5, 2, 221, 0);
  auto plain = make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "10"}});
  auto dart = make_estimator("hist_gradient_boosting_classifier",
                             {{"max_iter", "10"}, {"booster", "dart"}, {"rate_drop", "0"}});
  plain->fit(train.X, train.y);
  dart->fit(train.X, train.y);
  EXPECT_EQ(tensor_sha(plain->predict_proba(train.X)), tensor_sha(dart->predict_proba(train.X)));
  auto dropping = make_estimator("hist_gradient_boosting_classifier",
                                 {{"max_iter", "10"}, {"booster", "dart"}, {"rate_drop", "0.5"}});
  dropping->fit(train.X, train.y);
  EXPECT_NE(tensor_sha(plain->predict_proba(train.X)), tensor_sha(dropping->predict_proba(train.X)));
}

TEST(SymmetricTrees, OneSplitPerLevel) {
  Dataset train = make_data(1500, 6, 0, 231, 50);  // with NaN
  auto est = make_estimator("hist_gradient_boosting_regressor",
                            {{"max_iter", "5"}, {"grow_policy", "symmetric"}, {"max_depth", "3"}});
  est->fit(train.X, train.y);
  const nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  for (const auto& t : j["state"]["trees"]) {
    const auto& feature = t["feature"];
    const auto& left = t["left"];
    const auto& right = t["right"];
    const std::vector<float> thr = f32_from_hex(t["threshold"].get<std::string>(), "threshold");
    std::vector<int> depth(feature.size(), 0);
    std::vector<int> level_feature(8, -2);
    std::vector<float> level_threshold(8, 0.0f);
    for (size_t i = 0; i < feature.size(); ++i) {
      if (feature[i].get<int>() < 0) continue;
      depth[left[i].get<int>()] = depth[right[i].get<int>()] = depth[i] + 1;
      ASSERT_LT(depth[i], 3);
      if (level_feature[depth[i]] == -2) {
        level_feature[depth[i]] = feature[i].get<int>();
        level_threshold[depth[i]] = thr[i];
      }
      EXPECT_EQ(feature[i].get<int>(), level_feature[depth[i]]) << "level " << depth[i];
      EXPECT_EQ(thr[i], level_threshold[depth[i]]) << "level " << depth[i];
    }
  }
  EXPECT_GT(est->score(train.X, train.y), 0.3);
}

// ---- bad input ----

TEST(EnsembleBadInput, ClearErrors) {
  Dataset train = make_data(200, 4, 2, 241, 0);
  EXPECT_THROW(make_estimator("voting_classifier", {{"estimators", "no_such_model"}}), Error);
  EXPECT_THROW(make_estimator("voting_classifier", {{"estimators", "ridge(alpha=1"}}), Error);
  EXPECT_THROW(make_estimator("voting_classifier", {{"estimators", "ridge(bogus=1)"}}), Error);
  EXPECT_THROW(make_estimator("voting_classifier", {{"estimators", ""}}), Error);
  EXPECT_THROW(make_estimator("voting_classifier", {{"voting", "maybe"}}), Error);
  EXPECT_THROW(make_estimator("bagging_classifier", {{"max_samples", "1.5"}}), Error);
  EXPECT_THROW(make_estimator("bagging_classifier", {{"n_estimators", "0"}}), Error);
  EXPECT_THROW(make_estimator("stacking_regressor", {{"cv", "1"}}), Error);
  EXPECT_THROW(make_estimator("adaboost_classifier", {{"estimator", "logistic_regression"}}), Error);
  EXPECT_THROW(make_estimator("adaboost_regressor", {{"loss", "cubic"}}), Error);
  EXPECT_THROW(make_estimator("isolation_forest", {{"contamination", "0.7"}}), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"booster", "gblinear"}}), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"rate_drop", "2"}}), Error);
  EXPECT_THROW(make_estimator("hist_gradient_boosting_regressor", {{"grow_policy", "oblivious"}}), Error);
  // Missing estimators list, weights of the wrong length, predict before fit, wrong width.
  EXPECT_THROW(make_estimator("voting_classifier")->fit(train.X, train.y), Error);
  EXPECT_THROW(make_estimator("voting_classifier", {{"estimators", "logistic_regression"}, {"weights", "1,2"}})
                   ->fit(train.X, train.y),
               Error);
  EXPECT_THROW(make_estimator("bagging_classifier")->predict(train.X), Error);
  EXPECT_THROW(make_estimator("isolation_forest")->predict(train.X), Error);
  auto bag = make_estimator("bagging_regressor", {{"n_estimators", "2"}});
  bag->fit(train.X, train.y);
  EXPECT_THROW(bag->predict(Tensor::zeros({3, 5})), Error);
  EXPECT_THROW(score_samples(*bag, train.X), Error);
  // NaN labels, a single class, and a voting=hard predict_proba.
  std::vector<float> y(200, 1.0f);
  EXPECT_THROW(make_estimator("adaboost_classifier")->fit(train.X, Tensor::from_vector(y, {200})), Error);
  y[3] = NAN;
  EXPECT_THROW(make_estimator("bagging_regressor")->fit(train.X, Tensor::from_vector(y, {200})), Error);
  auto vote = make_estimator("voting_classifier", {{"estimators", "logistic_regression"}});
  vote->fit(train.X, train.y);
  EXPECT_THROW(vote->predict_proba(train.X), Error);
  // A model file whose nested state is corrupt names the field.
  nlohmann::json j = nlohmann::json::parse(bag->to_json_text());
  j["state"]["estimators"][1]["features"] = {0, 9};
  try {
    estimator_from_json_text(j.dump(), "bad.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("state.estimators[1].features"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bl::ml::testing
