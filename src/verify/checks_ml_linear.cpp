// checks_ml_linear.cpp: fit + predict workloads of the linear, cluster, neighbors and decomposition
// estimators (ml.linear, ml.kmeans, ml.kneighbors, ml.pca). Each generates Philox data on the
// context's device, fits through bl::ml::make_estimator (the estimators run on that device) and
// writes the fitted state and the predictions. Sizes: quick n = 600, full n = 4000 rows.
#include "bitlearn/ml/decomposition.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/linear.h"
#include "bitlearn/ops.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"
#include "verify/tensor_io.h"

namespace bl::verify {

namespace {

// X [n, d] (carries the negative control) and targets built from it: regression values, binary and
// 3-class labels, all on the context's device.
struct MlData {
  Tensor X, y_reg, y_bin, y_multi;
};

MlData make_data(CheckContext& ctx, int64_t n, int64_t d) {
  MlData m;
  m.X = make_tensor(ctx, normal_floats(ctx, 8101, n * d, 1.0f), {n, d});
  Tensor W = make_tensor(ctx, normal_floats(ctx, 8102, d * 3, 1.0f), {d, 3});
  Tensor S = matmul(m.X, W).to(Device::cpu());
  std::vector<float> noise = normal_floats(ctx, 8103, n, 0.5f);
  std::vector<float> s = S.to_vector<float>(), r(n), b(n), c(n);
  for (int64_t i = 0; i < n; ++i) {
    r[i] = s[i * 3] + noise[i];
    b[i] = s[i * 3 + 1] + noise[i] > 0.0f ? 1.0f : 0.0f;
    int64_t best = 0;
    for (int64_t k = 1; k < 3; ++k)
      if (s[i * 3 + k] > s[i * 3 + best]) best = k;
    c[i] = static_cast<float>(best);
  }
  m.y_reg = make_tensor(ctx, r, {n});
  m.y_bin = make_tensor(ctx, b, {n});
  m.y_multi = make_tensor(ctx, c, {n});
  return m;
}

void add_linear(OutputWriter& out, const std::string& label, const ml::Estimator& est) {
  ml::LinearView v = ml::linear_view(est);
  out.add_f32(label + ".coef", v.coef);
  out.add_f32(label + ".intercept", v.intercept);
}

void check_ml_linear(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  MlData m = make_data(ctx, ctx.size(600, 4000), 11);
  auto ridge = ml::make_estimator("ridge", {{"alpha", "2"}});
  ridge->fit(m.X, m.y_reg);
  add_linear(out, "ridge", *ridge);
  add_tensor(out, "ridge.predict", ridge->predict(m.X));
  auto ols = ml::make_estimator("linear_regression");
  ols->fit(m.X, m.y_reg);
  add_linear(out, "ols", *ols);
  auto enet = ml::make_estimator("elastic_net", {{"alpha", "0.05"}, {"l1_ratio", "0.7"}});
  enet->fit(m.X, m.y_reg);
  add_linear(out, "elastic_net", *enet);
  auto logit = ml::make_estimator("logistic_regression", {{"max_iter", "30"}});
  logit->fit(m.X, m.y_bin);
  add_linear(out, "logistic", *logit);
  add_tensor(out, "logistic.proba", logit->predict_proba(m.X));
  auto multi = ml::make_estimator("logistic_regression", {{"max_iter", "20"}, {"penalty", "l1"}});
  multi->fit(m.X, m.y_multi);
  add_linear(out, "logistic_l1_multi", *multi);
  add_tensor(out, "logistic_l1_multi.predict", multi->predict(m.X));
}

// The second-wave linear estimators, a few iterations each (the solvers' arithmetic, not convergence).
void check_ml_linear_models(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  MlData m = make_data(ctx, ctx.size(400, 2000), 8);
  Tensor y_pos = bl::add(m.y_bin, Tensor::scalar(1.0, DType::f32, m.X.device()));
  struct Fit {
    const char* label;
    const char* name;
    ml::Params params;
    const Tensor* y;
  };
  const std::vector<Fit> fits = {
      {"sgd_classifier", "sgd_classifier", {{"loss", "log_loss"}, {"max_iter", "3"}, {"tol", "-1"}}, &m.y_multi},
      {"sgd_regressor", "sgd_regressor", {{"penalty", "elasticnet"}, {"max_iter", "3"}, {"tol", "-1"}}, &m.y_reg},
      {"huber", "huber_regressor", {{"max_iter", "15"}}, &m.y_reg},
      {"quantile", "quantile_regressor", {{"quantile", "0.3"}, {"alpha", "0.01"}, {"max_iter", "60"}}, &m.y_reg},
      {"poisson", "poisson_regressor", {{"max_iter", "15"}}, &m.y_bin},
      {"gamma", "gamma_regressor", {{"max_iter", "15"}}, &y_pos},
      {"ard", "ard_regression", {{"max_iter", "20"}}, &m.y_reg},
      {"lasso_lars", "lasso_lars", {{"alpha", "0.02"}}, &m.y_reg},
  };
  for (const Fit& f : fits) {
    auto est = ml::make_estimator(f.name, f.params);
    est->fit(m.X, *f.y);
    add_linear(out, f.label, *est);
    add_tensor(out, std::string(f.label) + ".predict", est->predict(m.X));
  }
}

void check_ml_kmeans(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  MlData m = make_data(ctx, ctx.size(600, 4000), 7);
  auto km = ml::make_estimator("kmeans", {{"n_clusters", "6"}, {"max_iter", "20"}});
  km->fit(m.X);
  add_tensor(out, "kmeans.transform", km->transform(m.X));
  add_tensor(out, "kmeans.labels", km->predict(m.X));
  auto mb = ml::make_estimator("minibatch_kmeans", {{"n_clusters", "5"}, {"batch_size", "128"}, {"max_iter", "2"}});
  mb->fit(m.X);
  add_tensor(out, "minibatch_kmeans.transform", mb->transform(m.X));
}

void check_ml_kneighbors(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  MlData m = make_data(ctx, ctx.size(600, 4000), 9);
  const int64_t q = ctx.size(100, 500);
  Tensor Q = m.X.slice(0, 0, q);
  auto clf = ml::make_estimator("kneighbors_classifier", {{"n_neighbors", "6"}, {"weights", "distance"}});
  clf->fit(m.X, m.y_multi);
  add_tensor(out, "knn.proba", clf->predict_proba(Q));
  auto reg = ml::make_estimator("kneighbors_regressor", {{"n_neighbors", "5"}});
  reg->fit(m.X, m.y_reg);
  add_tensor(out, "knn.regress", reg->predict(Q));
}

void check_ml_pca(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  MlData m = make_data(ctx, ctx.size(600, 4000), 23);
  auto pca = ml::make_estimator("pca", {{"n_components", "8"}});
  pca->fit(m.X);
  ml::PcaView v = ml::pca_view(*pca);
  out.add_f32("pca.components", v.components);
  out.add_f32("pca.explained_variance", v.explained_variance);
  add_tensor(out, "pca.transform", pca->transform(m.X));
}

}  // namespace

void add_ml_linear_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"ml.linear", true, check_ml_linear});
  checks.push_back({"ml.linear_models", true, check_ml_linear_models});
  checks.push_back({"ml.kmeans", true, check_ml_kmeans});
  checks.push_back({"ml.kneighbors", true, check_ml_kneighbors});
  checks.push_back({"ml.pca", true, check_ml_pca});
}

}  // namespace bl::verify
