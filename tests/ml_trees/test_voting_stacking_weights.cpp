// test_voting_stacking_weights.cpp: sample weights of voting_classifier / voting_regressor (every
// member's fit takes them) and stacking_classifier / stacking_regressor (each fold's base fit takes
// its training rows' weights, the full base fits and the final estimator every weight), as
// scikit-learn's ensembles pass sample_weight on. All-ones weights give the unweighted bits; threads
// 1, 2, 3 give the same bytes and a changed weight moves the model; rows of weight 0 change nothing
// where every member promises it; a member that takes no weights is refused by name; a voting
// ensemble's members are exactly the members fitted alone with the same weights.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "ml_common/weight_checks.h"

namespace bl {
namespace {

using ml_common::HostData;
using ml_common::WeightedHostData;
using Case = ml_common::WeightCase;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"voting_classifier",
       {{"estimators", "logistic_regression;decision_tree_classifier(max_depth=3)"}, {"voting", "soft"}}, true},
      {"voting_regressor", {{"estimators", "ridge(alpha=0.5);decision_tree_regressor(max_depth=3)"}}, false},
      {"stacking_classifier",
       {{"estimators", "logistic_regression;decision_tree_classifier(max_depth=3)"}, {"cv", "3"}}, true},
      {"stacking_regressor",
       {{"estimators", "ridge(alpha=0.5);decision_tree_regressor(max_depth=3)"}, {"cv", "3"}}, false},
  };
  return c;
}

HostData data_for(const Case& c, int64_t n) {
  return c.classes ? ml_common::uniform_blobs(n, 4, 3, 0.8f, 41) : ml_common::smooth_regression(n, 4, 42, 2.0);
}

TEST(VotingStackingWeights, AllOnesGiveTheUnweightedBits) {
  for (const Case& c : cases()) ml_common::expect_all_ones_give_the_unweighted_bits(c.name, c.params, data_for(c, 150));
}

TEST(VotingStackingWeights, SameBytesAtThreads123AndAWeightMovesTheModel) {
  for (const Case& c : cases()) {
    WeightedHostData s = ml_common::with_weights(data_for(c, 160), [](int64_t i) { return 0.25 + (i * 7 % 5) * 0.5; });
    ml_common::expect_weighted_bytes_at_threads_123_and_moved(c.name, c.params, s, 17);
  }
}

// With members that promise it (ridge; a tree's thresholds and logistic regression's scaling see
// every row's value, and so do stacking's folds).
TEST(VotingStackingWeights, VotingRowsOfWeightZeroChangeNothing) {
  const std::vector<Case> linear = {{"voting_regressor", {{"estimators", "ridge(alpha=0.5);ridge(alpha=4)"}}, false}};
  for (const Case& c : linear)
    ml_common::expect_zero_weight_rows_change_nothing(
        c.name, c.params, ml_common::with_weights(data_for(c, 200), [](int64_t i) { return i % 4 == 1 ? 0 : 1 + i % 3; }));
}

TEST(VotingStackingWeights, VotingMembersAreTheMembersFittedAloneWithTheWeights) {
  WeightedHostData s = ml_common::with_weights(data_for(cases()[1], 120), [](int64_t i) { return 1 + i % 3; });
  auto vote = ml::make_estimator("voting_regressor", {{"estimators", "ridge(alpha=0.5);ridge(alpha=2)"}});
  vote->fit_weighted(s.X(), s.Y(), s.W());
  auto a = ml::make_estimator("ridge", {{"alpha", "0.5"}}), b = ml::make_estimator("ridge", {{"alpha", "2"}});
  a->fit_weighted(s.X(), s.Y(), s.W());
  b->fit_weighted(s.X(), s.Y(), s.W());
  const std::vector<float> pa = a->predict(s.X()).to_vector<float>(), pb = b->predict(s.X()).to_vector<float>();
  const std::vector<float> pv = vote->predict(s.X()).to_vector<float>();
  for (int64_t i = 0; i < s.n; ++i) {
    // The vote is (1 * pa + 1 * pb) / 2 in the contract's float32 steps.
    const float want = (pa[i] + pb[i]) / 2.0f;
    ASSERT_EQ(pv[i], want) << "row " << i;
  }
}

TEST(VotingStackingWeights, AMemberWithoutWeightsIsRefusedByName) {
  const HostData d = ml_common::uniform_blobs(90, 3, 3, 0.8f, 43);
  const Tensor w = Tensor::from_vector(std::vector<float>(90, 2.0f), {90});
  for (const char* name : {"voting_classifier", "stacking_classifier"}) {
    auto est = ml::make_estimator(name, {{"estimators", "logistic_regression;kneighbors_classifier"}});
    try {
      est->fit_weighted(d.X(), d.Y(), w);
      ADD_FAILURE() << name << ": a member without weights was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("kneighbors_classifier does not take sample weights"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace bl
