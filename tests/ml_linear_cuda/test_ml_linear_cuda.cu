// test_ml_linear_cuda.cu: the linear, cluster, neighbors and decomposition estimators fit and
// predict on CUDA with the same bits as on the CPU: for each estimator the model file written
// after a CUDA fit equals the CPU one byte for byte, and the predictions (predict_proba, transform)
// have equal digests. Sabotage arm: one changed input value (bit 23 flipped) moves the CUDA model bytes.
// Skips when no GPU is present.
#include <gtest/gtest.h>

#include "ml_common/cuda_compare.h"

namespace bl {
namespace {

using ml_test::normal_data;

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
  const struct {
    const char* name;
    ml::Params params;
    char target;  // r, b, m, u; c = the 0/1 labels as counts
  } configs[] = {
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
  Tensor Xq = X.slice(0, 0, 3001);  // queries for k-NN (keeps the test short)
  std::vector<ml_common::CudaCase> cases;
  for (const auto& c : configs) {
    const bool knn = std::string(c.name).rfind("kneighbors", 0) == 0;
    cases.push_back({c.name, c.params, &X,
                     c.target == 'u'   ? nullptr
                     : c.target == 'r' ? &yr
                     : c.target == 'm' ? &ym
                                       : &yb,
                     knn ? &Xq : &X});
  }
  EXPECT_EQ(ml_common::compare_cpu_and_cuda(cases), 0);
}

TEST(MlLinearCuda, WeightedFitsGiveTheCpuBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 4099, d = 11;
  Tensor X = normal_data(n, d, 123);
  std::vector<float> s = sum(X, {1}).to_vector<float>(), w(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    w[i] = static_cast<float>((i * 7 + 3) % 5) * 0.5f;
    b[i] = s[i] > 0.0f ? 1.0f : 0.0f;
  }
  Tensor y = Tensor::from_vector(s, {n}), yb = Tensor::from_vector(b, {n}), W = Tensor::from_vector(w, {n});
  const Device gpu = Device::cuda(0);
  for (const char* name : {"linear_regression", "ridge", "lasso", "elastic_net", "logistic_regression",
                           "gaussian_nb", "hist_gradient_boosting_classifier", "hist_gradient_boosting_regressor"}) {
    const std::string nm = name;
    const Tensor& t = nm == "logistic_regression" || nm == "gaussian_nb" || nm.find("classifier") != std::string::npos ? yb : y;
    auto cpu = ml::make_estimator(name), cuda = ml::make_estimator(name);
    cpu->fit_weighted(X, t, W);
    cuda->fit_weighted(X.to(gpu), t.to(gpu), W.to(gpu));
    const bool same = cpu->to_json_text() == cuda->to_json_text();
    EXPECT_TRUE(same) << name;
    std::printf("  %-22s weighted, CPU vs CUDA model file: %s\n", name, same ? "IDENTICAL" : "DIVERGENT");
  }
}

TEST(MlLinearCuda, SabotageOneChangedValueMovesTheCudaModel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  ml_common::expect_changed_value_moves_the_cuda_model("ridge", {}, 5003, 9, 11);
}

}  // namespace
}  // namespace bl
