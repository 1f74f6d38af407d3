// test_ml_linear_cuda.cu: the linear, cluster, neighbors and decomposition estimators fit and
// predict on CUDA with the same bits as on the CPU: for each estimator the model file written
// after a CUDA fit equals the CPU one byte for byte, and the predictions (predict_proba, transform)
// have equal digests. Sabotage arm: one changed input value (bit 23 flipped) moves the CUDA model bytes.
// Skips when no GPU is present.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ops.h"
#include "contract/rng.h"

namespace bl {
namespace {

Tensor normal_data(int64_t n, int64_t d, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n * d; ++i) v[i] = normal_element(seed, 7, static_cast<uint64_t>(i));
  return Tensor::from_vector(v, {n, d});
}

struct Config {
  const char* name;
  ml::Params params;
  char target;  // r, b, m, u; c = the 0/1 labels as counts (no predict_proba)
};

TEST(MlLinearCuda, CpuAndCudaGiveTheSameModelAndPredictions) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 20011, d = 17;
  Tensor X = normal_data(n, d, 4321);
  Tensor S = matmul(X, normal_data(d, 3, 77));
  std::vector<float> sv = S.to_vector<float>(), r(n), b(n), m(n);
  for (int64_t i = 0; i < n; ++i) {
    float noise = normal_element(6, 8, static_cast<uint64_t>(i));
    r[i] = sv[i * 3] + 0.3f * noise;
    b[i] = sv[i * 3 + 1] + noise > 0.0f ? 1.0f : 0.0f;
    int64_t best = 0;
    for (int64_t k = 1; k < 3; ++k)
      if (sv[i * 3 + k] > sv[i * 3 + best]) best = k;
    m[i] = static_cast<float>(best);
  }
  Tensor yr = Tensor::from_vector(r, {n}), yb = Tensor::from_vector(b, {n}), ym = Tensor::from_vector(m, {n});
  std::vector<Config> configs = {
      {"linear_regression", {}, 'r'},
      {"ridge", {{"alpha", "2"}}, 'r'},
      {"lasso", {{"alpha", "0.02"}}, 'r'},
      {"elastic_net", {{"alpha", "0.02"}, {"l1_ratio", "0.4"}}, 'r'},
      {"logistic_regression", {}, 'b'},
      {"logistic_regression", {{"penalty", "l1"}}, 'b'},
      {"logistic_regression", {{"C", "0.5"}}, 'm'},
      {"kmeans", {{"n_clusters", "8"}}, 'u'},
      {"minibatch_kmeans", {{"n_clusters", "6"}, {"max_iter", "2"}}, 'u'},
      {"kneighbors_classifier", {{"n_neighbors", "5"}}, 'm'},
      {"kneighbors_regressor", {{"n_neighbors", "6"}, {"weights", "distance"}}, 'r'},
      {"pca", {{"n_components", "6"}}, 'u'},
      {"sgd_classifier", {{"loss", "log_loss"}, {"max_iter", "5"}}, 'm'},
      {"sgd_regressor", {{"penalty", "elasticnet"}, {"max_iter", "5"}}, 'r'},
      {"huber_regressor", {}, 'r'},
      {"quantile_regressor", {{"quantile", "0.3"}, {"alpha", "0.001"}}, 'r'},
      {"poisson_regressor", {{"alpha", "0.1"}}, 'c'},
      {"tweedie_regressor", {{"power", "1.5"}, {"alpha", "0.1"}}, 'c'},
      {"ard_regression", {}, 'r'},
      {"lars", {{"n_nonzero_coefs", "6"}}, 'r'},
      {"lasso_lars", {{"alpha", "0.01"}}, 'r'},
  };
  Device gpu = Device::cuda(0);
  Tensor Xg = X.to(gpu);
  Tensor Xq = X.slice(0, 0, 3001);  // queries for k-NN (keeps the test short)
  Tensor Xqg = Xq.to(gpu);
  int failures = 0;
  for (const Config& c : configs) {
    SCOPED_TRACE(c.name);
    const Tensor& y = c.target == 'r' ? yr : (c.target == 'b' || c.target == 'c') ? yb : ym;
    auto cpu = ml::make_estimator(c.name, c.params);
    auto gpu_est = ml::make_estimator(c.name, c.params);
    if (c.target == 'u') {
      cpu->fit(X);
      gpu_est->fit(Xg);
    } else {
      cpu->fit(X, y);
      gpu_est->fit(Xg, y.to(gpu));
    }
    std::string a = cpu->to_json_text(), g = gpu_est->to_json_text();
    EXPECT_EQ(a, g) << "model file differs";
    bool knn = std::string(c.name).rfind("kneighbors", 0) == 0;
    const Tensor& q = knn ? Xq : X;
    const Tensor& qg = knn ? Xqg : Xg;
    std::string pc, pg;
    if (std::string(c.name) == "pca") {
      pc = cpu->transform(q).digest();
      pg = gpu_est->transform(qg).digest();
    } else {
      pc = cpu->predict(q).digest();
      pg = gpu_est->predict(qg).digest();
      if (c.target == 'b' || c.target == 'm') {
        pc += cpu->predict_proba(q).digest();
        pg += gpu_est->predict_proba(qg).digest();
      }
    }
    EXPECT_EQ(pc, pg) << "predictions differ";
    bool same = a == g && pc == pg;
    failures += same ? 0 : 1;
    std::printf("  %-22s CPU vs CUDA model file + predictions: %s\n", c.name, same ? "IDENTICAL" : "DIVERGENT");
  }
  EXPECT_EQ(failures, 0);
}

TEST(MlLinearCuda, SabotageOneChangedValueMovesTheCudaModel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  Tensor X = normal_data(5003, 9, 11);
  Tensor y = sum(X, {1});
  Tensor X2 = X.clone();
  uint32_t bits;
  std::memcpy(&bits, X2.data<float>() + 3, 4);
  bits ^= 1u << 23;  // the value doubles or halves
  std::memcpy(X2.data<float>() + 3, &bits, 4);
  auto a = ml::make_estimator("ridge"), b = ml::make_estimator("ridge");
  a->fit(X.to(Device::cuda(0)), y.to(Device::cuda(0)));
  b->fit(X2.to(Device::cuda(0)), y.to(Device::cuda(0)));
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

}  // namespace
}  // namespace bl
