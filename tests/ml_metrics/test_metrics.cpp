// test_metrics.cpp: the evaluation metrics on small cases worked by hand (scikit-learn's values),
// their edge cases, and clear errors. The comparison with scikit-learn on real predictions is
// python/tests/test_evaluate_cli.py.
#include <gtest/gtest.h>

#include <cmath>

#include "bitlearn/ml/metrics.h"
#include "core/error.h"

namespace bl::ml {
namespace {

TEST(Metrics, ClassificationByHand) {
  // true 0 0 1 1 2, predicted 0 1 1 1 0: confusion [[1,1,0],[0,2,0],[1,0,0]].
  ClassificationMetrics m = classification_metrics({0, 0, 1, 1, 2}, {0, 1, 1, 1, 0});
  EXPECT_EQ(m.labels, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(m.confusion, (std::vector<int64_t>{1, 1, 0, 0, 2, 0, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(m.accuracy, 0.6);
  EXPECT_DOUBLE_EQ(m.per_class[0].precision, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[1].precision, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.per_class[2].precision, 0.0);  // never predicted: zero_division=0
  EXPECT_DOUBLE_EQ(m.per_class[1].recall, 1.0);
  EXPECT_DOUBLE_EQ(m.macro_recall, (0.5 + 1.0 + 0.0) / 3);
  EXPECT_DOUBLE_EQ(m.weighted_recall, 0.6);  // equals the accuracy
  EXPECT_FALSE(m.log_loss.has_value());
}

TEST(Metrics, ProbabilitiesGiveLogLossAndAuc) {
  // Binary: scores 0.1 0.4 0.35 0.8 for labels 0 0 1 1: AUC 0.75 (scikit-learn's doc example).
  std::vector<double> p1 = {0.1, 0.4, 0.35, 0.8}, proba;
  for (double p : p1) {
    proba.push_back(1 - p);
    proba.push_back(p);
  }
  ClassificationMetrics m = classification_metrics({0, 0, 1, 1}, {0, 1, 0, 1}, {0, 1}, proba);
  ASSERT_TRUE(m.roc_auc.has_value());
  EXPECT_DOUBLE_EQ(*m.roc_auc, 0.75);
  const double ll = -(std::log(0.9) + std::log(0.6) + std::log(0.35) + std::log(0.8)) / 4;
  EXPECT_NEAR(*m.log_loss, ll, 1e-12);
  // Ties count half.
  EXPECT_DOUBLE_EQ(roc_auc_binary({false, true}, {0.5, 0.5}), 0.5);
  EXPECT_THROW(roc_auc_binary({true, true}, {0.1, 0.2}), Error);
  EXPECT_THROW(classification_metrics({0, 5}, {0, 1}, {0, 1}, proba), Error);  // 5 is not a class
}

TEST(Metrics, RegressionByHand) {
  RegressionMetrics m = regression_metrics({3, -0.5, 2, 7}, {2.5, 0.0, 2, 8});
  EXPECT_NEAR(m.r2, 0.9486081370449679, 1e-15);  // scikit-learn's r2_score doc example
  EXPECT_DOUBLE_EQ(m.mae, 0.5);
  EXPECT_DOUBLE_EQ(m.mse, 0.375);
  EXPECT_DOUBLE_EQ(m.max_error, 1.0);
  EXPECT_DOUBLE_EQ(regression_metrics({1, 1}, {1, 1}).r2, 1.0);  // constant and exact
  EXPECT_DOUBLE_EQ(regression_metrics({1, 1}, {1, 2}).r2, 0.0);  // constant, not exact
}

TEST(Metrics, BadInputIsAClearError) {
  EXPECT_THROW(regression_metrics({}, {}), Error);
  EXPECT_THROW(regression_metrics({1, 2}, {1}), Error);
  EXPECT_THROW(regression_metrics({1, NAN}, {1, 2}), Error);
  EXPECT_THROW(classification_metrics({0, 1}, {0, 1}, {0, 1}, {0.5, 0.5}), Error);  // proba of one row
}

}  // namespace
}  // namespace bl::ml
