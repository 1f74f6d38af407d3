// checks_ml_trees.cpp: fit + predict workloads of the tree and boosting estimators.
//
//   ml.random_forest  random_forest_classifier (Philox bootstrap and feature draws) on a 3-class
//                     problem: class probabilities of held-out rows + the model file's SHA-256
//   ml.hist_boosting  hist_gradient_boosting_classifier (softmax, subsampling, NaN inputs): the
//                     probabilities + the model file's SHA-256; on CUDA the histograms run on the GPU
// Inputs come from the verify seed; labels are a fixed function of the inputs, so the negative
// control (a flipped input bit) moves both the trees and the outputs.
#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "core/digest.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

namespace {

struct TreeData {
  Tensor X_train, y_train, X_test;
};

TreeData tree_data(CheckContext& ctx, uint64_t stream, int64_t n, int64_t d, bool with_nan) {
  std::vector<float> x = uniform_floats(ctx, stream, (n + n / 4) * d, -2.0f, 2.0f);
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* r = &x[i * d];
    float s = r[0] + r[1] * r[2] - 0.5f * r[3 % d];
    y[i] = s < -0.5f ? 0.0f : (s < 0.7f ? 1.0f : 2.0f);
  }
  if (with_nan) {
    for (size_t i = 5; i < x.size(); i += 23) x[i] = NAN;
  }
  std::vector<float> xtr(x.begin(), x.begin() + n * d), xte(x.begin() + n * d, x.end());
  return {Tensor::from_vector(xtr, {n, d}), Tensor::from_vector(y, {n}),
          Tensor::from_vector(xte, {n / 4, d})};
}

void add_model(OutputWriter& out, const ml::Estimator& est) {
  const std::string text = est.to_json_text();
  const std::string hex = sha256_hex(text.data(), text.size());
  std::vector<uint32_t> words(8);
  for (int w = 0; w < 8; ++w) words[w] = static_cast<uint32_t>(std::stoul(hex.substr(w * 8, 8), nullptr, 16));
  out.add_u32("model_file_sha256", words);
}

void check_random_forest(CheckContext& ctx, OutputWriter& out) {
  require_cpu(ctx, "ml.random_forest");
  const int64_t n = ctx.size(300, 2000), d = 6;
  TreeData data = tree_data(ctx, 9101, n, d, false);
  auto est = ml::make_estimator("random_forest_classifier",
                                {{"n_estimators", ctx.size(4, 16) == 4 ? "4" : "16"}, {"max_depth", "10"}});
  est->fit(data.X_train, data.y_train);
  out.add_f32("proba", est->predict_proba(data.X_test).to_vector<float>());
  add_model(out, *est);
}

void check_hist_boosting(CheckContext& ctx, OutputWriter& out) {
#if !defined(BITLEARN_HAS_CUDA)
  if (ctx.on_cuda()) throw SkipCheck{"this build has no CUDA"};
#endif
  if (ctx.on_cuda()) select_device(ctx);
  const int64_t n = ctx.size(400, 4000), d = 7;
  TreeData data = tree_data(ctx, 9201, n, d, true);
  auto est = ml::make_estimator("hist_gradient_boosting_classifier",
                                {{"max_iter", ctx.size(5, 20) == 5 ? "5" : "20"}, {"subsample", "0.8"},
                                 {"colsample_bytree", "0.9"}, {"min_samples_leaf", "5"}});
  est->fit(data.X_train.to(core_device(ctx)), data.y_train);
  out.add_f32("proba", est->predict_proba(data.X_test).to_vector<float>());
  add_model(out, *est);
}

}  // namespace

void add_ml_trees_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"ml.random_forest", true, check_random_forest});
  checks.push_back({"ml.hist_boosting", true, check_hist_boosting});
}

}  // namespace bl::verify
