// test_decomposition_wave3.cpp: truncated_svd, kernel_pca, factor_analysis and nmf against float64
// references.
// truncated_svd: components orthonormal and eigenvectors of the float64 X^T X (residual), squared
// singular values summing to ||X||_F^2 with every component, explained variance the float64 variance
// of X v, the randomized sketch agreeing with the exact solver where the spectrum decays, the sign
// rule. kernel_pca: eigenpairs of the float64 centered kernel matrix (linear, rbf, poly, cosine),
// transform of the training rows equal to u_t sqrt(lambda_t), the linear kernel matching pca's
// projections up to sign, the cosine kernel blind to row scaling. factor_analysis: the last loglike_
// equal to the float64 Gaussian log-likelihood under W^T W + diag(psi), EM never decreasing it,
// transform the float64 posterior mean, max_iter stopping unconverged. nmf: exactly factorable data
// reconstructed by both solvers from every init, the error never rising with more iterations, transform
// (W for the fixed H) no worse than the fit. All: identical bytes at threads 1,
// 2 and 3, a changed input moves the model, the state round trip and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::expect_refusal_names;
using ml_common::state_f32;

// n rows of d features of rank r plus noise, offset 0.5 (truncated_svd does not center).
Data make_data(int64_t n, int64_t d, int64_t r, float noise, uint64_t seed) {
  return ml_common::low_rank_rows(n, d, r, noise, seed, 0.5);
}

double norm_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double a : v) s += a * a;
  return std::sqrt(s);
}

// The state round trip: a new estimator of the same parameters loaded from the state writes the same model file and the
// same transform bytes.
void expect_round_trip(const std::string& name, const ml::Params& params, const Data& x) {
  auto est = ml::make_estimator(name, params);
  est->fit(x.X());
  auto back = ml::make_estimator(name, params);
  back->load_state(ml_common::state_of(*est));
  EXPECT_EQ(back->to_json_text(), est->to_json_text()) << name;
  EXPECT_EQ(back->transform(x.X()).to_vector<float>(), est->transform(x.X()).to_vector<float>()) << name;
}

TEST(TruncatedSVD, ExactComponentsAreEigenvectorsOfTheFloat64Gram) {
  const Data x = make_data(60, 7, 7, 0.0f, 3);
  const int64_t d = x.d;
  auto est = ml::make_estimator("truncated_svd", {{"algorithm", "arpack"}, {"n_components", "7"}});
  est->fit(x.X());
  std::vector<float> v = state_f32(*est, "components"), s = state_f32(*est, "singular_values");
  std::vector<double> g(static_cast<size_t>(d * d), 0.0);
  double fro = 0.0;
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t a = 0; a < d; ++a) {
      fro += static_cast<double>(x.x[i * d + a]) * x.x[i * d + a];
      for (int64_t b = 0; b < d; ++b) g[a * d + b] += static_cast<double>(x.x[i * d + a]) * x.x[i * d + b];
    }
  double s2 = 0.0;
  for (int64_t t = 0; t < d; ++t) {
    s2 += static_cast<double>(s[t]) * s[t];
    if (t > 0) EXPECT_GE(s[t - 1], s[t]);
    std::vector<double> res(static_cast<size_t>(d), 0.0);
    int64_t big = 0;
    for (int64_t a = 0; a < d; ++a) {
      for (int64_t b = 0; b < d; ++b) res[a] += g[a * d + b] * v[t * d + b];
      res[a] -= static_cast<double>(s[t]) * s[t] * v[t * d + a];
      if (std::fabs(v[t * d + a]) > std::fabs(v[t * d + big])) big = a;
    }
    EXPECT_LT(norm_of(res), 2e-5 * static_cast<double>(s[0]) * s[0]) << "component " << t;
    EXPECT_GT(v[t * d + big], 0.0f) << "sign rule, component " << t;
    for (int64_t u = 0; u <= t; ++u) {
      double dot = 0.0;
      for (int64_t a = 0; a < d; ++a) dot += static_cast<double>(v[t * d + a]) * v[u * d + a];
      EXPECT_NEAR(dot, t == u ? 1.0 : 0.0, 1e-5) << t << " " << u;
    }
  }
  EXPECT_NEAR(s2, fro, 1e-5 * fro);
}

TEST(TruncatedSVD, ExplainedVarianceIsTheFloat64VarianceOfTheProjection) {
  const Data x = make_data(80, 9, 4, 0.05f, 5);
  for (const char* algorithm : {"arpack", "randomized"}) {
    auto est = ml::make_estimator("truncated_svd", {{"algorithm", algorithm}, {"n_components", "3"}});
    est->fit(x.X());
    std::vector<float> v = state_f32(*est, "components"), ev = state_f32(*est, "explained_variance"),
                       ratio = state_f32(*est, "explained_variance_ratio");
    std::vector<float> z = est->transform(x.X()).to_vector<float>();
    double total = 0.0;
    for (int64_t j = 0; j < x.d; ++j) {
      double m = 0.0, q = 0.0;
      for (int64_t i = 0; i < x.n; ++i) m += x.x[i * x.d + j];
      m /= static_cast<double>(x.n);
      for (int64_t i = 0; i < x.n; ++i) q += (x.x[i * x.d + j] - m) * (x.x[i * x.d + j] - m);
      total += q / static_cast<double>(x.n);
    }
    for (int64_t t = 0; t < 3; ++t) {
      double m = 0.0, q = 0.0;
      std::vector<double> p(static_cast<size_t>(x.n), 0.0);
      for (int64_t i = 0; i < x.n; ++i) {
        for (int64_t j = 0; j < x.d; ++j) p[i] += static_cast<double>(x.x[i * x.d + j]) * v[t * x.d + j];
        EXPECT_NEAR(z[i * 3 + t], p[i], 1e-5 * (1.0 + std::fabs(p[i])));
        m += p[i];
      }
      m /= static_cast<double>(x.n);
      for (double a : p) q += (a - m) * (a - m);
      q /= static_cast<double>(x.n);
      EXPECT_NEAR(ev[t], q, 1e-5 * q) << algorithm << " " << t;
      EXPECT_NEAR(ratio[t], q / total, 1e-5) << algorithm << " " << t;
    }
  }
}

TEST(TruncatedSVD, RandomizedAgreesWithExactWhereTheSpectrumDecays) {
  const Data x = make_data(300, 40, 6, 0.01f, 11);
  auto exact = ml::make_estimator("truncated_svd", {{"algorithm", "arpack"}, {"n_components", "4"}});
  auto rnd = ml::make_estimator("truncated_svd", {{"n_components", "4"}});
  exact->fit(x.X());
  rnd->fit(x.X());
  std::vector<float> se = state_f32(*exact, "singular_values"), sr = state_f32(*rnd, "singular_values");
  std::vector<float> ve = state_f32(*exact, "components"), vr = state_f32(*rnd, "components");
  for (int64_t t = 0; t < 4; ++t) {
    EXPECT_NEAR(sr[t], se[t], 1e-4 * se[t]) << t;
    double dot = 0.0;
    for (int64_t j = 0; j < x.d; ++j) dot += static_cast<double>(ve[t * x.d + j]) * vr[t * x.d + j];
    EXPECT_GT(dot, 0.9999) << "component " << t << " (the sign rule makes them agree in sign)";
  }
}

TEST(KernelPCA, EigenpairsOfTheFloat64CenteredKernel) {
  const Data x = make_data(50, 4, 4, 0.1f, 21);
  const int64_t n = x.n, d = x.d;
  for (const char* kernel : {"linear", "rbf", "poly", "cosine"}) {
    auto est = ml::make_estimator("kernel_pca", {{"kernel", kernel}, {"gamma", "0.25"}, {"n_components", "5"}});
    est->fit(x.X());
    std::vector<float> lam = state_f32(*est, "eigenvalues"), u = state_f32(*est, "eigenvectors");
    ASSERT_EQ(lam.size(), 5u) << kernel;
    std::vector<double> k(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0.0, sq = 0.0, ni = 0.0, nj = 0.0;
        for (int64_t f = 0; f < d; ++f) {
          const double a = x.x[i * d + f], b = x.x[j * d + f];
          dot += a * b;
          sq += (a - b) * (a - b);
          ni += a * a;
          nj += b * b;
        }
        const std::string kn = kernel;
        k[i * n + j] = kn == "linear" ? dot
                       : kn == "rbf"  ? std::exp(-0.25 * sq)
                       : kn == "poly" ? std::pow(0.25 * dot + 1.0, 3.0)
                                      : dot / std::sqrt(ni * nj);
      }
    std::vector<double> c(static_cast<size_t>(n), 0.0);
    double g = 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) c[j] += k[i * n + j] / static_cast<double>(n);
    for (double a : c) g += a / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) k[i * n + j] += g - c[i] - c[j];
    std::vector<float> z = est->transform(x.X()).to_vector<float>();
    for (int64_t t = 0; t < 5; ++t) {
      std::vector<double> res(static_cast<size_t>(n), 0.0);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) res[i] += k[i * n + j] * u[t * n + j];
        res[i] -= static_cast<double>(lam[t]) * u[t * n + i];
        // transform of a training row: u_t[i] sqrt(lambda_t)
        EXPECT_NEAR(z[i * 5 + t], u[t * n + i] * std::sqrt(static_cast<double>(lam[t])),
                    2e-4 * std::sqrt(static_cast<double>(lam[0])))
            << kernel << " row " << i << " component " << t;
      }
      EXPECT_LT(norm_of(res), 2e-5 * lam[0]) << kernel << " component " << t;
    }
  }
}

TEST(KernelPCA, LinearKernelMatchesPcaUpToSignAndCosineIgnoresRowScale) {
  const Data x = make_data(70, 5, 5, 0.0f, 8);
  auto kp = ml::make_estimator("kernel_pca", {{"n_components", "3"}});
  auto pca = ml::make_estimator("pca", {{"n_components", "3"}});
  kp->fit(x.X());
  pca->fit(x.X());
  std::vector<float> a = kp->transform(x.X()).to_vector<float>(), b = pca->transform(x.X()).to_vector<float>();
  for (int64_t t = 0; t < 3; ++t) {
    double dot = 0.0;
    for (int64_t i = 0; i < x.n; ++i) dot += static_cast<double>(a[i * 3 + t]) * b[i * 3 + t];
    const double sign = dot < 0.0 ? -1.0 : 1.0;
    for (int64_t i = 0; i < x.n; ++i) EXPECT_NEAR(a[i * 3 + t], sign * b[i * 3 + t], 2e-4) << i << " " << t;
  }
  Data scaled = x;
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t j = 0; j < x.d; ++j) scaled.x[i * x.d + j] *= static_cast<float>(1 + i % 3) * 0.5f + 0.25f;
  auto c1 = ml::make_estimator("kernel_pca", {{"kernel", "cosine"}, {"n_components", "2"}});
  auto c2 = ml::make_estimator("kernel_pca", {{"kernel", "cosine"}, {"n_components", "2"}});
  c1->fit(x.X());
  c2->fit(scaled.X());
  std::vector<float> p = c1->transform(x.X()).to_vector<float>(), q = c2->transform(scaled.X()).to_vector<float>();
  for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], q[i], 1e-4) << i;
}

TEST(KernelPCA, NoneKeepsThePositiveEigenvaluesOnly) {
  const Data x = make_data(40, 6, 3, 0.0f, 2);  // rank 3 plus the offset: centered rank 3
  auto est = ml::make_estimator("kernel_pca");
  est->fit(x.X());
  EXPECT_EQ(ml_common::state_of(*est)["n_components"].get<int64_t>(), 3);
  auto keep = ml::make_estimator("kernel_pca", {{"n_components", "5"}});
  keep->fit(x.X());
  std::vector<float> lam = state_f32(*keep, "eigenvalues");
  EXPECT_GT(lam[2], 0.0f);
  EXPECT_EQ(lam[3], 0.0f);
  EXPECT_EQ(lam[4], 0.0f);
  auto rm = ml::make_estimator("kernel_pca", {{"n_components", "5"}, {"remove_zero_eig", "true"}});
  rm->fit(x.X());
  EXPECT_EQ(rm->transform(x.X()).dim(1), 3);
}

// Inverse and log-determinant of a small symmetric positive definite matrix by float64 Gauss-Jordan.
double invert64(std::vector<double> a, int64_t d, std::vector<double>& inv) {
  inv.assign(static_cast<size_t>(d * d), 0.0);
  for (int64_t i = 0; i < d; ++i) inv[i * d + i] = 1.0;
  double logdet = 0.0;
  for (int64_t p = 0; p < d; ++p) {
    const double piv = a[p * d + p];
    logdet += std::log(piv);
    for (int64_t j = 0; j < d; ++j) {
      a[p * d + j] /= piv;
      inv[p * d + j] /= piv;
    }
    for (int64_t i = 0; i < d; ++i) {
      if (i == p) continue;
      const double f = a[i * d + p];
      for (int64_t j = 0; j < d; ++j) {
        a[i * d + j] -= f * a[p * d + j];
        inv[i * d + j] -= f * inv[p * d + j];
      }
    }
  }
  return logdet;
}

TEST(FactorAnalysis, LoglikeAndTransformMatchTheFloat64Model) {
  const int64_t k = 2;
  const Data x = make_data(300, 6, 2, 0.4f, 17);
  const int64_t n = x.n, d = x.d;
  auto est = ml::make_estimator("factor_analysis", {{"n_components", "2"}, {"tol", "1e-6"}});
  est->fit(x.X());
  nlohmann::json st = ml_common::state_of(*est);
  EXPECT_TRUE(st["converged"].get<bool>());
  std::vector<float> w = state_f32(*est, "components"), psi = state_f32(*est, "noise_variance"),
                     ll = state_f32(*est, "loglike"), mean = state_f32(*est, "mean");
  ASSERT_EQ(static_cast<int64_t>(ll.size()), st["n_iter"].get<int64_t>());
  for (size_t i = 1; i < ll.size(); ++i) EXPECT_GE(ll[i], ll[i - 1] - 1e-4f * std::fabs(ll[i])) << "EM step " << i;
  // Sigma = W^T W + diag(psi); the Gaussian log-likelihood of the data under it in float64.
  std::vector<double> sigma(static_cast<size_t>(d * d), 0.0), c(static_cast<size_t>(d * d), 0.0), inv;
  for (int64_t a = 0; a < d; ++a)
    for (int64_t b = 0; b < d; ++b) {
      for (int64_t t = 0; t < k; ++t) sigma[a * d + b] += static_cast<double>(w[t * d + a]) * w[t * d + b];
      if (a == b) sigma[a * d + b] += psi[a];
    }
  std::vector<double> mu(static_cast<size_t>(d), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) mu[j] += x.x[i * d + j] / static_cast<double>(n);
  for (int64_t j = 0; j < d; ++j) EXPECT_NEAR(mean[j], mu[j], 1e-5);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b)
        c[a * d + b] += (x.x[i * d + a] - mu[a]) * (x.x[i * d + b] - mu[b]) / static_cast<double>(n);
  const double logdet = invert64(sigma, d, inv);
  double tr = 0.0;
  for (int64_t a = 0; a < d; ++a)
    for (int64_t b = 0; b < d; ++b) tr += inv[a * d + b] * c[b * d + a];
  const double ref = -0.5 * static_cast<double>(n) * (static_cast<double>(d) * std::log(2.0 * M_PI) + logdet + tr);
  EXPECT_NEAR(ll.back(), ref, 1e-5 * std::fabs(ref));
  // transform: the posterior mean (I + W psi^-1 W^T)^-1 W psi^-1 (x - mean).
  std::vector<double> m(static_cast<size_t>(k * k), 0.0), minv;
  for (int64_t s = 0; s < k; ++s)
    for (int64_t t = 0; t < k; ++t) {
      m[s * k + t] = s == t ? 1.0 : 0.0;
      for (int64_t j = 0; j < d; ++j) m[s * k + t] += static_cast<double>(w[s * d + j]) * w[t * d + j] / psi[j];
    }
  invert64(m, k, minv);
  std::vector<float> z = est->transform(x.X()).to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> h(static_cast<size_t>(k), 0.0);
    for (int64_t s = 0; s < k; ++s)
      for (int64_t j = 0; j < d; ++j) h[s] += static_cast<double>(w[s * d + j]) / psi[j] * (x.x[i * d + j] - mu[j]);
    for (int64_t t = 0; t < k; ++t) {
      double v = 0.0;
      for (int64_t s = 0; s < k; ++s) v += minv[t * k + s] * h[s];
      EXPECT_NEAR(z[i * k + t], v, 1e-4 * (1.0 + std::fabs(v))) << i << " " << t;
    }
  }
}

TEST(FactorAnalysis, MaxIterStopsUnconverged) {
  const Data x = make_data(100, 5, 2, 0.4f, 3);
  auto est = ml::make_estimator("factor_analysis", {{"n_components", "2"}, {"tol", "0"}, {"max_iter", "3"}});
  est->fit(x.X());
  nlohmann::json st = ml_common::state_of(*est);
  EXPECT_FALSE(st["converged"].get<bool>());
  EXPECT_EQ(st["n_iter"].get<int64_t>(), 3);
}

// n x d non-negative data of rank r: X = W0 H0 with W0, H0 uniform in [0, 1) (exactly factorable),
// plus noise * uniform [0, 1).
Data nonnegative_data(int64_t n, int64_t d, int64_t r, float noise, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<double> w0(static_cast<size_t>(n * r)), h0(static_cast<size_t>(r * d));
  for (double& v : w0) v = 0.5 * (rng.uniform_pm1() + 1.0);
  for (double& v : h0) v = 0.5 * (rng.uniform_pm1() + 1.0);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    out.y.push_back(0.0f);
    for (int64_t j = 0; j < d; ++j) {
      double v = 0.0;
      for (int64_t t = 0; t < r; ++t) v += w0[i * r + t] * h0[t * d + j];
      out.x.push_back(static_cast<float>(v + noise * 0.5 * (rng.uniform_pm1() + 1.0)));
    }
  }
  return out;
}

// ||X - W H||_F in float64 from transform(X) (W) and the stored components (H).
double nmf_error64(const ml::Estimator& est, const Data& x) {
  std::vector<float> h = state_f32(est, "components");
  std::vector<float> w = est.transform(x.X()).to_vector<float>();
  const int64_t k = static_cast<int64_t>(h.size()) / x.d;
  double e = 0.0;
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t j = 0; j < x.d; ++j) {
      double v = x.x[i * x.d + j];
      for (int64_t t = 0; t < k; ++t) v -= static_cast<double>(w[i * k + t]) * h[t * x.d + j];
      e += v * v;
    }
  return std::sqrt(e);
}

TEST(NMF, ExactlyFactorableDataIsReconstructed) {
  const Data x = nonnegative_data(60, 8, 3, 0.0f, 41);
  double fro = 0.0;
  for (float v : x.x) fro += static_cast<double>(v) * v;
  fro = std::sqrt(fro);
  for (const char* solver : {"cd", "mu"})
    for (const char* init : {"nndsvd", "nndsvda", "random"}) {
      auto est = ml::make_estimator("nmf", {{"n_components", "3"}, {"solver", solver}, {"init", init},
                                            {"tol", "1e-8"}, {"max_iter", "3000"}});
      est->fit(x.X());
      const float err = state_f32(*est, "reconstruction_err")[0];
      // Multiplicative updates keep nndsvd's zeros at zero (scikit-learn's stop at the same error).
      if (std::string(solver) != "mu" || std::string(init) != "nndsvd") EXPECT_LT(err, 2e-2 * fro) << solver << " " << init;
      for (float v : state_f32(*est, "components")) EXPECT_GE(v, 0.0f);
      std::vector<float> w = est->transform(x.X()).to_vector<float>();
      for (float v : w) EXPECT_GE(v, 0.0f);
      // transform solves for W with H fixed: its error is no worse than the fit's (to float32 noise).
      EXPECT_LT(nmf_error64(*est, x), err + 1e-4 * fro) << solver << " " << init;
    }
  // cd from nndsvd reaches the exact factorization closely.
  auto cd = ml::make_estimator("nmf", {{"n_components", "3"}, {"init", "nndsvd"}, {"tol", "1e-10"}, {"max_iter", "5000"}});
  cd->fit(x.X());
  EXPECT_LT(state_f32(*cd, "reconstruction_err")[0], 1e-3 * fro);
}

TEST(NMF, ErrorFallsWithIterations) {
  const Data x = nonnegative_data(80, 10, 4, 0.3f, 43);
  for (const char* solver : {"cd", "mu"}) {
    float last = 1e30f;
    for (int iters : {1, 5, 20, 100}) {
      auto est = ml::make_estimator("nmf", {{"n_components", "3"}, {"solver", solver}, {"tol", "0"},
                                            {"max_iter", std::to_string(iters)}});
      est->fit(x.X());
      const float err = state_f32(*est, "reconstruction_err")[0];
      EXPECT_LE(err, last * (1.0f + 1e-6f)) << solver << " max_iter " << iters;
      EXPECT_EQ(ml_common::state_of(*est)["n_iter"].get<int64_t>(), iters);
      last = err;
    }
  }
}

TEST(DecompositionWave3, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = make_data(500, 30, 8, 0.1f, 31), test = make_data(200, 30, 8, 0.1f, 32);
  for (const char* algorithm : {"arpack", "randomized"})
    ml_common::expect_same_bytes_at_threads_123("truncated_svd", {{"algorithm", algorithm}, {"n_components", "5"}},
                                                train.X(), Tensor(), test.X());
  for (const char* kernel : {"linear", "rbf", "poly", "sigmoid", "cosine"})
    ml_common::expect_same_bytes_at_threads_123("kernel_pca", {{"kernel", kernel}, {"n_components", "6"}},
                                                train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("factor_analysis", {{"n_components", "4"}}, train.X(), Tensor(), test.X());
  const Data nn_train = nonnegative_data(400, 25, 5, 0.2f, 33), nn_test = nonnegative_data(150, 25, 5, 0.2f, 34);
  for (const char* solver : {"cd", "mu"})
    for (const char* init : {"nndsvd", "nndsvda", "random"})
      ml_common::expect_same_bytes_at_threads_123("nmf", {{"n_components", "5"}, {"solver", solver}, {"init", init}},
                                                  nn_train.X(), Tensor(), nn_test.X());
  const Data small = make_data(30, 5, 5, 0.1f, 4);
  ml_common::expect_input_change_moves_the_model("truncated_svd", {{"algorithm", "arpack"}}, small, 3.0f);
  ml_common::expect_input_change_moves_the_model("truncated_svd", {}, small, 3.0f);
  ml_common::expect_input_change_moves_the_model("kernel_pca", {{"kernel", "rbf"}}, small, 3.0f);
  ml_common::expect_input_change_moves_the_model("factor_analysis", {{"n_components", "2"}}, small, 3.0f);
  const Data nn_small = nonnegative_data(30, 6, 2, 0.1f, 5);
  ml_common::expect_input_change_moves_the_model("nmf", {{"n_components", "2"}}, nn_small, 3.0f);
  ml_common::expect_input_change_moves_the_model("nmf", {{"n_components", "2"}, {"solver", "mu"}, {"init", "random"}},
                                                 nn_small, 3.0f);
  // The randomized sketch depends on random_state (through the rounding of the components at least).
  auto a = ml::make_estimator("truncated_svd", {{"random_state", "0"}, {"n_iter", "0"}, {"n_oversamples", "1"}});
  auto b = ml::make_estimator("truncated_svd", {{"random_state", "1"}, {"n_iter", "0"}, {"n_oversamples", "1"}});
  a->fit(train.X());
  b->fit(train.X());
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

TEST(DecompositionWave3, StateRoundTrip) {
  const Data x = make_data(40, 6, 6, 0.1f, 9);
  expect_round_trip("truncated_svd", {{"algorithm", "arpack"}, {"n_components", "3"}}, x);
  expect_round_trip("truncated_svd", {{"n_components", "3"}}, x);
  expect_round_trip("kernel_pca", {{"kernel", "rbf"}, {"n_components", "4"}}, x);
  expect_round_trip("kernel_pca", {{"kernel", "cosine"}}, x);
  expect_round_trip("factor_analysis", {{"n_components", "3"}}, x);
  const Data nn = nonnegative_data(40, 6, 2, 0.1f, 9);
  expect_round_trip("nmf", {{"n_components", "2"}}, nn);
  expect_round_trip("nmf", {{"n_components", "2"}, {"solver", "mu"}}, nn);
}

TEST(DecompositionWave3, RefusalsAreNamed) {
  expect_refusal_names([] { ml::make_estimator("truncated_svd", {{"algorithm", "lobpcg"}}); }, "algorithm");
  expect_refusal_names([] { ml::make_estimator("truncated_svd", {{"n_components", "0"}}); }, "n_components");
  expect_refusal_names([] { ml::make_estimator("truncated_svd", {{"n_iter", "-1"}}); }, "n_iter");
  expect_refusal_names([] { ml::make_estimator("kernel_pca", {{"kernel", "chi2"}}); }, "kernel");
  expect_refusal_names([] { ml::make_estimator("kernel_pca", {{"gamma", "-1"}}); }, "gamma");
  expect_refusal_names([] { ml::make_estimator("kernel_pca", {{"n_components", "0"}}); }, "n_components");
  const Data x = make_data(10, 3, 3, 0.1f, 1), other = make_data(5, 2, 2, 0.1f, 2);
  auto wide = ml::make_estimator("truncated_svd", {{"n_components", "4"}});
  expect_refusal_names([&] { wide->fit(x.X()); }, "n_features=3");
  const Data one = make_data(1, 3, 1, 0.1f, 1);
  auto kp1 = ml::make_estimator("kernel_pca");
  expect_refusal_names([&] { kp1->fit(one.X()); }, "n_samples=1");
  Data flat = x;
  for (float& v : flat.x) v = 1.0f;
  auto kpc = ml::make_estimator("kernel_pca");
  expect_refusal_names([&] { kpc->fit(flat.X()); }, "no positive eigenvalue");
  expect_refusal_names([] { ml::make_estimator("factor_analysis", {{"tol", "-1"}}); }, "tol");
  auto fa = ml::make_estimator("factor_analysis", {{"n_components", "4"}});
  expect_refusal_names([&] { fa->fit(x.X()); }, "n_features=3");
  expect_refusal_names([] { ml::make_estimator("nmf", {{"solver", "pg"}}); }, "solver");
  expect_refusal_names([] { ml::make_estimator("nmf", {{"init", "nndsvdar"}}); }, "init");
  auto neg = ml::make_estimator("nmf");
  expect_refusal_names([&] { neg->fit(x.X()); }, "Negative values");
  const Data nn = nonnegative_data(10, 3, 2, 0.1f, 1), nn_other = nonnegative_data(5, 2, 2, 0.1f, 2);
  auto big = ml::make_estimator("nmf", {{"n_components", "5"}, {"init", "nndsvd"}});
  expect_refusal_names([&] { big->fit(nn.X()); }, "n_components");
  auto nmf = ml::make_estimator("nmf");
  expect_refusal_names([&] { nmf->transform(nn.X()); }, "before fit");
  nmf->fit(nn.X());
  expect_refusal_names([&] { nmf->transform(nn_other.X()); }, "nmf");
  expect_refusal_names([&] { nmf->transform(x.X()); }, "Negative values");
  for (const char* name : {"truncated_svd", "kernel_pca", "factor_analysis"})
    ml_common::expect_transform_refusals(name, x.X(), other.X(), name);
}

}  // namespace
}  // namespace bl

namespace bl {
namespace {

// A count of 100 or more given to a number_or_word parameter is kept as "1e+02" (the shortest text
// that reads back to it); every count parameter still reads it as the integer, and a fraction is
// still refused.
TEST(DecompositionParams, CountsOfAHundredOrMoreAreAccepted) {
  const Data x = make_data(150, 120, 4, 0.1f, 41);
  for (const char* name : {"kernel_pca", "factor_analysis", "nmf"}) {
    ml::Params p{{"n_components", "100"}};
    if (std::string(name) == "nmf") p["max_iter"] = "5";
    if (std::string(name) == "factor_analysis") p["max_iter"] = "3";
    auto est = ml::make_estimator(name, p);
    Data pos = x;
    for (float& v : pos.x) v = std::fabs(v);
    est->fit(pos.X());
    EXPECT_EQ(est->transform(pos.X()).dim(1), 100) << name;
    ml::Params bad{{"n_components", "100.5"}};
    expect_refusal_names([&] { ml::make_estimator(name, bad)->fit(pos.X()); }, "expected an integer", name);
  }
}

}  // namespace
}  // namespace bl
