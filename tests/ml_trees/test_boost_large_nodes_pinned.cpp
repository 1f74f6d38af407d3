// Histogram boosting large nodes pinned: fits on 40000 rows, large enough that the root and the
// first levels take the blocked (parallel) row partition and the level-batched depth-wise growth,
// must give the model and prediction SHA-256 recorded with the serial, node-by-node growth before
// the two-thread speed work (the model digest without the trees' training cover, recorded in model
// files since: model_sha_without_cover). Each fit also runs at 1, 2 and 3 threads (expect_thread_identity).
#include <gtest/gtest.h>

#include <string>

#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

struct PinnedLargeFit {
  const char* name;
  const char* estimator;
  int classes;  // 0: regression
  int64_t nan_every;
  Params params;
  const char* model_sha;
  const char* pred_sha;
};

const PinnedLargeFit kPinnedLarge[] = {
    {"binary_depthwise", "hist_gradient_boosting_classifier", 2, 0,
     {{"max_iter", "4"}, {"grow_policy", "depthwise"}, {"max_depth", "6"}, {"max_leaf_nodes", "none"},
      {"min_samples_leaf", "1"}, {"min_child_weight", "1"}, {"l2_regularization", "1"}},
     "9dc9a27d49bd9a02add8755d1d6c2ffd6db6518170c4bb5c675a086f5a61000d",
     "569a12a17654755ef6ef8ab0146e3b6cf3ec9e3ba07e36876fc23d8e55c0f037"},
    {"regression_depthwise_nan", "hist_gradient_boosting_regressor", 0, 13,
     {{"max_iter", "3"}, {"grow_policy", "depthwise"}, {"max_depth", "5"}, {"max_leaf_nodes", "none"},
      {"min_samples_leaf", "1"}, {"min_child_weight", "1"}, {"l2_regularization", "1"}},
     "b2cf73f0b7720da50d60fad5474483484a0db63bad8ddf45f80933c639a1c7aa",
     "130b5dc4dffb44aa5c9b6beabea4b2dd5c06784cc6cacdb59e89523d78232fcf"},
    {"binary_depthwise_leaf_cap_sampled", "hist_gradient_boosting_classifier", 2, 0,
     {{"max_iter", "3"}, {"grow_policy", "depthwise"}, {"max_depth", "8"}, {"max_leaf_nodes", "11"},
      {"subsample", "0.8"}, {"random_state", "5"}},
     "ce82582bacbbe293ba4637ab81f5f6d9507ebd03e07888a46c7e413bd15c4bc0",
     "dd14472da186887dbf3de02b1c0aaf944bd8b4b23299bfab908943c95c95f5bd"},
    {"binary_lossguide_nan", "hist_gradient_boosting_classifier", 2, 11, {{"max_iter", "3"}},
     "9e3c24e09013cd1d2eec08259227c29a514c3fb6012c6d54522523f7431801a9",
     "4fdd9f91d877a6cf65032124edc2997cd0a248f926295eadf3e2fc5e87df1383"},
    {"three_class_depthwise", "hist_gradient_boosting_classifier", 3, 0,
     {{"max_iter", "2"}, {"grow_policy", "depthwise"}, {"max_depth", "4"}, {"max_leaf_nodes", "none"}},
     "f5a95c70f91bd137746bf7701fea3e17549161d2236c71fb7a097cc13d059851",
     "a99a87972b80244cf47e93f9bacdcd03c8edc2da60a88515b968e043b4321f67"},
    {"binary_symmetric", "hist_gradient_boosting_classifier", 2, 0,
     {{"max_iter", "2"}, {"grow_policy", "symmetric"}, {"max_depth", "4"}},
     "c0a03fa215c6b73b29e3ae05eeba3f47a5f707c0f944e77ca7c2609375e92085",
     "91b06a635e13df74dd2c0640d6aa457418150b608d1984863af815e372e43cce"},
    {"regression_dart", "hist_gradient_boosting_regressor", 0, 0,
     {{"max_iter", "3"}, {"booster", "dart"}, {"rate_drop", "0.5"}},
     "25fd2d016a69bc3777e6423627b6d4e959810b4cbe15bf9bd97781a17c2a568d",
     "f4ee4421268c196d80b3d0eef5cd39b4916fceaf1f88135c118f19419edfab4b"},
};

TEST(HistBoostingLargeNodesPinned, ModelAndPredictionDigests) {
  for (const PinnedLargeFit& fit : kPinnedLarge) {
    Dataset train = make_data(40000, 6, fit.classes, 307, fit.nan_every);
    expect_thread_identity(fit.estimator, fit.params, train, train.X, false);  // 1, 2, 3 threads
    auto est = make_estimator(fit.estimator, fit.params);
    est->fit(train.X, train.y);
    EXPECT_EQ(model_sha_without_cover(*est), fit.model_sha) << fit.name << ": model file digest moved";
    EXPECT_EQ(tensor_sha(est->predict(train.X)), fit.pred_sha) << fit.name << ": prediction digest moved";
  }
}

}  // namespace
}  // namespace bl::ml::testing
