// test_ensemble_weights.cpp: sample weights of adaboost_classifier / adaboost_regressor (the
// boosting starts from the normalized weights) and bagging_classifier / bagging_regressor (rows drawn
// in proportion to the weights). The weighted draws' frequencies follow the weights and never pick a
// row of weight 0; rows of weight 0 change nothing whatever their values (AdaBoost.R2, bagging);
// SAMME with integer weights predicts as the repeated rows; a weight of 0 on scrambled rows recovers
// the clean accuracy the unweighted fit loses; all-ones weights give the unweighted bits; threads
// 1, 2, 3 give the same bytes and a changed weight moves the model.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml_common/weight_checks.h"

namespace bl {
namespace {

using ml_common::HostData;
using ml_common::WeightedHostData;

using Case = ml_common::WeightCase;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"adaboost_classifier", {{"n_estimators", "15"}}, true},
      {"adaboost_regressor", {{"n_estimators", "8"}, {"random_state", "3"}}, false},
      {"bagging_classifier", {{"n_estimators", "6"}, {"random_state", "4"}}, true},
      {"bagging_regressor", {{"n_estimators", "6"}, {"random_state", "5"}, {"bootstrap", "false"},
                             {"max_samples", "0.5"}}, false},
  };
  return c;
}

HostData data_for(const Case& c, int64_t n) {
  return c.classes ? ml_common::uniform_blobs(n, 4, 3, 0.7f, 31) : ml_common::smooth_regression(n, 4, 32, 2.0);
}

TEST(EnsembleWeights, WeightedDrawsFollowTheWeights) {
  const std::vector<double> w = {0.0, 1.0, 2.0, 0.0, 3.0, 0.5, 1.5};
  const int64_t m = 280000;
  std::vector<int64_t> rows = ml::draw_weighted_rows(9, 17, w, m, true);
  std::vector<double> count(w.size(), 0.0);
  for (int64_t r : rows) count[static_cast<size_t>(r)] += 1.0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double p = w[i] / 8.0, sd = std::sqrt(m * p * (1 - p));
    EXPECT_NEAR(count[i], m * p, 5 * sd + 0.5) << "row " << i;  // weight 0: exactly 0
  }
  // Without replacement: distinct rows of positive weight; heavier rows come first more often.
  std::vector<double> first(w.size(), 0.0);
  for (uint64_t s = 0; s < 4000; ++s) {
    std::vector<int64_t> two = ml::draw_weighted_rows(s, 18, w, 2, false);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_LT(two[0], two[1]);
    for (int64_t r : two) {
      EXPECT_GT(w[static_cast<size_t>(r)], 0.0);
      first[static_cast<size_t>(r)] += 1.0;
    }
  }
  EXPECT_GT(first[4], first[2]);
  EXPECT_GT(first[2], first[1]);
  EXPECT_GT(first[1], first[5]);
  EXPECT_THROW(ml::draw_weighted_rows(1, 1, w, 6, false), Error);  // only 5 rows weigh > 0
}

TEST(EnsembleWeights, RowsOfWeightZeroChangeNothing) {
  for (const Case& c : cases()) {
    if (std::string(c.name) == "adaboost_classifier") continue;  // its trees see every row's value
    ml_common::expect_zero_weight_rows_change_nothing(
        c.name, c.params, ml_common::with_weights(data_for(c, 300), [](int64_t i) { return i % 4 == 1 ? 0 : 1 + i % 3; }));
  }
}

TEST(EnsembleWeights, SammeWithIntegerWeightsPredictsAsTheRepeatedRows) {
  WeightedHostData s =
      ml_common::with_weights(ml_common::uniform_blobs(240, 4, 3, 0.7f, 33), [](int64_t i) { return (i * 5 + 2) % 4; });
  const HostData rep = s.repeated();
  const ml::Params p = {{"n_estimators", "12"}, {"estimator", "decision_tree_classifier(max_depth=2)"}};
  auto weighted = ml::make_estimator("adaboost_classifier", p), repeated = ml::make_estimator("adaboost_classifier", p);
  weighted->fit_weighted(s.X(), s.Y(), s.W());
  repeated->fit(rep.X(), rep.Y());
  const Tensor q = ml_common::uniform_blobs(400, 4, 3, 0.7f, 34).X();
  std::vector<float> a = weighted->predict_proba(q).to_vector<float>(), b = repeated->predict_proba(q).to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-5) << k;
}

TEST(EnsembleWeights, ZeroWeightOnMislabeledRowsRecoversTheCleanFit) {
  const HostData clean = ml_common::uniform_blobs(900, 4, 3, 2.0f, 35);
  ml_common::expect_zero_weight_on_mislabeled_rows_recovers(
      "adaboost_classifier", {{"n_estimators", "30"}, {"estimator", "decision_tree_classifier(max_depth=2)"}}, clean, 0.05);
  ml_common::expect_zero_weight_on_mislabeled_rows_recovers(
      "bagging_classifier", {{"n_estimators", "10"}, {"estimator", "decision_tree_classifier(max_depth=4)"}}, clean, 0.05);
}

TEST(EnsembleWeights, AllOnesThreadsAndAChangedWeight) {
  for (const Case& c : cases()) {
    ml_common::expect_all_ones_give_the_unweighted_bits(c.name, c.params, data_for(c, 150));
    WeightedHostData s =
        ml_common::with_weights(data_for(c, 150), [](int64_t i) { return 0.3 + 0.45 * static_cast<double>(i % 6); });
    ml_common::expect_weighted_bytes_at_threads_123_and_moved(c.name, c.params, s, 7);
  }
}

}  // namespace
}  // namespace bl
