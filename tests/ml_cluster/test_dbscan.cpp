// test_dbscan.cpp: dbscan against a float64 reference (distances in binary64, the same labelling
// rule) on blob data, exact neighbors at distance eps, duplicate points, all-noise and
// one-cluster fits, the order rule for a border point shared by two clusters, identical model
// files and predictions at 1, 2 and 3 threads, and its refusals (eps <= 0, another metric).
// The prefiltered neighborhoods and nearest core samples (dbscan_neighbors.h) are compared byte
// for byte with the all-pairs reference over many shapes and awkward values (ties at exactly eps,
// duplicates, 1e18 / 1e19 / 1e-20 coordinates, zeros of both signs), at 1, 2 and 3 threads; a
// sabotage arm drops the rounding margin and must lose a pair exactly eps apart.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/dbscan_neighbors.h"
#include "ml_common/estimator_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

// Labels and core indices from the model state.
struct Fit {
  std::vector<int64_t> labels, core;
};

Fit fit_dbscan(const std::vector<float>& x, int64_t d, const ml::Params& p) {
  auto est = ml::make_estimator("dbscan", p);
  est->fit(Tensor::from_vector(x, {static_cast<int64_t>(x.size()) / d, d}));
  nlohmann::json state;
  est->save_state(state);
  return {state["labels"].get<std::vector<int64_t>>(), state["core_sample_indices"].get<std::vector<int64_t>>()};
}

// scikit-learn's rule in binary64: neighbors at distance <= eps, clusters grown from the lowest
// unlabeled core point, border points keep their first label.
std::vector<int64_t> reference(const std::vector<float>& x, int64_t d, double eps, int64_t min_samples) {
  const int64_t n = static_cast<int64_t>(x.size()) / d;
  std::vector<std::vector<int64_t>> nb(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t f = 0; f < d; ++f) s += (static_cast<double>(x[i * d + f]) - x[j * d + f]) *
                                           (static_cast<double>(x[i * d + f]) - x[j * d + f]);
      if (std::sqrt(s) <= eps) nb[i].push_back(j);
    }
  std::vector<int64_t> labels(n, -1);
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] != -1 || static_cast<int64_t>(nb[i].size()) < min_samples) continue;
    std::vector<int64_t> queue{i};
    labels[i] = c;
    for (size_t q = 0; q < queue.size(); ++q) {
      const int64_t p = queue[q];
      if (static_cast<int64_t>(nb[p].size()) < min_samples) continue;
      for (int64_t j : nb[p])
        if (labels[j] == -1) {
          labels[j] = c;
          queue.push_back(j);
        }
    }
    ++c;
  }
  return labels;
}

// Three Gaussian-like blobs (sums of uniforms) and uniform background noise in 2-d.
std::vector<float> blobs(int64_t n, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  const float cx[3] = {-2.0f, 0.5f, 2.5f}, cy[3] = {0.0f, 2.0f, -1.0f};
  std::vector<float> x;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 10 == 9) {
      x.push_back(4.0f * rng.uniform_pm1());
      x.push_back(4.0f * rng.uniform_pm1());
      continue;
    }
    const int k = static_cast<int>(i % 3);
    x.push_back(cx[k] + 0.4f * (rng.uniform_pm1() + rng.uniform_pm1()));
    x.push_back(cy[k] + 0.4f * (rng.uniform_pm1() + rng.uniform_pm1()));
  }
  return x;
}

TEST(Dbscan, BlobsMatchAFloat64Reference) {
  std::vector<float> x = blobs(400, 7);
  for (const auto& [eps, ms] : std::vector<std::pair<double, int64_t>>{{0.3, 5}, {0.5, 5}, {0.25, 3}, {1.0, 10}}) {
    Fit f = fit_dbscan(x, 2, {{"eps", std::to_string(eps)}, {"min_samples", std::to_string(ms)}});
    EXPECT_EQ(f.labels, reference(x, 2, eps, ms)) << "eps=" << eps << " min_samples=" << ms;
  }
}

TEST(Dbscan, NeighborsExactlyEpsApartAreNeighbors) {
  // 1-d points 0.5 apart: eps = 0.5 chains them; just below, every point is alone.
  std::vector<float> x = {0.0f, 0.5f, 1.0f, 1.5f, 4.0f};
  Fit f = fit_dbscan(x, 1, {{"eps", "0.5"}, {"min_samples", "2"}});
  EXPECT_EQ(f.labels, (std::vector<int64_t>{0, 0, 0, 0, -1}));
  EXPECT_EQ(f.core, (std::vector<int64_t>{0, 1, 2, 3}));
  f = fit_dbscan(x, 1, {{"eps", "0.4999"}, {"min_samples", "2"}});
  EXPECT_EQ(f.labels, (std::vector<int64_t>(5, -1)));
  EXPECT_TRUE(f.core.empty());
  // In 2-d: (0, 0) and (0.75, 1) are exactly 1.25 apart (0.5625 + 1 = 1.5625 = 1.25^2 in binary32).
  std::vector<float> y = {0.0f, 0.0f, 0.75f, 1.0f, 10.0f, 10.0f};
  f = fit_dbscan(y, 2, {{"eps", "1.25"}, {"min_samples", "2"}});
  EXPECT_EQ(f.labels, (std::vector<int64_t>{0, 0, -1}));
}

TEST(Dbscan, DuplicatesAllNoiseAndOneCluster) {
  std::vector<float> dup(10, 1.5f);  // 5 copies of (1.5, 1.5)
  Fit f = fit_dbscan(dup, 2, {{"eps", "0.01"}, {"min_samples", "5"}});
  EXPECT_EQ(f.labels, (std::vector<int64_t>(5, 0)));
  EXPECT_EQ(f.core.size(), 5u);
  f = fit_dbscan(dup, 2, {{"eps", "0.01"}, {"min_samples", "6"}});
  EXPECT_EQ(f.labels, (std::vector<int64_t>(5, -1)));
  std::vector<float> x = blobs(60, 3);
  f = fit_dbscan(x, 2, {{"eps", "100"}, {"min_samples", "5"}});
  EXPECT_EQ(f.labels, (std::vector<int64_t>(60, 0)));
  EXPECT_EQ(f.core.size(), 60u);
}

TEST(Dbscan, SharedBorderPointGoesToTheClusterStartedFirst) {
  // Cluster A: a core point a = (0.4, 0) with three close points; cluster B mirrored around b =
  // (1.3, 0). P = (0.85, 0) is 0.45 from a and from b only: a border point of both.
  const std::vector<float> A = {0.0f, 0.0f, 0.05f, 0.0f, 0.1f, 0.0f, 0.4f, 0.0f};
  const std::vector<float> B = {1.3f, 0.0f, 1.6f, 0.0f, 1.65f, 0.0f, 1.7f, 0.0f};
  const std::vector<float> P = {0.85f, 0.0f};
  const ml::Params p = {{"eps", "0.5"}, {"min_samples", "4"}};
  std::vector<float> x = B;
  x.insert(x.end(), P.begin(), P.end());
  x.insert(x.end(), A.begin(), A.end());
  Fit f = fit_dbscan(x, 2, p);  // B first: P joins cluster 0 (B)
  EXPECT_EQ(f.labels, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(f.labels, reference(x, 2, 0.5, 4));
  x = A;
  x.insert(x.end(), B.begin(), B.end());
  x.insert(x.end(), P.begin(), P.end());
  f = fit_dbscan(x, 2, p);  // A first: P joins cluster 0 (A)
  EXPECT_EQ(f.labels, (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1, 0}));
  EXPECT_EQ(f.core, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Dbscan, PredictGivesTheNearestCoreSampleWithinEps) {
  std::vector<float> x = blobs(300, 11);
  auto est = ml::make_estimator("dbscan", {{"eps", "0.3"}, {"min_samples", "5"}});
  Tensor X = Tensor::from_vector(x, {300, 2});
  est->fit(X);
  nlohmann::json state;
  est->save_state(state);
  std::vector<int64_t> labels = state["labels"].get<std::vector<int64_t>>();
  std::vector<int64_t> core = state["core_sample_indices"].get<std::vector<int64_t>>();
  std::vector<int64_t> pred = est->predict(X).to_vector<int64_t>();
  std::vector<bool> is_core(300, false);
  for (int64_t c : core) is_core[c] = true;
  for (int64_t i = 0; i < 300; ++i) {
    if (is_core[i] || labels[i] == -1) EXPECT_EQ(pred[i], labels[i]) << i;
    else EXPECT_GE(pred[i], 0) << i;  // a border point is within eps of a core point
  }
  std::vector<int64_t> far = est->predict(Tensor::from_vector(std::vector<float>{50.0f, 50.0f}, {1, 2}))
                                 .to_vector<int64_t>();
  EXPECT_EQ(far[0], -1);
}

TEST(Dbscan, SameBytesAtThreads123) {
  std::vector<float> x = blobs(1500, 5), t = blobs(200, 6);
  std::string model;
  std::vector<unsigned char> out;
  const int saved = num_threads();
  for (int th : {1, 2, 3}) {
    set_num_threads(th);
    auto est = ml::make_estimator("dbscan", {{"eps", "0.2"}, {"min_samples", "6"}});
    est->fit(Tensor::from_vector(x, {1500, 2}));
    std::vector<unsigned char> o = ml_common::bytes_of(est->predict(Tensor::from_vector(t, {200, 2})));
    if (th == 1) {
      model = est->to_json_text();
      out = o;
    } else {
      EXPECT_EQ(est->to_json_text(), model) << th << " threads";
      EXPECT_TRUE(o == out) << th << " threads";
    }
  }
  set_num_threads(saved);
}

TEST(Dbscan, BadInputsAreNamedErrors) {
  Tensor X = Tensor::from_vector(blobs(20, 1), {20, 2});
  std::string m = error_of([&] { ml::make_estimator("dbscan", {{"eps", "0"}})->fit(X); });
  EXPECT_NE(m.find("eps=0 must be > 0"), std::string::npos) << m;
  m = error_of([&] { ml::make_estimator("dbscan", {{"eps", "-1"}}); });
  EXPECT_NE(m.find("eps"), std::string::npos) << m;
  m = error_of([&] { ml::make_estimator("dbscan", {{"metric", "manhattan"}}); });
  EXPECT_NE(m.find("euclidean"), std::string::npos) << m;
  m = error_of([&] { ml::make_estimator("dbscan", {{"min_samples", "0"}}); });
  EXPECT_NE(m.find("min_samples"), std::string::npos) << m;
}

// ---- prefiltered neighborhoods against the all-pairs reference ----

using ml::dbscan_detail::Lists;

// Row lengths then entries, for a memcmp of two sets of lists.
std::vector<int64_t> flat(const Lists& l) {
  std::vector<int64_t> f;
  for (const auto& row : l) {
    f.push_back(static_cast<int64_t>(row.size()));
    f.insert(f.end(), row.begin(), row.end());
  }
  return f;
}

bool same_bytes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(int64_t)) == 0);
}

// n rows of d features of one kind: 0 = multiples of 0.25 in [-1, 1], about 4 of them nonzero in
// a row (ties at many distances; the zeros of both signs),
// 1 = the same with every third row a copy of an earlier one, 2 = rows of one magnitude each:
// 1e18, -1e18 and the float after 1e18 (norms past 2^125 from d = 43 on), 1e19 in about a fifth
// of the features among small values (a norm past 2^125, +inf from four of them on), +-1e-20 and
// 3e-20 (subnormal squares), small grid values; zeros of both signs in every kind of row, and
// every fifth row a copy of an earlier one; 3 = uniform [-1, 1).
std::vector<float> awkward(int64_t n, int64_t d, int kind, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> x(static_cast<size_t>(n * d));
  const float big = 1e18f, big_next = std::nextafter(1e18f, 2e18f);
  const float pick[4][5] = {{big, big_next, -big, 0.0f, -0.0f},
                            {1e19f, 0.5f, -0.25f, 0.0f, -0.0f},
                            {1e-20f, -1e-20f, 3e-20f, 0.0f, -0.0f},
                            {0.5f, -0.25f, 0.75f, 0.0f, -0.0f}};
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t cls = rng.next() % 4;
    for (int64_t f = 0; f < d; ++f) {
      float& v = x[i * d + f];
      const uint64_t r = rng.next();
      if (kind == 3) {
        v = rng.uniform_pm1();
      } else if (kind == 2) {
        v = i % 5 == 4 ? x[(i / 2) * d + f] : pick[cls][r % 5];
      } else {
        // About 4 features per row away from zero, so that rows meet at small distances in any d.
        const bool zero = d > 4 && static_cast<int64_t>(r % static_cast<uint64_t>(d)) >= 4;
        v = zero ? ((r >> 32) % 2 ? 0.0f : -0.0f) : 0.25f * static_cast<float>(static_cast<int64_t>((r >> 8) % 9) - 4);
        if (kind == 1 && i % 3 == 2) v = x[(i / 2) * d + f];
      }
    }
  }
  return x;
}

std::vector<float> eps2_values(int kind, int64_t d) {
  if (kind == 2) return {1e-40f, 4e-40f, 0.5625f, 68719476736.0f * 68719476736.0f, 1e36f, 1e38f};
  if (kind == 3) return {0.05f * d, 0.4f * d, 0.6f * d};
  return {0.0625f, 0.25f, 1.5625f, 2.0f};
}

TEST(DbscanNeighbors, PrefilterEqualsAllPairsOverShapes) {
  for (int64_t n : {1, 2, 17, 257, 1000})
    for (int64_t d : {1, 2, 3, 20, 64})
      for (int kind = 0; kind < 4; ++kind) {
        if (n == 1000 && d == 64 && kind == 3) continue;  // uniform data: no ties to find; the slowest
        std::vector<float> x = awkward(n, d, kind, static_cast<uint64_t>(n * 131 + d * 7 + kind));
        Tensor X = Tensor::from_vector(x, {n, d});
        const int64_t c = std::max<int64_t>(1, n / 3);
        Tensor C = X.slice(0, n - c, n), Q = Tensor::from_vector(awkward(n, d, kind, 99 + n + d), {n, d});
        std::vector<float> e2 = eps2_values(kind, d);
        if (n == 1000) e2.resize(2);  // the reference is slow there
        for (float eps2 : e2) {
          const std::vector<int64_t> want = flat(ml::dbscan_detail::neighborhoods_all_pairs(X, eps2));
          const std::vector<int64_t> got = flat(ml::dbscan_detail::neighborhoods(X, eps2, int64_t{1} << 40, "t"));
          EXPECT_TRUE(same_bytes(got, want)) << "n=" << n << " d=" << d << " kind=" << kind << " eps2=" << eps2;
          for (const Tensor& q : {X, Q})
            EXPECT_TRUE(same_bytes(ml::dbscan_detail::nearest_within(q, C, eps2),
                                   ml::dbscan_detail::nearest_within_all_pairs(q, C, eps2)))
                << "nearest: n=" << n << " d=" << d << " kind=" << kind << " eps2=" << eps2;
        }
      }
}

TEST(DbscanNeighbors, PrefilterEqualsAllPairsAcrossTiles) {
  // Rows meet across tile borders: the estimator's CPU and CUDA tiles (256 x 2048, 1024 x 8192 rows)
  // and small ones, whose borders fall at other rows; every tiling gives the all-pairs lists.
  for (int kind : {0, 1, 2})
    for (ml::dbscan_detail::Tiles tiles : {ml::dbscan_detail::tiles_for(Device::cpu()),
                                           ml::dbscan_detail::tiles_for(Device::cuda(0)), ml::dbscan_detail::Tiles{96, 288}}) {
      const int64_t n = 2600, d = 2;
      Tensor X = Tensor::from_vector(awkward(n, d, kind, 5 + kind), {n, d});
      const float eps2 = eps2_values(kind, d)[0];
      EXPECT_TRUE(same_bytes(flat(ml::dbscan_detail::neighborhoods(X, eps2, int64_t{1} << 40, "t", 1.0, tiles)),
                             flat(ml::dbscan_detail::neighborhoods_all_pairs(X, eps2))))
          << "kind=" << kind << " tiles=" << tiles.rows;
      Tensor C = X.slice(0, 100, 2500);
      EXPECT_TRUE(same_bytes(ml::dbscan_detail::nearest_within(X, C, eps2, 1.0, tiles),
                             ml::dbscan_detail::nearest_within_all_pairs(X, C, eps2)))
          << "kind=" << kind << " tiles=" << tiles.rows;
    }
}

// Pairs (x, x + 0.5) in 1-d around 10^4: the exact path gives 0.25 (= eps^2) for each pair, while
// the GEMM form rounds |x|^2 at a spacing of 8 and lands above 0.25 for some of them.
std::vector<float> tie_pairs() {
  std::vector<float> x;
  for (int k = 0; k < 64; ++k) {
    const float a = 8192.0f + 100.0f * static_cast<float>(k) + 0.125f * static_cast<float>(k % 7);
    x.push_back(a);
    x.push_back(a + 0.5f);
  }
  return x;
}

TEST(DbscanNeighbors, SabotageWithoutTheMarginLosesATiePair) {
  const std::vector<float> x = tie_pairs();
  const int64_t n = static_cast<int64_t>(x.size());
  Tensor X = Tensor::from_vector(x, {n, 1});
  const std::vector<int64_t> want = flat(ml::dbscan_detail::neighborhoods_all_pairs(X, 0.25f));
  for (int64_t i = 0; i < n; ++i)  // every point has itself and its partner
    EXPECT_EQ(ml::dbscan_detail::neighborhoods_all_pairs(X, 0.25f)[i].size(), 2u) << i;
  EXPECT_TRUE(same_bytes(flat(ml::dbscan_detail::neighborhoods(X, 0.25f, int64_t{1} << 40, "t")), want));
  EXPECT_FALSE(same_bytes(flat(ml::dbscan_detail::neighborhoods(X, 0.25f, int64_t{1} << 40, "t", 0.0)), want))
      << "a prefilter without the rounding margin must drop a pair exactly eps apart";
  // predict: queries x + 0.5 against the points x.
  std::vector<float> a, q;
  for (int64_t i = 0; i < n; i += 2) {
    a.push_back(x[i]);
    q.push_back(x[i + 1]);
  }
  Tensor A = Tensor::from_vector(a, {n / 2, 1}), Q = Tensor::from_vector(q, {n / 2, 1});
  const std::vector<int64_t> near = ml::dbscan_detail::nearest_within_all_pairs(Q, A, 0.25f);
  for (int64_t i = 0; i < n / 2; ++i) EXPECT_EQ(near[i], i);
  EXPECT_TRUE(same_bytes(ml::dbscan_detail::nearest_within(Q, A, 0.25f), near));
  EXPECT_FALSE(same_bytes(ml::dbscan_detail::nearest_within(Q, A, 0.25f, 0.0), near))
      << "a prefilter without the rounding margin must miss a core sample exactly eps away";
}

TEST(DbscanNeighbors, SameListsAtThreads123) {
  std::vector<float> x = awkward(1200, 20, 0, 17);
  for (size_t k = 0; k < 300; ++k) x.insert(x.end(), x.begin() + 20 * k, x.begin() + 20 * (k + 1));
  Tensor X = Tensor::from_vector(x, {1500, 20}), C = X.slice(0, 0, 700);
  const int saved = num_threads();
  std::vector<int64_t> lists, near;
  for (int th : {1, 2, 3}) {
    set_num_threads(th);
    std::vector<int64_t> l = flat(ml::dbscan_detail::neighborhoods(X, 1.5625f, int64_t{1} << 40, "t"));
    std::vector<int64_t> nr = ml::dbscan_detail::nearest_within(X, C, 1.5625f);
    if (th == 1) {
      lists = l;
      near = nr;
      EXPECT_TRUE(same_bytes(l, flat(ml::dbscan_detail::neighborhoods_all_pairs(X, 1.5625f))));
    } else {
      EXPECT_TRUE(same_bytes(l, lists)) << th << " threads";
      EXPECT_TRUE(same_bytes(nr, near)) << th << " threads";
    }
  }
  set_num_threads(saved);
}

TEST(DbscanNeighbors, TooManyPairsIsANamedError) {
  Tensor X = Tensor::from_vector(std::vector<float>(40, 1.0f), {20, 2});
  std::string m = error_of([&] { ml::dbscan_detail::neighborhoods(X, 1.0f, 399, "dbscan: eps=1"); });
  EXPECT_NE(m.find("dbscan: eps=1 gives more than 399 neighbor pairs on 20 rows"), std::string::npos) << m;
  EXPECT_EQ(ml::dbscan_detail::neighborhoods(X, 1.0f, 400, "t")[19].size(), 20u);
}

}  // namespace
}  // namespace bl
