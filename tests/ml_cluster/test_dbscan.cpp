// test_dbscan.cpp: dbscan against a float64 reference (distances in binary64, the same labelling
// rule) on blob data, exact neighbors at distance eps, duplicate points, all-noise and
// one-cluster fits, the order rule for a border point shared by two clusters, identical model
// files and predictions at 1, 2 and 3 threads, and its refusals (eps <= 0, another metric).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
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

}  // namespace
}  // namespace bl
