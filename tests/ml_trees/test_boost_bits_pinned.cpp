// Histogram boosting bits pinned: the SHA-256 of the model file and of the predictions of nine
// fits (every loss, growth policy and sampling option, NaN in X) must equal the digests recorded
// before the fit-speed work (gathered gradient pairs, constant-hessian histograms, branch-free
// partitions, radix-sorted binning, parallel split search). Speed changes must do the same
// arithmetic faster: if one of these digests moves, the change altered the model, not its speed.
// Every fit also runs at 1, 2 and 3 threads (expect_thread_identity). The model digest leaves out the
// trees' training cover (model_sha_without_cover), recorded in model files after these digests.
#include <gtest/gtest.h>

#include <string>

#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

struct PinnedFit {
  const char* name;
  const char* estimator;
  int classes;  // 0: regression
  Params params;
  const char* model_sha;
  const char* pred_sha;
};

const PinnedFit kPinned[] = {
    {"regression_lossguide", "hist_gradient_boosting_regressor", 0, {{"max_iter", "20"}},
     "b1660d1c4aaebcc09a965be6eb3319a49c4deca12368cd6e9902ba429fe84ec8",
     "fad46871737d5ce5e5ce4da3a1847459fa799e11c016898feebed1ace2184ebc"},
    {"regression_depthwise", "hist_gradient_boosting_regressor", 0,
     {{"max_iter", "15"}, {"grow_policy", "depthwise"}, {"max_depth", "6"}, {"max_leaf_nodes", "none"},
      {"min_samples_leaf", "1"}, {"min_child_weight", "1"}, {"l2_regularization", "1"}},
     "51b7c97851c98e9f33b2381d2bc8a07173e595754f7717c4dd465a681edb5aa9",
     "4edf85b9cbb6db49fade90d293c3848a91635905b3404d107c2c2dcb6a20568e"},
    {"binary_lossguide", "hist_gradient_boosting_classifier", 2, {{"max_iter", "20"}},
     "0db97f8b67ad71d10d997e9eca2d6aee138fe8d8bee36019301df0ba6271fde5",
     "e1b0f4aafa9c7df3aa914bea91dc2e3aada63ba911370dd51a155b58908e7135"},
    {"three_class_depthwise", "hist_gradient_boosting_classifier", 3,
     {{"max_iter", "8"}, {"grow_policy", "depthwise"}, {"max_depth", "4"}, {"max_leaf_nodes", "none"}},
     "be833b15bdad9539c0df7e1b9ba530f5588592fc01ad01f97be08c1120745e0f",
     "8fd83b7d5964885a2572799e67b99f55aca6c4e2618b78f103cc2d0d8a03af3c"},
    {"regression_symmetric", "hist_gradient_boosting_regressor", 0,
     {{"max_iter", "10"}, {"grow_policy", "symmetric"}},
     "12443aee18e83aaf0e39696cd35b2054c0c03ba965a96f791d204187c709d1f8",
     "a0b245492ef5a3de398b7bebc749e9bfa545c8f6ba4ececdebd3e78990fb5154"},
    {"binary_symmetric", "hist_gradient_boosting_classifier", 2,
     {{"max_iter", "6"}, {"grow_policy", "symmetric"}, {"max_depth", "4"}},
     "8e00cb524221000a9d30db0fb27e804b0c2ac3d6d411d1ad3b2238a1d2fe84eb",
     "1266bfb0258e76e9117d6215d9a957b4bc8b42adc02376a1c7be7510e4b2ec0e"},
    {"regression_dart", "hist_gradient_boosting_regressor", 0,
     {{"max_iter", "8"}, {"booster", "dart"}, {"rate_drop", "0.3"}},
     "046ae51391add50645bee96ca4b351ffc563cabe79536e8c64f5180d19f93bf6",
     "671e33f39e1f55053b2743c3a414440eb421d4e36f548322d53fff74618f2e77"},
    {"binary_sampled_regularized", "hist_gradient_boosting_classifier", 2,
     {{"max_iter", "15"}, {"subsample", "0.6"}, {"colsample_bytree", "0.5"}, {"random_state", "3"},
      {"l1_regularization", "0.5"}, {"l2_regularization", "2"}, {"min_child_weight", "2"}, {"max_bins", "17"}},
     "60a6814c197455981228e301718c1cbf90237d444f5054cd0a1a09ced1311181",
     "358b72d7c928ab9e0e78459fa828e093a90f236934abda294b9c01346b53b81c"},
    {"regression_three_bins", "hist_gradient_boosting_regressor", 0,
     {{"max_iter", "10"}, {"max_bins", "3"}, {"min_samples_leaf", "5"}},
     "26e11844d36f36b2357462cc95189c92bb47e4076113a3098734388a9c6bdc35",
     "344b6fdb99cf6bbaf635cef7d78a2ae37afd7b6e5299c2f20af7e2f09e2799d4"},
};

TEST(HistBoostingBitsPinned, ModelAndPredictionDigests) {
  for (const PinnedFit& fit : kPinned) {
    Dataset train = make_data(1500, 6, fit.classes, 211, 7);
    expect_thread_identity(fit.estimator, fit.params, train, train.X, false);  // 1, 2, 3 threads
    auto est = make_estimator(fit.estimator, fit.params);
    est->fit(train.X, train.y);
    EXPECT_EQ(model_sha_without_cover(*est), fit.model_sha) << fit.name << ": model file digest moved";
    EXPECT_EQ(tensor_sha(est->predict(train.X)), fit.pred_sha) << fit.name << ": prediction digest moved";
  }
}

}  // namespace
}  // namespace bl::ml::testing
