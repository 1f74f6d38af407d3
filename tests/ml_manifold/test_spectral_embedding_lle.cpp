// test_spectral_embedding_lle.cpp: spectral_embedding and locally_linear_embedding against float64
// references built here from their definitions: the affinity (rbf or symmetrized nearest neighbors),
// its normalized form and the degree-scaled eigenvectors (the first dropped, the sign rule applied);
// the barycenter weights, M = (I - W)^T (I - W) (method=ltsa: the sum of the neighborhoods'
// I - G G^T) and its bottom eigenvectors, the reconstruction error and the transform of new rows. The eigenvectors come from a cyclic Jacobi solver written
// here (another algorithm than the library's Householder + QL). Two far blobs are split by the
// first spectral axis; a line unrolls monotonically under LLE. Identical bytes at threads 1, 2 and 3
// with the sabotage arm, the state round trip and each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;

using ml_common::state_f32;

Data random_rows(int64_t n, int64_t d, uint64_t seed, double shift_half = 0.0) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < d; ++f)
      out.x.push_back(static_cast<float>(rng.uniform_pm1() + (i >= n / 2 ? shift_half : 0.0)));
  out.y.assign(static_cast<size_t>(n), 0.0f);
  return out;
}

// Eigen-decomposition of the symmetric a [n, n] by cyclic Jacobi rotations: values ascending and
// vecs[t][i] the unit eigenvector of values[t].
void jacobi_eigen(std::vector<double> a, int64_t n, std::vector<double>& values, std::vector<std::vector<double>>& vecs) {
  std::vector<double> v(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (std::fabs(apq) < 1e-300) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int64_t k = 0; k < n; ++k) {
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return a[x * n + x] < a[y * n + y]; });
  values.clear();
  vecs.clear();
  for (int64_t t : order) {
    values.push_back(a[t * n + t]);
    std::vector<double> col(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) col[i] = v[i * n + t];
    vecs.push_back(col);
  }
}

double sq_dist(const Data& x, int64_t i, const std::vector<float>& q, int64_t r, int64_t d) {
  double s = 0.0;
  for (int64_t f = 0; f < d; ++f) {
    const double v = static_cast<double>(x.x[i * d + f]) - static_cast<double>(q[r * d + f]);
    s += v * v;
  }
  return s;
}

// The k rows of x nearest to row r of q (skip: an index left out, -1 none), lower index first on ties.
std::vector<int64_t> knn(const Data& x, const std::vector<float>& q, int64_t r, int64_t k, int64_t skip) {
  std::vector<std::pair<double, int64_t>> all;
  for (int64_t j = 0; j < x.n; ++j)
    if (j != skip) all.push_back({sq_dist(x, j, q, r, x.d), j});
  std::sort(all.begin(), all.end());
  std::vector<int64_t> out;
  for (int64_t t = 0; t < k; ++t) out.push_back(all[t].second);
  return out;
}

// Column t of z [n, k] against ref (float64), up to one sign: max |z - sign ref| <= tol max |ref|.
void expect_column(const std::vector<float>& z, int64_t k, int64_t t, const std::vector<double>& ref, double tol,
                   const std::string& what) {
  double dot = 0.0, scale = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    dot += z[i * k + t] * ref[i];
    scale = std::max(scale, std::fabs(ref[i]));
  }
  const double sign = dot < 0.0 ? -1.0 : 1.0;
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(z[i * k + t], sign * ref[i], tol * scale) << what << " row " << i;
}

// The float64 spectral embedding (columns 1..k of the degree-scaled bottom Laplacian vectors).
std::vector<std::vector<double>> spectral_reference(const Data& x, bool rbf, double gamma, int64_t nn, int64_t k) {
  const int64_t n = x.n;
  std::vector<double> A(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (rbf) {
      for (int64_t j = 0; j < n; ++j) A[i * n + j] = std::exp(-gamma * sq_dist(x, i, x.x, j, x.d));
    } else {
      for (int64_t j : knn(x, x.x, i, nn, -1)) {
        A[i * n + j] += 0.5;
        A[j * n + i] += 0.5;
      }
    }
  }
  std::vector<double> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double deg = 0.0;
    for (int64_t j = 0; j < n; ++j) deg += j == i ? 0.0 : A[i * n + j];
    s[i] = std::sqrt(deg);
  }
  std::vector<double> L(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) L[i * n + j] = (i == j ? 1.0 : 0.0) - (i == j ? 0.0 : A[i * n + j] / (s[i] * s[j]));
  std::vector<double> values;
  std::vector<std::vector<double>> vecs;
  jacobi_eigen(L, n, values, vecs);
  std::vector<std::vector<double>> out;
  for (int64_t t = 1; t <= k; ++t) {
    std::vector<double> c(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) c[i] = vecs[t][i] / s[i];
    out.push_back(c);
  }
  return out;
}

// Barycenter weights of row r of q on the rows nb of x (float64, Gaussian elimination).
std::vector<double> weights_reference(const Data& x, const std::vector<float>& q, int64_t r,
                                      const std::vector<int64_t>& nb, double reg) {
  const int64_t k = static_cast<int64_t>(nb.size()), d = x.d;
  std::vector<double> G(static_cast<size_t>(k * k)), w(static_cast<size_t>(k), 1.0);
  double trace = 0.0;
  for (int64_t a = 0; a < k; ++a)
    for (int64_t b = 0; b < k; ++b) {
      double s = 0.0;
      for (int64_t f = 0; f < d; ++f)
        s += (static_cast<double>(x.x[nb[a] * d + f]) - q[r * d + f]) * (static_cast<double>(x.x[nb[b] * d + f]) - q[r * d + f]);
      G[a * k + b] = s;
      if (a == b) trace += s;
    }
  for (int64_t a = 0; a < k; ++a) G[a * k + a] += trace > 0 ? reg * trace : reg;
  for (int64_t c = 0; c < k; ++c)
    for (int64_t rr = c + 1; rr < k; ++rr) {
      const double f = G[rr * k + c] / G[c * k + c];
      for (int64_t j = c; j < k; ++j) G[rr * k + j] -= f * G[c * k + j];
      w[rr] -= f * w[c];
    }
  for (int64_t c = k - 1; c >= 0; --c) {
    for (int64_t j = c + 1; j < k; ++j) w[c] -= G[c * k + j] * w[j];
    w[c] /= G[c * k + c];
  }
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& v : w) v /= sum;
  return w;
}

TEST(SpectralEmbedding, MatchesTheFloat64Reference) {
  const Data x = random_rows(60, 3, 11);
  struct Case {
    const char* affinity;
    double gamma;
    int64_t nn;
  };
  for (const Case& c : {Case{"rbf", 0.5, 0}, Case{"nearest_neighbors", 0.0, 8}}) {
    ml::Params p = {{"affinity", c.affinity}, {"n_components", "3"}};
    if (c.nn > 0) p["n_neighbors"] = std::to_string(c.nn);
    else p["gamma"] = "0.5";
    auto est = ml::make_estimator("spectral_embedding", p);
    est->fit(x.X());
    const std::vector<float> z = state_f32(*est, "embedding");
    const auto ref = spectral_reference(x, c.nn == 0, c.gamma, c.nn, 3);
    for (int64_t t = 0; t < 3; ++t) expect_column(z, 3, t, ref[t], 2e-5, std::string(c.affinity) + " column " + std::to_string(t));
    // The sign rule: each column's entry of largest magnitude is positive.
    for (int64_t t = 0; t < 3; ++t) {
      int64_t arg = 0;
      for (int64_t i = 1; i < x.n; ++i)
        if (std::fabs(z[i * 3 + t]) > std::fabs(z[arg * 3 + t])) arg = i;
      EXPECT_GT(z[arg * 3 + t], 0.0f) << c.affinity << " column " << t;
    }
  }
  // Defaults: gamma none = 1 / n_features, n_neighbors none = max(n / 10, 1).
  auto rbf = ml::make_estimator("spectral_embedding", {{"affinity", "rbf"}, {"n_components", "1"}});
  rbf->fit(x.X());
  expect_column(state_f32(*rbf, "embedding"), 1, 0, spectral_reference(x, true, 1.0 / 3.0, 0, 1)[0], 2e-5, "gamma none");
  auto knn6 = ml::make_estimator("spectral_embedding", {{"n_components", "1"}});
  knn6->fit(x.X());
  auto knn6b = ml::make_estimator("spectral_embedding", {{"n_components", "1"}, {"n_neighbors", "6"}});
  knn6b->fit(x.X());
  EXPECT_EQ(state_f32(*knn6, "embedding"), state_f32(*knn6b, "embedding"));
}

TEST(SpectralEmbedding, FarBlobsSplitOnTheFirstAxisAndTransformTakesTheNearestRow) {
  const Data x = random_rows(40, 2, 13, 6.0);
  auto est = ml::make_estimator("spectral_embedding", {{"affinity", "rbf"}, {"gamma", "1"}, {"n_components", "1"}});
  est->fit(x.X());
  const std::vector<float> z = state_f32(*est, "embedding");
  for (int64_t i = 1; i < 20; ++i) EXPECT_EQ(z[i] > 0, z[0] > 0) << i;
  for (int64_t i = 20; i < 40; ++i) EXPECT_NE(z[i] > 0, z[0] > 0) << i;
  EXPECT_EQ(est->transform(x.X()).to_vector<float>(), z);
}

TEST(LocallyLinearEmbedding, MatchesTheFloat64Reference) {
  const Data x = random_rows(50, 3, 17);
  const int64_t n = x.n, nn = 6, k = 2;
  const double reg = 1e-3;
  auto est = ml::make_estimator("locally_linear_embedding", {{"n_neighbors", "6"}, {"n_components", "2"}});
  est->fit(x.X());
  // W, M = (I - W)^T (I - W) and its eigenvectors 1..k in float64.
  std::vector<double> IW(static_cast<size_t>(n * n), 0.0), M(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    IW[i * n + i] = 1.0;
    const std::vector<int64_t> nb = knn(x, x.x, i, nn, i);
    const std::vector<double> w = weights_reference(x, x.x, i, nb, reg);
    for (int64_t a = 0; a < nn; ++a) IW[i * n + nb[a]] -= w[a];
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < n; ++r) M[i * n + j] += IW[r * n + i] * IW[r * n + j];
  std::vector<double> values;
  std::vector<std::vector<double>> vecs;
  jacobi_eigen(M, n, values, vecs);
  const std::vector<float> z = state_f32(*est, "embedding");
  for (int64_t t = 0; t < k; ++t) expect_column(z, k, t, vecs[t + 1], 1e-5, "column " + std::to_string(t));
  const double err = state_f32(*est, "reconstruction_error")[0];
  EXPECT_NEAR(err, values[1] + values[2], 1e-6 * (values[1] + values[2]) + 1e-12);
  // transform of new rows: the barycenter weights on the nn nearest training rows (self included).
  const Data q = random_rows(10, 3, 19);
  const std::vector<float> got = est->transform(q.X()).to_vector<float>();
  for (int64_t t = 0; t < k; ++t) {
    double dot = 0.0;
    for (int64_t i = 0; i < n; ++i) dot += z[i * k + t] * vecs[t + 1][i];
    const double sign = dot < 0 ? -1.0 : 1.0;
    for (int64_t r = 0; r < q.n; ++r) {
      const std::vector<int64_t> nb = knn(x, q.x, r, nn, -1);
      const std::vector<double> w = weights_reference(x, q.x, r, nb, reg);
      double want = 0.0;
      for (int64_t a = 0; a < nn; ++a) want += w[a] * sign * vecs[t + 1][nb[a]];
      EXPECT_NEAR(got[r * k + t], want, 1e-5) << "transform row " << r << " column " << t;
    }
  }
}

TEST(LocallyLinearEmbedding, LtsaMatchesTheFloat64Reference) {
  const Data x = random_rows(50, 3, 41);
  const int64_t n = x.n, nn = 8, k = 2;
  auto est = ml::make_estimator("locally_linear_embedding", {{"n_neighbors", "8"}, {"method", "ltsa"}});
  est->fit(x.X());
  // M = sum over rows of I - G G^T on their neighborhoods, G = [1 / sqrt(nn), top-k eigenvectors of
  // the centered neighbors' Gram matrix].
  std::vector<double> M(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t> nb = knn(x, x.x, i, nn, i);
    std::vector<double> mean(3, 0.0), C(static_cast<size_t>(nn * nn), 0.0);
    for (int64_t a = 0; a < nn; ++a)
      for (int64_t f = 0; f < 3; ++f) mean[f] += x.x[nb[a] * 3 + f] / static_cast<double>(nn);
    for (int64_t a = 0; a < nn; ++a)
      for (int64_t b = 0; b < nn; ++b)
        for (int64_t f = 0; f < 3; ++f) C[a * nn + b] += (x.x[nb[a] * 3 + f] - mean[f]) * (x.x[nb[b] * 3 + f] - mean[f]);
    std::vector<double> lv;
    std::vector<std::vector<double>> lvec;
    jacobi_eigen(C, nn, lv, lvec);
    for (int64_t a = 0; a < nn; ++a)
      for (int64_t b = 0; b < nn; ++b) {
        double g = 1.0 / static_cast<double>(nn);
        for (int64_t t = 0; t < k; ++t) g += lvec[nn - 1 - t][a] * lvec[nn - 1 - t][b];
        M[nb[a] * n + nb[b]] += (a == b ? 1.0 : 0.0) - g;
      }
  }
  std::vector<double> values;
  std::vector<std::vector<double>> vecs;
  jacobi_eigen(M, n, values, vecs);
  const std::vector<float> z = state_f32(*est, "embedding");
  for (int64_t t = 0; t < k; ++t) expect_column(z, k, t, vecs[t + 1], 1e-5, "ltsa column " + std::to_string(t));
  EXPECT_NEAR(state_f32(*est, "reconstruction_error")[0], values[1] + values[2], 1e-6 * (values[1] + values[2]) + 1e-12);
}

TEST(LocallyLinearEmbedding, ALineUnrollsMonotonically) {
  Data line;
  line.n = 40;
  line.d = 3;
  for (int64_t i = 0; i < 40; ++i) {
    const double t = 0.05 * static_cast<double>(i);
    for (double v : {1.0 + 2.0 * t, -1.0 + t * t, 0.5 - 2.0 * t}) line.x.push_back(static_cast<float>(v));
  }
  line.y.assign(40, 0.0f);
  auto est = ml::make_estimator("locally_linear_embedding", {{"n_components", "1"}, {"n_neighbors", "4"}});
  est->fit(line.X());
  const std::vector<float> z = state_f32(*est, "embedding");
  const bool up = z[1] > z[0];
  for (int64_t i = 1; i < 40; ++i) EXPECT_EQ(z[i] > z[i - 1], up) << i;
}

TEST(SpectralEmbeddingLle, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data x = random_rows(300, 3, 23), test = random_rows(40, 3, 29);
  ml_common::expect_same_bytes_at_threads_123("spectral_embedding", {{"n_components", "3"}}, x.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("spectral_embedding", {{"affinity", "rbf"}}, x.X(), Tensor(), test.X());
  for (const char* method : {"standard", "ltsa"})
    ml_common::expect_same_bytes_at_threads_123("locally_linear_embedding", {{"n_neighbors", "8"}, {"method", method}},
                                                x.X(), Tensor(), test.X());
  ml_common::expect_input_change_moves_the_model("spectral_embedding", {{"affinity", "rbf"}}, test, 3.0f);
  ml_common::expect_input_change_moves_the_model("locally_linear_embedding", {}, test, 3.0f);
  ml_common::expect_input_change_moves_the_model("locally_linear_embedding", {{"method", "ltsa"}}, test, 3.0f);
}

TEST(SpectralEmbeddingLle, StateRoundTripAndRefusals) {
  const Data x = random_rows(40, 3, 31), small = random_rows(4, 3, 37);
  for (const char* name : {"spectral_embedding", "locally_linear_embedding"}) {
    auto est = ml::make_estimator(name);
    EXPECT_NE(error_of([&] { est->transform(x.X()); }).find("before fit"), std::string::npos) << name;
    est->fit(x.X());
    ml_common::expect_transformer_state_round_trip(*est, x.X());
    EXPECT_NE(error_of([&] { est->transform(random_rows(3, 2, 1).X()); }).find(name), std::string::npos) << name;
  }
  for (const char* method : {"modified", "hessian"})
    EXPECT_NE(error_of([&] { ml::make_estimator("locally_linear_embedding", {{"method", method}}); }).find("method"),
              std::string::npos)
        << method;
  EXPECT_NE(error_of([] { ml::make_estimator("spectral_embedding", {{"affinity", "precomputed"}}); }).find("affinity"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("spectral_embedding", {{"gamma", "0"}}); }).find("gamma"), std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("locally_linear_embedding", {{"reg", "-1"}}); }).find("reg"),
            std::string::npos);
  auto lle = ml::make_estimator("locally_linear_embedding");
  EXPECT_NE(error_of([&] { lle->fit(small.X()); }).find("n_neighbors=5"), std::string::npos);
  auto ltsa = ml::make_estimator("locally_linear_embedding", {{"method", "ltsa"}, {"n_neighbors", "2"}, {"n_components", "3"}});
  EXPECT_NE(error_of([&] { ltsa->fit(x.X()); }).find("method=ltsa"), std::string::npos);
  auto wide = ml::make_estimator("locally_linear_embedding", {{"n_components", "4"}});
  EXPECT_NE(error_of([&] { wide->fit(x.X()); }).find("n_features=3"), std::string::npos);
  auto se = ml::make_estimator("spectral_embedding", {{"n_neighbors", "2.5"}});
  EXPECT_NE(error_of([&] { se->fit(x.X()); }).find("n_neighbors"), std::string::npos);
  auto se_many = ml::make_estimator("spectral_embedding", {{"n_components", "4"}});
  EXPECT_NE(error_of([&] { se_many->fit(small.X()); }).find("n_components=4"), std::string::npos);
}

}  // namespace
}  // namespace bl
