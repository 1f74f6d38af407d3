// test_nearest_neighbors.cpp: nearest_neighbors (and the metric parameter of kneighbors_*) against
// a float64 brute-force reference for every metric: the same neighbor indices on tie-free data and
// distances within 1e-6 relative (euclidean: 1e-5 absolute, its binary32 GEMM formula); equal
// distances in ascending training index; identical bytes at threads 1, 2 and 3 for every metric
// (with the sabotage arm of family_checks.h); a classifier vote under manhattan; the named errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

double ref_distance(const float* q, const float* t, int64_t d, const std::string& metric, double p) {
  double s = 0;
  if (metric == "haversine") {
    const double a = std::sin((q[0] - static_cast<double>(t[0])) / 2), b = std::sin((q[1] - static_cast<double>(t[1])) / 2);
    return 2 * std::asin(std::sqrt(std::min(1.0, a * a + std::cos(q[0]) * std::cos(t[0]) * b * b)));
  }
  if (metric == "cosine") {
    double dot = 0, qq = 0, tt = 0;
    for (int64_t a = 0; a < d; ++a) dot += q[a] * static_cast<double>(t[a]), qq += q[a] * static_cast<double>(q[a]),
                                     tt += t[a] * static_cast<double>(t[a]);
    return 1 - dot / std::sqrt(qq * tt);
  }
  for (int64_t a = 0; a < d; ++a) {
    const double x = std::fabs(static_cast<double>(q[a]) - t[a]);
    if (metric == "manhattan") s += x;
    if (metric == "chebyshev") s = std::max(s, x);
    if (metric == "euclidean") s += x * x;
    if (metric == "minkowski") s += std::pow(x, p);
  }
  if (metric == "euclidean") return std::sqrt(s);
  if (metric == "minkowski") return std::pow(s, 1 / p);
  return s;
}

struct Case {
  const char* metric;
  double p;
};
const Case kCases[] = {{"euclidean", 2}, {"manhattan", 2}, {"chebyshev", 2}, {"minkowski", 3.5},
                       {"minkowski", 1}, {"cosine", 2},    {"haversine", 2}};

ml::Params params_of(const Case& c, int64_t k) {
  return {{"metric", c.metric}, {"p", std::to_string(c.p)}, {"n_neighbors", std::to_string(k)}};
}

TEST(NearestNeighbors, EveryMetricMatchesAFloat64BruteForce) {
  for (const Case& c : kCases) {
    const int64_t d = std::string(c.metric) == "haversine" ? 2 : 5, k = 6;
    ml_common::HostData X = ml_common::uniform_blobs(300, d, 3, 1.0f, 21), Q = ml_common::uniform_blobs(77, d, 3, 1.0f, 22);
    auto est = ml::make_estimator("nearest_neighbors", params_of(c, k));
    est->fit(X.X());
    std::vector<int64_t> idx = est->predict(Q.X()).to_vector<int64_t>();
    std::vector<float> dist = est->transform(Q.X()).to_vector<float>();
    ASSERT_EQ(idx.size(), static_cast<size_t>(Q.n * k));
    const std::string metric = std::string(c.metric) == "minkowski" && c.p == 1 ? "manhattan" : c.metric;
    for (int64_t i = 0; i < Q.n; ++i) {
      std::vector<double> ref(X.n);
      for (int64_t j = 0; j < X.n; ++j) ref[j] = ref_distance(&Q.x[i * d], &X.x[j * d], d, metric, c.p);
      std::vector<int64_t> order(X.n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ref[a] < ref[b]; });
      for (int64_t r = 0; r < k; ++r) {
        EXPECT_EQ(idx[i * k + r], order[r]) << c.metric << " query " << i << " rank " << r;
        const double want = ref[order[r]], got = dist[i * k + r];
        if (metric == "euclidean") {
          EXPECT_NEAR(got, want, 1e-5) << c.metric;
        } else {
          EXPECT_LE(std::fabs(got - want), 1e-6 * std::max(1e-3, want)) << c.metric << " " << got << " vs " << want;
        }
      }
    }
  }
}

TEST(NearestNeighbors, EqualDistancesKeepTheLowerTrainingIndex) {
  // Rows 0..3 hold the same point twice over (0 == 2, 1 == 3): every metric lists 0 before 2.
  const std::vector<float> x = {0.1f, 0.2f, 0.5f, 0.4f, 0.1f, 0.2f, 0.5f, 0.4f, 1.0f, 1.0f};
  Tensor X = Tensor::from_vector(x, {5, 2}), Q = Tensor::from_vector(std::vector<float>{0.1f, 0.2f}, {1, 2});
  for (const Case& c : kCases) {
    auto est = ml::make_estimator("nearest_neighbors", params_of(c, 4));
    est->fit(X);
    std::vector<int64_t> idx = est->predict(Q).to_vector<int64_t>();
    EXPECT_EQ(idx[0], 0) << c.metric;
    EXPECT_EQ(idx[1], 2) << c.metric;
    if (std::string(c.metric) == "cosine") continue;  // (1, 1) is closer in angle than (0.5, 0.4)
    EXPECT_EQ(std::min(idx[2], idx[3]), 1) << c.metric;
    EXPECT_EQ(std::max(idx[2], idx[3]), 3) << c.metric;
  }
}

TEST(NearestNeighbors, SameBytesAtThreads123ForEveryMetric) {
  ml_common::HostData X = ml_common::uniform_blobs(700, 2, 3, 1.0f, 5), T = ml_common::uniform_blobs(131, 2, 3, 1.0f, 6);
  for (const Case& c : kCases) {
    ml_common::expect_same_bytes_at_threads_123("nearest_neighbors", params_of(c, 7), X.X(), Tensor(), T.X());
    ml::Params kp = params_of(c, 7);
    kp["weights"] = "distance";
    ml_common::expect_same_bytes_at_threads_123("kneighbors_classifier", kp, X.X(), X.Y(), T.X());
  }
  ml_common::expect_input_change_moves_the_model("nearest_neighbors", {{"metric", "manhattan"}}, X, 3.0f);
}

TEST(NearestNeighbors, KNeighborsClassifierVotesUnderManhattan) {
  ml_common::HostData X = ml_common::uniform_blobs(400, 4, 3, 1.5f, 8), Q = ml_common::uniform_blobs(90, 4, 3, 1.5f, 9);
  auto clf = ml::make_estimator("kneighbors_classifier", {{"metric", "manhattan"}, {"n_neighbors", "7"}});
  clf->fit(X.X(), X.Y());
  std::vector<float> pred = clf->predict(Q.X()).to_vector<float>();
  for (int64_t i = 0; i < Q.n; ++i) {
    std::vector<double> ref(X.n);
    for (int64_t j = 0; j < X.n; ++j) ref[j] = ref_distance(&Q.x[i * 4], &X.x[j * 4], 4, "manhattan", 1);
    std::vector<int64_t> order(X.n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ref[a] < ref[b]; });
    int votes[3] = {0, 0, 0};
    for (int r = 0; r < 7; ++r) ++votes[static_cast<int>(X.y[order[r]])];
    const int best = static_cast<int>(std::max_element(votes, votes + 3) - votes);
    EXPECT_EQ(pred[i], static_cast<float>(best)) << "query " << i;
  }
  // Sabotage arm: euclidean votes differ from the manhattan reference somewhere on these data.
  auto e = ml::make_estimator("nearest_neighbors", {{"n_neighbors", "7"}});
  auto m = ml::make_estimator("nearest_neighbors", {{"n_neighbors", "7"}, {"metric", "manhattan"}});
  e->fit(X.X());
  m->fit(X.X());
  EXPECT_NE(e->predict(Q.X()).to_vector<int64_t>(), m->predict(Q.X()).to_vector<int64_t>());
}

TEST(NearestNeighbors, BadInputsAreNamedErrors) {
  ml_common::HostData X = ml_common::uniform_blobs(10, 3, 2, 1.0f, 9);
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("nearest_neighbors", {{"n_neighbors", "11"}})->fit(X.X()); }),
                  "n_neighbors=11"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("nearest_neighbors", {{"metric", "haversine"}})->fit(X.X()); }),
                  "haversine needs 2 features"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("nearest_neighbors", {{"p", "0.5"}}); }), "p=0.5"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("kneighbors_regressor", {{"metric", "jaccard"}}); }), "metric"));
  auto est = ml::make_estimator("nearest_neighbors", {{"n_neighbors", "3"}});
  est->fit(X.X());
  auto again = ml::estimator_from_json_text(est->to_json_text());
  EXPECT_EQ(again->predict(X.X()).to_vector<int64_t>(), est->predict(X.X()).to_vector<int64_t>());
}

}  // namespace
}  // namespace bl
