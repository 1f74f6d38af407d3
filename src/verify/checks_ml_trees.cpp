// checks_ml_trees.cpp: fit + predict workloads of the tree and boosting estimators.
//
//   ml.random_forest  random_forest_classifier (Philox bootstrap and feature draws) on a 3-class
//                     problem: class probabilities of held-out rows + the model file's SHA-256
//   ml.hist_boosting  hist_gradient_boosting_classifier (softmax, subsampling, NaN inputs): the
//                     probabilities + the model file's SHA-256; on CUDA the histograms run on the GPU
//   ml.ensembles      the ensembles on one 3-class problem: bagging_classifier and adaboost_classifier
//                     probabilities, isolation_forest score_samples (training rows), stacking_regressor
//                     predictions, hist boosting with booster=dart and with grow_policy=symmetric
//                     probabilities, and the SHA-256 of each model file
// Inputs come from the verify seed; labels are a fixed function of the inputs, so the negative
// control (a flipped input bit) moves both the trees and the outputs.
#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/ensemble.h"
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
  select_device(ctx);
  const int64_t n = ctx.size(400, 4000), d = 7;
  TreeData data = tree_data(ctx, 9201, n, d, true);
  auto est = ml::make_estimator("hist_gradient_boosting_classifier",
                                {{"max_iter", ctx.size(5, 20) == 5 ? "5" : "20"}, {"subsample", "0.8"},
                                 {"colsample_bytree", "0.9"}, {"min_samples_leaf", "5"}});
  est->fit(data.X_train.to(core_device(ctx)), data.y_train);
  out.add_f32("proba", est->predict_proba(data.X_test).to_vector<float>());
  add_model(out, *est);
}

void check_ensembles(CheckContext& ctx, OutputWriter& out) {
  require_cpu(ctx, "ml.ensembles");
  const int64_t n = ctx.size(240, 1200), d = 5;
  const bool quick = n == 240;
  TreeData data = tree_data(ctx, 9301, n, d, false);
  auto fit_add = [&](const char* name, const ml::Params& params, bool proba) {
    auto est = ml::make_estimator(name, params);
    est->fit(data.X_train, data.y_train);
    out.add_f32(std::string(name) + (proba ? ".proba" : ".predict"),
                (proba ? est->predict_proba(data.X_test) : est->predict(data.X_test)).to_vector<float>());
    add_model(out, *est);
  };
  fit_add("bagging_classifier", {{"n_estimators", quick ? "3" : "8"}, {"max_features", "0.8"}}, true);
  fit_add("adaboost_classifier", {{"n_estimators", quick ? "5" : "20"}}, true);
  fit_add("stacking_regressor", {{"estimators", "ridge;decision_tree_regressor(max_depth=4)"}, {"cv", "3"}}, false);
  fit_add("hist_gradient_boosting_classifier",
          {{"max_iter", quick ? "4" : "12"}, {"booster", "dart"}, {"rate_drop", "0.3"}, {"min_samples_leaf", "5"}}, true);
  fit_add("hist_gradient_boosting_classifier",
          {{"max_iter", quick ? "4" : "12"}, {"grow_policy", "symmetric"}, {"max_depth", "4"}}, true);
  auto iso = ml::make_estimator("isolation_forest", {{"n_estimators", quick ? "10" : "40"}, {"contamination", "0.1"}});
  iso->fit(data.X_train);
  out.add_f32("isolation_forest.score_samples", ml::score_samples(*iso, data.X_train).to_vector<float>());
  out.add_f32("isolation_forest.predict", iso->predict(data.X_test).to_vector<float>());
  add_model(out, *iso);
}

}  // namespace

void add_ml_trees_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"ml.random_forest", true, check_random_forest});
  checks.push_back({"ml.hist_boosting", true, check_hist_boosting});
  checks.push_back({"ml.ensembles", true, check_ensembles});
}

}  // namespace bl::verify
