// test_kernel_ridge.cpp: kernel_ridge against a float64 evaluation (kernel matrix, Cholesky solve
// and predictions in binary64) for every kernel, identical model files and predictions at 1, 2
// and 3 threads, and its refusals: a singular kernel matrix at alpha = 0, bad gamma, too many rows.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml_common/estimator_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

struct Data {
  std::vector<float> x, y;
  int64_t n, d;
};

Data make_data(int64_t n, int64_t d, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out{{}, {}, n, d};
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) {
      float v = rng.uniform_pm1();
      out.x.push_back(v);
      s += (j + 1) * v + 0.5 * v * v;
    }
    out.y.push_back(static_cast<float>(std::sin(s) + 0.05 * rng.uniform_pm1()));
  }
  return out;
}

double kernel64(const std::string& k, const float* a, const float* b, int64_t d, double gamma, double coef0,
                int degree) {
  double dot = 0, sq = 0, l1 = 0;
  for (int64_t j = 0; j < d; ++j) {
    dot += static_cast<double>(a[j]) * b[j];
    sq += (static_cast<double>(a[j]) - b[j]) * (static_cast<double>(a[j]) - b[j]);
    l1 += std::fabs(static_cast<double>(a[j]) - b[j]);
  }
  if (k == "linear") return dot;
  if (k == "rbf") return std::exp(-gamma * sq);
  if (k == "laplacian") return std::exp(-gamma * l1);
  if (k == "sigmoid") return std::tanh(gamma * dot + coef0);
  return std::pow(gamma * dot + coef0, degree);
}

// Predictions of kernel ridge in binary64 (Cholesky on K + alpha I).
std::vector<double> reference(const std::string& k, const Data& tr, const Data& te, double alpha, double gamma,
                              double coef0, int degree) {
  const int64_t n = tr.n, d = tr.d;
  std::vector<double> A(n * n), L(n * n, 0.0), c(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      A[i * n + j] = kernel64(k, &tr.x[i * d], &tr.x[j * d], d, gamma, coef0, degree) + (i == j ? alpha : 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = A[i * n + j];
      for (int64_t q = 0; q < j; ++q) s -= L[i * n + q] * L[j * n + q];
      L[i * n + j] = i == j ? std::sqrt(s) : s / L[j * n + j];
    }
  for (int64_t i = 0; i < n; ++i) {
    double s = tr.y[i];
    for (int64_t q = 0; q < i; ++q) s -= L[i * n + q] * c[q];
    c[i] = s / L[i * n + i];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    double s = c[i];
    for (int64_t q = i + 1; q < n; ++q) s -= L[q * n + i] * c[q];
    c[i] = s / L[i * n + i];
  }
  std::vector<double> p(te.n, 0.0);
  for (int64_t i = 0; i < te.n; ++i)
    for (int64_t j = 0; j < n; ++j) p[i] += kernel64(k, &te.x[i * d], &tr.x[j * d], d, gamma, coef0, degree) * c[j];
  return p;
}

TEST(KernelRidge, EveryKernelMatchesAFloat64Evaluation) {
  Data tr = make_data(120, 3, 1), te = make_data(40, 3, 2);
  struct Case {
    std::string kernel;
    ml::Params params;
    double alpha, gamma, coef0;
    int degree;
  };
  const std::vector<Case> cases = {
      {"linear", {{"kernel", "linear"}, {"alpha", "0.5"}}, 0.5, 0, 0, 0},
      {"rbf", {{"kernel", "rbf"}, {"alpha", "0.1"}, {"gamma", "0.5"}}, 0.1, 0.5, 0, 0},
      {"rbf", {{"kernel", "rbf"}, {"alpha", "1"}}, 1.0, 1.0 / 3.0, 0, 0},  // gamma none: 1 / n_features
      {"poly", {{"kernel", "poly"}, {"alpha", "1"}, {"degree", "3"}}, 1.0, 1.0 / 3.0, 1.0, 3},
      {"poly", {{"kernel", "poly"}, {"alpha", "0.2"}, {"degree", "2"}, {"gamma", "1"}, {"coef0", "0.5"}}, 0.2, 1.0,
       0.5, 2},
      {"sigmoid", {{"kernel", "sigmoid"}, {"alpha", "1"}, {"gamma", "0.1"}, {"coef0", "0"}}, 1.0, 0.1, 0.0, 0},
      {"laplacian", {{"kernel", "laplacian"}, {"alpha", "0.1"}, {"gamma", "0.7"}}, 0.1, 0.7, 0, 0},
  };
  for (const Case& c : cases) {
    auto est = ml::make_estimator("kernel_ridge", c.params);
    est->fit(Tensor::from_vector(tr.x, {tr.n, tr.d}), Tensor::from_vector(tr.y, {tr.n}));
    std::vector<float> got = est->predict(Tensor::from_vector(te.x, {te.n, te.d})).to_vector<float>();
    std::vector<double> want = reference(c.kernel, tr, te, c.alpha, c.gamma, c.coef0, c.degree);
    double scale = 1.0, worst = 0.0;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    for (int64_t i = 0; i < te.n; ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / scale);
    EXPECT_LT(worst, 2e-4) << c.kernel << " alpha=" << c.alpha;
  }
}

TEST(KernelRidge, SameBytesAtThreads123) {
  Data tr = make_data(300, 5, 3), te = make_data(200, 5, 4);
  for (const char* kernel : {"rbf", "poly", "laplacian"}) {
    std::string model;
    std::vector<unsigned char> out;
    const int saved = num_threads();
    for (int t : {1, 2, 3}) {
      set_num_threads(t);
      auto est = ml::make_estimator("kernel_ridge", {{"kernel", kernel}, {"alpha", "0.3"}});
      est->fit(Tensor::from_vector(tr.x, {tr.n, tr.d}), Tensor::from_vector(tr.y, {tr.n}));
      std::vector<unsigned char> o = ml_common::bytes_of(est->predict(Tensor::from_vector(te.x, {te.n, te.d})));
      if (t == 1) {
        model = est->to_json_text();
        out = o;
      } else {
        EXPECT_EQ(est->to_json_text(), model) << kernel << " at " << t << " threads";
        EXPECT_TRUE(o == out) << kernel << " at " << t << " threads";
      }
    }
    set_num_threads(saved);
  }
}

TEST(KernelRidge, BadInputsAreNamedErrors) {
  Data tr = make_data(40, 2, 5);
  Tensor X = Tensor::from_vector(tr.x, {tr.n, tr.d}), y = Tensor::from_vector(tr.y, {tr.n});
  // A linear kernel of 2 features has rank 2: singular for 40 rows without ridge.
  std::string m = error_of([&] { ml::make_estimator("kernel_ridge", {{"alpha", "0"}})->fit(X, y); });
  EXPECT_NE(m.find("not positive definite"), std::string::npos) << m;
  EXPECT_NE(m.find("raise alpha"), std::string::npos) << m;
  m = error_of([&] { ml::make_estimator("kernel_ridge", {{"gamma", "-1"}}); });
  EXPECT_NE(m.find("gamma"), std::string::npos) << m;
  m = error_of([&] { ml::make_estimator("kernel_ridge", {{"kernel", "cosine"}}); });
  EXPECT_NE(m.find("kernel"), std::string::npos) << m;
  m = error_of([&] {
    ml::make_estimator("kernel_ridge")->fit(Tensor::zeros({8193, 1}), Tensor::zeros({8193}));
  });
  EXPECT_NE(m.find("8192"), std::string::npos) << m;
  // gamma none round-trips through get_params.
  auto est = ml::make_estimator("kernel_ridge", {{"gamma", "none"}});
  EXPECT_EQ(est->get_params().at("gamma"), "none");
}

}  // namespace
}  // namespace bl
