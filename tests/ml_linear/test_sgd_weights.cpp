// test_sgd_weights.cpp: sample weights of sgd_classifier and sgd_regressor (each row's update times
// its weight). With tol < 0 a row of weight 0 changes nothing whatever its values (its update is 0;
// the decay and the schedule do not read the row); a weight of 0 on scrambled rows recovers the clean
// accuracy the unweighted fit loses; all-ones weights give the unweighted bits; threads 1, 2, 3 give
// the same bytes and a changed weight moves the model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml_common/weight_checks.h"

namespace bl {
namespace {

using ml_common::HostData;
using ml_common::WeightedHostData;

// Classes 0..2 in blobs, or (regression) y = sum_j (j + 1) x_j.
HostData data_for(bool classes, int64_t n, uint64_t seed) {
  HostData d = ml_common::uniform_blobs(n, 4, 3, 1.5f, seed);
  if (!classes) {
    d.c = 0;
    for (int64_t i = 0; i < n; ++i) {
      double t = 0.5;
      for (int64_t j = 0; j < 4; ++j) t += static_cast<double>(j + 1) * d.x[i * 4 + j];
      d.y[i] = static_cast<float>(t);
    }
  }
  return d;
}

using Case = ml_common::WeightCase;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"sgd_classifier", {{"max_iter", "20"}}, true},
      {"sgd_classifier", {{"loss", "log_loss"}, {"penalty", "elasticnet"}, {"max_iter", "20"}}, true},
      {"sgd_regressor", {{"max_iter", "100"}}, false},
      {"sgd_regressor", {{"loss", "huber"}, {"penalty", "l1"}, {"learning_rate", "constant"}, {"max_iter", "100"}}, false},
  };
  return c;
}

TEST(SgdWeights, RowsOfWeightZeroChangeNothingWithoutTheStoppingRule) {
  for (const Case& c : cases()) {
    ml::Params p = c.params;
    p["tol"] = "-1";
    p["max_iter"] = "5";
    ml_common::expect_zero_weight_rows_change_nothing(
        c.name, p, ml_common::with_weights(data_for(c.classes, 300, 51), [](int64_t i) { return i % 4 == 2 ? 0 : 0.5 + i % 3; }));
  }
}

TEST(SgdWeights, ZeroWeightOnMislabeledRowsRecoversTheCleanFit) {
  ml_common::expect_zero_weight_on_mislabeled_rows_recovers("sgd_classifier", {}, data_for(true, 1500, 52), 0.05);
}

TEST(SgdWeights, AllOnesThreadsAndAChangedWeight) {
  for (const Case& c : cases()) {
    ml_common::expect_all_ones_give_the_unweighted_bits(c.name, c.params, data_for(c.classes, 150, 53));
    WeightedHostData s = ml_common::with_weights(data_for(c.classes, 150, 54),
                                                 [](int64_t i) { return 0.3 + 0.45 * static_cast<double>(i % 6); });
    ml_common::expect_weighted_bytes_at_threads_123_and_moved(c.name, c.params, s, 7);
  }
}

}  // namespace
}  // namespace bl
