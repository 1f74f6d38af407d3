// test_ml_wave2_cuda.cu: the naive Bayes, discriminant analysis, nearest centroid, kernel ridge,
// Gaussian mixture, DBSCAN, radius neighbors, local outlier factor, SVM, kernel density, bisecting
// k-means, kernel approximation, density clustering, Bayesian mixture, nearest neighbors, spectral
// clustering, linear SVM, GP classifier and MLP estimators fit and predict on
// CUDA with the same bits as on the CPU, on data large enough for their block paths (kernel ridge's
// blocked Cholesky runs several panels with its trailing GEMMs on the device; DBSCAN and radius
// neighbors several row blocks); and the blocked Cholesky factor of a CUDA matrix equals the CPU's.
// Sabotage arm: one changed input value moves the CUDA model bytes. Skips when no GPU is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ml/linear/cholesky.h"
#include "ml_common/cuda_compare.h"

namespace bl {
namespace {

using ml_test::normal_data;

TEST(MlWave2Cuda, CpuAndCudaGiveTheSameModelAndOutputs) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 3001, d = 13;
  Tensor X = normal_data(n, d, 2468);
  std::vector<float> xv = X.to_vector<float>(), cv(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) cv[i] = std::floor(std::fabs(xv[i]) * 2.0f);
  Tensor Xc = Tensor::from_vector(cv, {n, d});
  Tensor S = matmul(X, normal_data(d, 3, 99));
  std::vector<float> sv = S.to_vector<float>(), r(n), m(n);
  for (int64_t i = 0; i < n; ++i) {
    r[i] = sv[i * 3] + 0.3f * normal_element(5, 8, static_cast<uint64_t>(i));
    int64_t best = 0;
    for (int64_t k = 1; k < 3; ++k)
      if (sv[i * 3 + k] > sv[i * 3 + best]) best = k;
    m[i] = static_cast<float>(best);
  }
  Tensor yr = Tensor::from_vector(r, {n}), ym = Tensor::from_vector(m, {n});
  const Tensor q = X.slice(0, 0, 1001), qc = Xc.slice(0, 0, 1001);
  std::vector<ml_common::CudaCase> cases;
  const struct {
    const char* name;
    ml::Params params;
    char target;  // m: three classes; r: regression; u: unsupervised
    bool counts;  // X as small non-negative integers
  } configs[] = {
      {"gaussian_nb", {}, 'm', false},
      {"multinomial_nb", {}, 'm', true},
      {"complement_nb", {{"norm", "true"}}, 'm', true},
      {"bernoulli_nb", {{"binarize", "0.5"}}, 'm', false},
      {"categorical_nb", {}, 'm', true},
      {"nearest_centroid", {}, 'm', false},
      {"nearest_centroid", {{"metric", "manhattan"}}, 'm', false},
      {"linear_discriminant_analysis", {}, 'm', false},
      {"linear_discriminant_analysis", {{"solver", "eigen"}, {"shrinkage", "auto"}}, 'm', false},
      {"quadratic_discriminant_analysis", {{"reg_param", "0.01"}}, 'm', false},
      {"kernel_ridge", {{"kernel", "rbf"}, {"alpha", "0.5"}}, 'r', false},
      {"kernel_ridge", {{"kernel", "poly"}, {"degree", "2"}, {"alpha", "1"}}, 'r', false},
      {"gaussian_mixture", {{"n_components", "3"}, {"covariance_type", "full"}}, 'u', false},
      {"gaussian_mixture", {{"n_components", "4"}, {"covariance_type", "diag"}, {"init_params", "k-means++"}}, 'u',
       false},
      {"dbscan", {{"eps", "2.5"}, {"min_samples", "8"}}, 'u', false},
      {"radius_neighbors_classifier", {{"radius", "3.5"}, {"outlier_label", "most_frequent"}}, 'm', false},
      {"radius_neighbors_regressor", {{"radius", "3.5"}, {"weights", "distance"}}, 'r', false},
      {"local_outlier_factor", {{"n_neighbors", "15"}, {"contamination", "0.1"}}, 'u', false},
      {"svc", {{"kernel", "rbf"}, {"C", "2"}}, 'm', false},
      {"svc", {{"kernel", "linear"}, {"decision_function_shape", "ovo"}}, 'm', false},
      {"svr", {{"kernel", "rbf"}, {"epsilon", "0.2"}}, 'r', false},
      {"kernel_density", {{"bandwidth", "scott"}, {"kernel", "epanechnikov"}}, 'u', false},
      {"bisecting_kmeans", {{"n_clusters", "5"}}, 'u', false},
      {"rbf_sampler", {{"gamma", "0.2"}, {"n_components", "64"}}, 'u', false},
      {"nystroem", {{"kernel", "rbf"}, {"n_components", "300"}}, 'u', false},
      {"one_class_svm", {{"nu", "0.2"}}, 'u', false},
      {"nu_svc", {{"nu", "0.3"}}, 'm', false},
      {"nu_svr", {{"nu", "0.4"}}, 'r', false},
      {"svc", {{"probability", "true"}}, 'm', false},
      {"agglomerative_clustering", {{"n_clusters", "4"}, {"linkage", "average"}}, 'u', false},
      {"mean_shift", {{"bandwidth", "3"}}, 'u', false},
      {"gaussian_process_regressor", {{"optimizer", "none"}, {"alpha", "0.1"}}, 'r', false},
  };
  for (const auto& c : configs)
    cases.push_back({c.name, c.params, c.counts ? &Xc : &X, c.target == 'u' ? nullptr : c.target == 'r' ? &yr : &ym,
                     c.counts ? &qc : &q});
  // The later estimators; those with an O(n^3) or O(n^2)-memory host part on the first 400 rows.
  const Tensor Xs = X.slice(0, 0, 400), ysm = ym.slice(0, 0, 400);
  cases.push_back({"linear_svc", {}, &X, &ym, &q});
  cases.push_back({"linear_svr", {{"epsilon", "0.1"}}, &X, &yr, &q});
  cases.push_back({"gaussian_process_classifier", {{"optimizer", "none"}}, &Xs, &ysm, &Xs});
  cases.push_back({"optics", {{"min_samples", "10"}}, &X, nullptr, &q});
  cases.push_back({"hdbscan", {{"min_cluster_size", "20"}}, &X, nullptr, &q});
  cases.push_back({"affinity_propagation", {}, &Xs, nullptr, &Xs});
  cases.push_back({"birch", {{"n_clusters", "4"}}, &X, nullptr, &q});
  cases.push_back({"bayesian_gaussian_mixture", {{"n_components", "4"}}, &X, nullptr, &q});
  cases.push_back({"nearest_neighbors", {{"n_neighbors", "7"}}, &X, nullptr, &q});
  cases.push_back({"nearest_neighbors", {{"n_neighbors", "7"}, {"metric", "manhattan"}}, &X, nullptr, &q});
  cases.push_back({"spectral_clustering", {{"n_clusters", "3"}, {"gamma", "0.1"}}, &Xs, nullptr, &Xs});
  cases.push_back({"mlp_classifier", {{"hidden_layer_sizes", "32,16"}, {"max_iter", "15"}}, &X, &ym, &q});
  cases.push_back({"mlp_regressor", {{"hidden_layer_sizes", "32"}, {"max_iter", "15"}, {"solver", "sgd"}}, &X, &yr, &q});
  EXPECT_EQ(ml_common::compare_cpu_and_cuda(cases), 0);
}

TEST(MlWave2Cuda, BlockedCholeskyOfACudaMatrixEqualsTheCpus) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 777;
  Tensor G = normal_data(n, 40, 31);
  std::vector<float> a = matmul(G, G, false, true).to_vector<float>();
  for (float& v : a) v /= 40.0f;
  for (int64_t i = 0; i < n; ++i) a[i * n + i] += 0.25f;
  Tensor host = Tensor::from_vector(a, {n, n});
  std::vector<float> Lc, Lg;
  ASSERT_EQ(ml::cholesky_factor_blocked(host, Lc), -1);
  ASSERT_EQ(ml::cholesky_factor_blocked(host.to(Device::cuda(0)), Lg), -1);
  EXPECT_EQ(std::memcmp(Lc.data(), Lg.data(), Lc.size() * sizeof(float)), 0);
}

TEST(MlWave2Cuda, SabotageOneChangedValueMovesTheCudaModel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  ml_common::expect_changed_value_moves_the_cuda_model("kernel_ridge", {{"kernel", "rbf"}}, 1503, 9, 17);
}

}  // namespace
}  // namespace bl
