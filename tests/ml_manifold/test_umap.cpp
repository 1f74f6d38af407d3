// test_umap.cpp: umap against references written here from the definitions: the fuzzy graph of 10
// points (dense distances, a sort, the bandwidth bisection with std::exp, the fuzzy union on dense
// matrices), the curve parameters a and b (the least-squares optimum: the gradient of the squared
// error, by central differences with std::pow, vanishes there; the known values at the defaults).
// Far blobs stay apart in the embedding (both inits, the dense and the iterative spectral start);
// identical bytes at threads 1, 2 and 3 with the sabotage arm, the state round trip and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml/manifold/umap.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::state_f32;

// The symmetric fuzzy graph [n, n] of the rows of x with k neighbors (the row itself counted).
std::vector<double> fuzzy_reference(const Data& x, int64_t k) {
  const int64_t n = x.n;
  std::vector<double> dist(static_cast<size_t>(n * n), 0.0), w(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t f = 0; f < x.d; ++f) {
        const double v = static_cast<double>(x.x[i * x.d + f]) - x.x[j * x.d + f];
        s += v * v;
      }
      dist[i * n + j] = std::sqrt(s);
    }
  double mean_all = 0.0;
  std::vector<std::vector<int64_t>> near(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return dist[i * n + a] < dist[i * n + b]; });
    near[i].assign(order.begin(), order.begin() + k);  // distinct rows: the row itself first
    for (int64_t j : near[i]) mean_all += dist[i * n + j];
  }
  mean_all /= static_cast<double>(n * k);
  for (int64_t i = 0; i < n; ++i) {
    const double rho = dist[i * n + near[i][1]];
    double mean = 0.0;
    for (int64_t j : near[i]) mean += dist[i * n + j];
    mean /= static_cast<double>(k);
    const double target = std::log2(static_cast<double>(k));
    double lo = 0.0, hi = INFINITY, sigma = 1.0;
    for (int it = 0; it < 64; ++it) {
      double psum = 0.0;
      for (int64_t r = 1; r < k; ++r) psum += std::exp(-std::max(dist[i * n + near[i][r]] - rho, 0.0) / sigma);
      if (std::fabs(psum - target) < 1e-5) break;
      if (psum > target) hi = sigma, sigma = (lo + hi) / 2.0;
      else lo = sigma, sigma = std::isinf(hi) ? sigma * 2.0 : (lo + hi) / 2.0;
    }
    sigma = std::max(sigma, 1e-3 * mean);
    for (int64_t r = 1; r < k; ++r)
      w[i * n + near[i][r]] = std::exp(-std::max(dist[i * n + near[i][r]] - rho, 0.0) / sigma);
  }
  std::vector<double> out(w.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = w[i * n + j] + w[j * n + i] - w[i * n + j] * w[j * n + i];
  return out;
}

TEST(Umap, FuzzyGraphOfTenPointsMatchesTheReference) {
  test_rng::SplitMix64 rng(21);
  Data x;
  x.n = 10;
  x.d = 3;
  for (int i = 0; i < 30; ++i) x.x.push_back(rng.uniform_pm1() * 2.0f);
  for (int64_t k : {3, 5, 9}) {
    const ml::umap::Knn knn = ml::umap::exact_knn(x.x, x.n, x.d, k);
    const ml::umap::Bandwidths bw = ml::umap::smooth_knn_dist(knn);
    const ml::umap::Graph g = ml::umap::fuzzy_simplicial_set(knn, bw);
    std::vector<double> dense(static_cast<size_t>(x.n * x.n), 0.0);
    for (int64_t i = 0; i < x.n; ++i) {
      EXPECT_EQ(knn.idx[i * k], i);
      for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e) {
        if (e > g.row_ptr[i]) EXPECT_LT(g.col[e - 1], g.col[e]);
        EXPECT_NE(g.col[e], i);
        EXPECT_GT(g.val[e], 0.0);
        dense[i * x.n + g.col[e]] = g.val[e];
      }
    }
    const std::vector<double> ref = fuzzy_reference(x, k);
    for (int64_t i = 0; i < x.n; ++i)
      for (int64_t j = 0; j < x.n; ++j) {
        EXPECT_NEAR(dense[i * x.n + j], ref[i * x.n + j], 1e-12) << "k=" << k << " " << i << "," << j;
        EXPECT_EQ(dense[i * x.n + j], dense[j * x.n + i]);  // exactly symmetric
      }
    // The lists of new rows (transform): the same rows without the skip, so a training row finds
    // itself first at distance 0; rho = 0 and sigma by the same search.
    const ml::umap::Knn q = ml::umap::query_knn(x.x, x.n, x.d, x.x, x.n, k);
    EXPECT_EQ(q.idx, knn.idx);
    EXPECT_EQ(q.dist, knn.dist);
    const ml::umap::Bandwidths zero = ml::umap::smooth_knn_dist(q, true);
    for (int64_t i = 0; i < x.n; ++i) {
      EXPECT_EQ(zero.rho[i], 0.0);
      EXPECT_GT(bw.rho[i], 0.0);
      double psum = 0.0;
      for (int64_t r = 1; r < k; ++r) psum += std::exp(-q.dist[i * k + r] / zero.sigma[i]);
      if (zero.sigma[i] > 1e-3) EXPECT_NEAR(psum, std::log2(static_cast<double>(k)), 1e-5) << i;
    }
    // Each row's nearest neighbour has membership 1 (d = rho) and so does its union entry.
    for (int64_t i = 0; i < x.n; ++i) EXPECT_NEAR(dense[i * x.n + knn.idx[i * k + 1]], 1.0, 1e-15);
  }
}

double curve_sse(double a, double b, double spread, double min_dist) {
  double s = 0.0;
  for (int i = 0; i < 300; ++i) {
    const double xv = i == 299 ? 3.0 * spread : i * (3.0 * spread / 299.0);
    const double yv = xv < min_dist ? 1.0 : std::exp(-(xv - min_dist) / spread);
    const double r = 1.0 / (1.0 + a * std::pow(xv, 2.0 * b)) - yv;
    s += r * r;
  }
  return s;
}

TEST(Umap, CurveParametersAreTheLeastSquaresOptimum) {
  const ml::umap::CurveAB def = ml::umap::find_ab_params(1.0, 0.1);
  EXPECT_NEAR(def.a, 1.5769, 1e-4);
  EXPECT_NEAR(def.b, 0.8951, 1e-4);
  for (const auto& [spread, min_dist] : std::vector<std::pair<double, double>>{{1.0, 0.1}, {1.0, 0.5}, {2.0, 0.0},
                                                                               {0.5, 0.25}}) {
    const ml::umap::CurveAB ab = ml::umap::find_ab_params(spread, min_dist);
    const double h = 1e-6, f0 = curve_sse(ab.a, ab.b, spread, min_dist);
    const double sp = spread, md = min_dist;  // (a lambda does not capture structured bindings before C++20)
    auto sse = [sp, md](double a, double b) { return curve_sse(a, b, sp, md); };
    const double ga = (sse(ab.a + h, ab.b) - sse(ab.a - h, ab.b)) / (2 * h);
    const double gb = (sse(ab.a, ab.b + h) - sse(ab.a, ab.b - h)) / (2 * h);
    EXPECT_NEAR(ga, 0.0, 1e-7) << spread << " " << min_dist;
    EXPECT_NEAR(gb, 0.0, 1e-7) << spread << " " << min_dist;
    // A nearby point is no better.
    EXPECT_LE(f0, curve_sse(ab.a * 1.001, ab.b, spread, min_dist));
    EXPECT_LE(f0, curve_sse(ab.a, ab.b * 1.001, spread, min_dist));
  }
}

// Each row's nearest embedded row is of its blob (row i is in blob i % 3).
void expect_blobs_apart(const std::vector<float>& z, int64_t n, const std::string& what) {
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = -1;
    double bd = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double a = z[i * 2] - z[j * 2], b = z[i * 2 + 1] - z[j * 2 + 1], dd = a * a + b * b;
      if (best < 0 || dd < bd) best = j, bd = dd;
    }
    EXPECT_EQ(best % 3, i % 3) << what << " row " << i;
  }
}

TEST(Umap, FarBlobsStayApart) {
  const Data x = ml_common::uniform_blobs(90, 5, 3, 8.0f, 9);
  for (const char* init : {"spectral", "random"}) {
    auto est = ml::make_estimator("umap", {{"n_neighbors", "10"}, {"init", init}, {"n_epochs", "200"}});
    est->fit(x.X());
    const std::vector<float> z = state_f32(*est, "embedding");
    ASSERT_EQ(z.size(), 180u);
    expect_blobs_apart(z, x.n, init);
    // New rows of the same blobs land next to their blob's training rows (umap-learn's transform).
    const Data fresh = ml_common::uniform_blobs(30, 5, 3, 8.0f, 23);
    const std::vector<float> t = est->transform(fresh.X()).to_vector<float>();
    ASSERT_EQ(t.size(), 60u);
    for (int64_t i = 0; i < fresh.n; ++i) {
      int64_t best = -1;
      double bd = 0.0;
      for (int64_t j = 0; j < x.n; ++j) {
        const double a = t[i * 2] - z[j * 2], b = t[i * 2 + 1] - z[j * 2 + 1], dd = a * a + b * b;
        if (best < 0 || dd < bd) best = j, bd = dd;
      }
      EXPECT_EQ(best % 3, i % 3) << init << " new row " << i;
    }
    const nlohmann::json st = ml_common::state_of(*est);
    EXPECT_NEAR(ml_common::f64_field(st, "a")[0], 1.5769, 1e-4);
  }
  // Above 512 rows the spectral start is iterative.
  const Data big = ml_common::uniform_blobs(600, 4, 3, 8.0f, 11);
  auto est = ml::make_estimator("umap", {{"n_epochs", "60"}});
  est->fit(big.X());
  expect_blobs_apart(state_f32(*est, "embedding"), big.n, "600 rows");
}

TEST(Umap, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data x = ml_common::uniform_blobs(200, 4, 3, 2.0f, 13), test = ml_common::uniform_blobs(30, 4, 3, 2.0f, 17);
  ml_common::expect_same_bytes_at_threads_123("umap", {{"n_epochs", "60"}}, x.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("umap", {{"n_epochs", "30"}, {"init", "random"}, {"n_components", "3"}},
                                              x.X(), Tensor(), test.X());
  const Data big = ml_common::uniform_blobs(560, 4, 3, 2.0f, 19);
  ml_common::expect_same_bytes_at_threads_123("umap", {{"n_epochs", "20"}}, big.X(), Tensor(), test.X());
  ml_common::expect_input_change_moves_the_model("umap", {{"n_epochs", "30"}}, x, 3.0f);
  // Another random_state moves the model (the noise of the start and the negative samples).
  auto a = ml::make_estimator("umap", {{"n_epochs", "30"}});
  auto b = ml::make_estimator("umap", {{"n_epochs", "30"}, {"random_state", "7"}});
  a->fit(x.X());
  b->fit(x.X());
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

TEST(Umap, StateRoundTripAndRefusals) {
  const Data x = ml_common::uniform_blobs(40, 3, 2, 2.0f, 31);
  auto est = ml::make_estimator("umap");
  EXPECT_NE(error_of([&] { est->transform(x.X()); }).find("before fit"), std::string::npos);
  est->fit(x.X());
  ml_common::expect_transformer_state_round_trip(*est, x.X());
  ml_common::expect_model_text_round_trip(*est, x.X());
  EXPECT_NE(error_of([&] { est->transform(ml_common::uniform_blobs(3, 2, 1, 0.0f, 1).X()); }).find("umap"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("umap", {{"metric", "cosine"}}); }).find("only metric=euclidean"),
            std::string::npos);
  for (const auto& kv : std::vector<std::pair<std::string, std::string>>{
           {"n_neighbors", "1"}, {"n_components", "0"}, {"min_dist", "-0.1"}, {"spread", "0"}, {"learning_rate", "0"},
           {"n_epochs", "-1"}, {"n_epochs", "many"}, {"init", "pca"}, {"negative_sample_rate", "-1"}})
    EXPECT_NE(error_of([&] { ml::make_estimator("umap", {{kv.first, kv.second}}); }).find(kv.first), std::string::npos)
        << kv.first;
  auto wide = ml::make_estimator("umap", {{"n_neighbors", "40"}});
  EXPECT_NE(error_of([&] { wide->fit(x.X()); }).find("n_neighbors=40 must be less than n_samples=40"),
            std::string::npos);
  auto close = ml::make_estimator("umap", {{"min_dist", "2"}});
  EXPECT_NE(error_of([&] { close->fit(x.X()); }).find("min_dist"), std::string::npos);
  auto frac = ml::make_estimator("umap", {{"n_epochs", "2.5"}});
  EXPECT_NE(error_of([&] { frac->fit(x.X()); }).find("n_epochs"), std::string::npos);
  Data nan = x;
  nan.x[5] = NAN;
  EXPECT_NE(error_of([&] { ml::make_estimator("umap")->fit(nan.X()); }), "");
  EXPECT_NE(error_of([&] { ml::make_estimator("umap")->fit(nan.X()); }).find("umap"), std::string::npos);
  // A state whose graph does not fit its rows is refused by name.
  nlohmann::json st = ml_common::state_of(*est);
  st["graph_indptr"][1] = -1;
  ml_common::expect_state_refused("umap", st, "graph_indptr");
  st = ml_common::state_of(*est);
  st["graph_indices"][0] = 40;
  ml_common::expect_state_refused("umap", st, "graph_indices");
  st = ml_common::state_of(*est);
  st["graph_indptr"] = 3;
  ml_common::expect_state_refused("umap", st, "graph_indptr");
  auto four = ml::make_estimator("umap", {{"n_components", "4"}, {"n_neighbors", "5"}, {"n_epochs", "11"}});
  four->fit(x.X());
  EXPECT_EQ(four->transform(x.X()).dim(1), 4);
}

}  // namespace
}  // namespace bl
