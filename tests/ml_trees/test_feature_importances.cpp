// test_feature_importances.cpp: bl::ml::tree_feature_importances: an exact hand-checked case (one
// split on a two-class problem), sums to 1, the same bits at threads 1/2/3 for a bootstrapped forest,
// a feature that never splits gets 0, and estimators that are not CART trees are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bitlearn/ml/tree.h"
#include "core/thread_pool.h"
#include "ml_linear/ml_test_util.h"

namespace bl {
namespace {

TEST(FeatureImportances, OneSplitGivesItsFeatureEverything) {
  // Feature 1 separates the classes; feature 0 is constant: a depth-1 tree splits on feature 1.
  std::vector<float> x = {5, 0, 5, 1, 5, 2, 5, 10, 5, 11, 5, 12};
  Tensor X = Tensor::from_vector(x, {6, 2}), y = Tensor::from_vector(std::vector<float>{0, 0, 0, 1, 1, 1}, {6});
  auto est = ml::make_estimator("decision_tree_classifier", {{"max_depth", "1"}});
  est->fit(X, y);
  std::vector<double> imp = ml::tree_feature_importances(*est, X, y);
  ASSERT_EQ(imp.size(), 2u);
  EXPECT_EQ(imp[0], 0.0);
  EXPECT_EQ(imp[1], 1.0);
}

TEST(FeatureImportances, ForestSameBitsAtThreads123AndSumToOne) {
  Tensor X = ml_test::normal_data(600, 6, 5);
  std::vector<float> xv = X.to_vector<float>(), yv(600);
  for (int64_t i = 0; i < 600; ++i) yv[i] = xv[i * 6] + 0.3f * xv[i * 6 + 2] > 0.0f ? 1.0f : 0.0f;
  Tensor y = Tensor::from_vector(yv, {600});
  auto est = ml::make_estimator("random_forest_classifier", {{"n_estimators", "12"}, {"max_depth", "4"}});
  est->fit(X, y);
  const int saved = num_threads();
  std::vector<double> first;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    std::vector<double> imp = ml::tree_feature_importances(*est, X, y);
    if (t == 1) first = imp;
    else EXPECT_EQ(std::memcmp(imp.data(), first.data(), imp.size() * sizeof(double)), 0) << t << " threads";
  }
  set_num_threads(saved);
  double sum = 0.0;
  for (double v : first) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_GT(first[0], first[1]);  // feature 0 decides the label
  auto ridge = ml::make_estimator("ridge");
  ridge->fit(X, y);
  EXPECT_THROW(ml::tree_feature_importances(*ridge, X, y), Error);
}

}  // namespace
}  // namespace bl
