// test_incremental_pca_fast_ica.cpp: incremental_pca and fast_ica against float64 references.
// incremental_pca: wherever the batch updates lose nothing (every component kept, or data of exactly
// the kept rank) the result is the full PCA of the data: components unit, orthogonal eigenvectors of
// the float64 covariance, explained variance its eigenvalues, mean and var the float64 column
// statistics, the sign rule; whiten gives unit-variance projections; gen_batches' joining of a short
// last batch. fast_ica: three independent non-Gaussian sources mixed by a known matrix are recovered
// (each output correlated above 0.999 with one source) by both algorithms and every contrast
// function; unit-variance outputs of mean 0 and variance 1; components times mixing is the identity.
// Both: identical bytes at threads 1, 2 and 3 (rows spanning several column blocks), a changed input
// moves the model, the state round trip and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

// n rows of d features of rank r plus noise, offset 2.
Data low_rank(int64_t n, int64_t d, int64_t r, float noise, uint64_t seed) {
  return ml_common::low_rank_rows(n, d, r, noise, seed, 2.0);
}

// The float64 column means, population variances and covariance (divisor n - 1) of x.
struct Moments {
  std::vector<double> mean, var, cov;
};
Moments moments(const Data& x) {
  const int64_t n = x.n, d = x.d;
  Moments m;
  m.mean.assign(static_cast<size_t>(d), 0.0);
  m.var.assign(static_cast<size_t>(d), 0.0);
  m.cov.assign(static_cast<size_t>(d * d), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) m.mean[j] += x.x[i * d + j] / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b)
        m.cov[a * d + b] += (x.x[i * d + a] - m.mean[a]) * (x.x[i * d + b] - m.mean[b]) / static_cast<double>(n - 1);
  for (int64_t j = 0; j < d; ++j) m.var[j] = m.cov[j * d + j] * static_cast<double>(n - 1) / static_cast<double>(n);
  return m;
}

// The fitted incremental_pca is the full PCA of x: eigenpairs of the float64 covariance.
void expect_full_pca(const ml::Estimator& est, const Data& x, int64_t k, const std::string& what) {
  const int64_t d = x.d;
  const Moments m = moments(x);
  std::vector<float> v = state_f32(est, "components"), ev = state_f32(est, "explained_variance"),
                     mean = state_f32(est, "mean"), var = state_f32(est, "var");
  ASSERT_EQ(static_cast<int64_t>(ev.size()), k) << what;
  for (int64_t j = 0; j < d; ++j) {
    EXPECT_NEAR(mean[j], m.mean[j], 1e-5 * (1.0 + std::fabs(m.mean[j]))) << what << " mean " << j;
    EXPECT_NEAR(var[j], m.var[j], 1e-5 * (1.0 + m.var[j])) << what << " var " << j;
  }
  for (int64_t t = 0; t < k; ++t) {
    if (t > 0) EXPECT_GE(ev[t - 1], ev[t]) << what;
    double res = 0.0;
    int64_t big = 0;
    for (int64_t a = 0; a < d; ++a) {
      double r = -static_cast<double>(ev[t]) * v[t * d + a];
      for (int64_t b = 0; b < d; ++b) r += m.cov[a * d + b] * v[t * d + b];
      res += r * r;
      if (std::fabs(v[t * d + a]) > std::fabs(v[t * d + big])) big = a;
    }
    EXPECT_LT(std::sqrt(res), 2e-5 * ev[0]) << what << " component " << t;
    EXPECT_GT(v[t * d + big], 0.0f) << what << " sign rule, component " << t;
    for (int64_t u = 0; u <= t; ++u) {
      double dot = 0.0;
      for (int64_t a = 0; a < d; ++a) dot += static_cast<double>(v[t * d + a]) * v[u * d + a];
      EXPECT_NEAR(dot, t == u ? 1.0 : 0.0, 1e-5) << what << " " << t << " " << u;
    }
  }
}

TEST(IncrementalPCA, KeepingEveryComponentEqualsFullPCA) {
  const Data x = low_rank(90, 6, 6, 0.1f, 3);
  for (const char* batch : {"none", "7", "13", "90"}) {
    auto est = ml::make_estimator("incremental_pca", {{"batch_size", batch}});
    est->fit(x.X());
    expect_full_pca(*est, x, 6, std::string("batch_size=") + batch);
    EXPECT_EQ(ml_common::state_of(*est)["n_samples_seen"].get<int64_t>(), 90);
  }
}

TEST(IncrementalPCA, DataOfTheKeptRankEqualsFullPCA) {
  const Data x = low_rank(100, 8, 3, 0.0f, 5);
  auto est = ml::make_estimator("incremental_pca", {{"n_components", "3"}, {"batch_size", "11"}});
  est->fit(x.X());
  expect_full_pca(*est, x, 3, "rank 3, 3 components");
  // The dropped components carry no variance.
  EXPECT_NEAR(state_f32(*est, "noise_variance_value")[0], 0.0, 1e-5);
  // A short last batch (100 = 9 * 11 + 1 < 11 + 3) is joined to the one before.
  EXPECT_EQ(ml_common::state_of(*est)["n_samples_seen"].get<int64_t>(), 100);
}

TEST(IncrementalPCA, WhitenGivesUnitVarianceProjections) {
  const Data x = low_rank(120, 5, 5, 0.2f, 7);
  auto est = ml::make_estimator("incremental_pca", {{"whiten", "true"}, {"batch_size", "25"}});
  est->fit(x.X());
  std::vector<float> z = est->transform(x.X()).to_vector<float>();
  for (int64_t t = 0; t < 5; ++t) {
    double m = 0.0, q = 0.0;
    for (int64_t i = 0; i < x.n; ++i) m += z[i * 5 + t] / static_cast<double>(x.n);
    for (int64_t i = 0; i < x.n; ++i) q += (z[i * 5 + t] - m) * (z[i * 5 + t] - m) / static_cast<double>(x.n - 1);
    EXPECT_NEAR(m, 0.0, 1e-5) << t;
    EXPECT_NEAR(q, 1.0, 1e-4) << t;
  }
}

// Three independent non-Gaussian sources (a square wave, a sawtooth, uniform noise) mixed into 4
// features by a fixed matrix.
struct Mixed {
  Data x;
  std::vector<double> sources;  // [n, 3]
};
Mixed mixed_sources(int64_t n, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  const double a[3][4] = {{1.0, 0.5, -0.3, 0.8}, {0.4, -1.2, 0.7, 0.2}, {-0.6, 0.3, 1.1, 0.5}};
  Mixed m;
  m.x.n = n;
  m.x.d = 4;
  for (int64_t i = 0; i < n; ++i) {
    const double s[3] = {(i / 37) % 2 == 0 ? 1.0 : -1.0, static_cast<double>(i % 53) / 26.0 - 1.0,
                         static_cast<double>(rng.uniform_pm1())};
    for (double v : s) m.sources.push_back(v);
    m.x.y.push_back(0.0f);
    for (int64_t j = 0; j < 4; ++j)
      m.x.x.push_back(static_cast<float>(a[0][j] * s[0] + a[1][j] * s[1] + a[2][j] * s[2] + 0.5 * j));
  }
  return m;
}

double abs_correlation(const std::vector<float>& z, int64_t k, int64_t t, const std::vector<double>& s, int64_t u,
                       int64_t n) {
  double mz = 0.0, ms = 0.0, zz = 0.0, ss = 0.0, zs = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    mz += z[i * k + t] / static_cast<double>(n);
    ms += s[i * 3 + u] / static_cast<double>(n);
  }
  for (int64_t i = 0; i < n; ++i) {
    const double a = z[i * k + t] - mz, b = s[i * 3 + u] - ms;
    zz += a * a;
    ss += b * b;
    zs += a * b;
  }
  return std::fabs(zs) / std::sqrt(zz * ss);
}

TEST(FastICA, RecoversIndependentSources) {
  const Mixed m = mixed_sources(2000, 11);
  for (const char* algorithm : {"parallel", "deflation"})
    for (const char* fun : {"logcosh", "exp", "cube"}) {
      const std::string what = std::string(algorithm) + " " + fun;
      auto est = ml::make_estimator("fast_ica", {{"n_components", "3"}, {"algorithm", algorithm}, {"fun", fun}});
      est->fit(m.x.X());
      std::vector<float> z = est->transform(m.x.X()).to_vector<float>();
      std::vector<bool> used(3, false);
      for (int64_t t = 0; t < 3; ++t) {
        double best = 0.0;
        int64_t arg = 0;
        for (int64_t u = 0; u < 3; ++u) {
          const double c = abs_correlation(z, 3, t, m.sources, u, m.x.n);
          if (c > best) best = c, arg = u;
        }
        EXPECT_GT(best, 0.999) << what << " output " << t;
        EXPECT_FALSE(used[arg]) << what << " two outputs found source " << arg;
        used[arg] = true;
        // unit-variance: mean 0 and population variance 1 on the training rows.
        double mz = 0.0, q = 0.0;
        for (int64_t i = 0; i < m.x.n; ++i) mz += z[i * 3 + t] / static_cast<double>(m.x.n);
        for (int64_t i = 0; i < m.x.n; ++i) q += (z[i * 3 + t] - mz) * (z[i * 3 + t] - mz) / static_cast<double>(m.x.n);
        EXPECT_NEAR(mz, 0.0, 1e-5) << what;
        EXPECT_NEAR(q, 1.0, 1e-4) << what;
      }
      // components [3, 4] times mixing [4, 3] is the identity.
      std::vector<float> w = state_f32(*est, "components"), a = state_f32(*est, "mixing");
      for (int64_t s = 0; s < 3; ++s)
        for (int64_t t = 0; t < 3; ++t) {
          double v = 0.0;
          for (int64_t j = 0; j < 4; ++j) v += static_cast<double>(w[s * 4 + j]) * a[j * 3 + t];
          EXPECT_NEAR(v, s == t ? 1.0 : 0.0, 1e-5) << what;
        }
    }
}

TEST(FastICA, WithoutWhiteningKeepsEveryFeatureAndMaxIterStops) {
  const Mixed m = mixed_sources(600, 13);
  auto est = ml::make_estimator("fast_ica", {{"whiten", "false"}, {"n_components", "2"}});
  est->fit(m.x.X());
  EXPECT_EQ(est->transform(m.x.X()).dim(1), 4);
  nlohmann::json st = ml_common::state_of(*est);
  EXPECT_FALSE(st.contains("mean"));
  auto capped = ml::make_estimator("fast_ica", {{"max_iter", "2"}, {"tol", "0"}});
  capped->fit(m.x.X());
  EXPECT_EQ(ml_common::state_of(*capped)["n_iter"].get<int64_t>(), 2);
}

TEST(IncrementalPcaFastIca, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = low_rank(1500, 12, 5, 0.1f, 31), test = low_rank(300, 12, 5, 0.1f, 32);
  for (const char* batch : {"none", "100"})
    ml_common::expect_same_bytes_at_threads_123("incremental_pca", {{"n_components", "4"}, {"batch_size", batch}},
                                                train.X(), Tensor(), test.X());
  for (const char* algorithm : {"parallel", "deflation"})
    for (const char* fun : {"logcosh", "exp", "cube"})
      ml_common::expect_same_bytes_at_threads_123("fast_ica", {{"n_components", "4"}, {"algorithm", algorithm}, {"fun", fun}},
                                                  train.X(), Tensor(), test.X());
  const Data small = low_rank(40, 5, 5, 0.1f, 4);
  ml_common::expect_input_change_moves_the_model("incremental_pca", {{"n_components", "2"}, {"batch_size", "10"}}, small,
                                                 3.0f);
  ml_common::expect_input_change_moves_the_model("fast_ica", {{"n_components", "3"}}, small, 3.0f);
  // The Philox initial unmixing depends on random_state.
  auto a = ml::make_estimator("fast_ica", {{"random_state", "0"}, {"max_iter", "1"}});
  auto b = ml::make_estimator("fast_ica", {{"random_state", "1"}, {"max_iter", "1"}});
  a->fit(train.X());
  b->fit(train.X());
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

TEST(IncrementalPcaFastIca, StateRoundTrip) {
  // Default parameters through the family check; others through the model file text, which carries them.
  const Data x = low_rank(60, 6, 6, 0.1f, 9), test = low_rank(20, 6, 6, 0.1f, 10);
  const std::vector<std::pair<std::string, ml::Params>> cases = {
      {"incremental_pca", {}},
      {"incremental_pca", {{"n_components", "3"}, {"batch_size", "15"}}},
      {"incremental_pca", {{"whiten", "true"}}},
      {"fast_ica", {}},
      {"fast_ica", {{"n_components", "3"}, {"algorithm", "deflation"}}},
      {"fast_ica", {{"whiten", "false"}}}};
  for (const auto& [name, params] : cases) {
    auto est = ml::make_estimator(name, params);
    est->fit(x.X());
    if (params.empty()) ml_common::expect_transformer_state_round_trip(*est, test.X());
    else ml_common::expect_model_text_round_trip(*est, test.X());
  }
}

TEST(IncrementalPcaFastIca, RefusalsAreNamed) {
  const Data x = low_rank(10, 3, 3, 0.1f, 1), other = low_rank(5, 2, 2, 0.1f, 2), one = low_rank(1, 3, 1, 0.1f, 1);
  expect_refusal_names([] { ml::make_estimator("incremental_pca", {{"batch_size", "0"}}); }, "batch_size");
  expect_refusal_names([] { ml::make_estimator("incremental_pca", {{"n_components", "0"}}); }, "n_components");
  auto frac = ml::make_estimator("incremental_pca", {{"n_components", "1.5"}});
  expect_refusal_names([&] { frac->fit(x.X()); }, "expected an integer");
  auto wide = ml::make_estimator("incremental_pca", {{"n_components", "4"}});
  expect_refusal_names([&] { wide->fit(x.X()); }, "n_features=3");
  auto thin = ml::make_estimator("incremental_pca", {{"n_components", "3"}, {"batch_size", "2"}});
  expect_refusal_names([&] { thin->fit(x.X()); }, "batch_size");
  expect_refusal_names([] { ml::make_estimator("fast_ica", {{"algorithm", "symmetric"}}); }, "algorithm");
  expect_refusal_names([] { ml::make_estimator("fast_ica", {{"fun", "tanh"}}); }, "fun");
  expect_refusal_names([] { ml::make_estimator("fast_ica", {{"whiten", "true"}}); }, "whiten");
  expect_refusal_names([] { ml::make_estimator("fast_ica", {{"tol", "-1"}}); }, "tol");
  auto big = ml::make_estimator("fast_ica", {{"n_components", "4"}});
  expect_refusal_names([&] { big->fit(x.X()); }, "min(n_samples, n_features) = 3");
  for (const char* name : {"incremental_pca", "fast_ica"}) {
    auto est = ml::make_estimator(name);
    expect_refusal_names([&] { est->fit(one.X()); }, "n_samples=1", name);
    expect_refusal_names([&] { est->transform(x.X()); }, "before fit", name);
    est->fit(x.X());
    expect_refusal_names([&] { est->transform(other.X()); }, name, name);
  }
}

}  // namespace
}  // namespace bl
