// test_cluster_weights.cpp: sample weights of bisecting_kmeans (weighted bisections, scores and
// inertia) and minibatch_kmeans (weighted k-means++ on the init sample, weighted batch updates and
// inertia). bisecting_kmeans run to convergence has leaf centers that are the weighted means of their
// rows and the weighted inertia in float64; rows of weight 0 in a far blob draw no center of either
// (the unweighted fits put one there: the sabotage arm); all-ones weights give the unweighted bits;
// threads 1, 2, 3 give the same bytes and a changed weight moves the model.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml_common/weight_checks.h"

namespace bl {
namespace {

using ml_common::HostData;
using ml_common::WeightedHostData;

// Four blobs in 3-d (no labels).
HostData blobs(int64_t n, uint64_t seed) {
  HostData d = ml_common::uniform_blobs(n, 3, 4, 0.0f, seed);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = i % 4;
    d.x[i * 3 + 0] = 0.4f * d.x[i * 3 + 0] + (b == 1 ? 6.0f : 0.0f);
    d.x[i * 3 + 1] = 0.4f * d.x[i * 3 + 1] + (b == 2 ? 6.0f : 0.0f);
    d.x[i * 3 + 2] = 0.4f * d.x[i * 3 + 2] + (b == 3 ? 6.0f : 0.0f);
  }
  d.y.clear();
  return d;
}

std::vector<float> state_f32(const ml::Estimator& est, const char* key) {
  nlohmann::json st;
  est.save_state(st);
  return ml::f32_from_hex(st[key].get<std::string>(), key);
}

TEST(ClusterWeights, BisectingLeavesAreWeightedMeansAndInertiaIsWeighted) {
  WeightedHostData s = ml_common::with_weights(blobs(400, 41), [](int64_t i) { return 0.25 + (i * 7 % 5); });
  auto est = ml::make_estimator("bisecting_kmeans", {{"n_clusters", "4"}, {"tol", "0"}, {"max_iter", "300"}});
  est->fit_weighted(s.X(), Tensor(), s.W());
  const std::vector<int64_t> lab = est->predict(s.X()).to_vector<int64_t>();
  const std::vector<float> centers = state_f32(*est, "cluster_centers");
  double inertia = 0.0;
  for (int64_t c = 0; c < 4; ++c) {
    double sw = 0.0, sx[3] = {0, 0, 0};
    for (int64_t i = 0; i < s.n; ++i)
      if (lab[i] == c) {
        sw += s.w[i];
        for (int64_t j = 0; j < 3; ++j) sx[j] += static_cast<double>(s.w[i]) * s.x[i * 3 + j];
      }
    ASSERT_GT(sw, 0.0) << "cluster " << c;
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(centers[c * 3 + j], sx[j] / sw, 1e-4) << "cluster " << c;
  }
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const double dv = s.x[i * 3 + j] - centers[lab[i] * 3 + j];
      inertia += static_cast<double>(s.w[i]) * dv * dv;
    }
  EXPECT_NEAR(state_f32(*est, "inertia")[0], inertia, 1e-4 * inertia);
}

TEST(ClusterWeights, RowsOfWeightZeroDrawNoCenter) {
  // A fifth blob far away, of weight 0.
  WeightedHostData s = ml_common::with_weights(blobs(500, 42), [](int64_t i) { return i % 5 == 4 ? 0 : 1 + i % 3; });
  for (int64_t i = 4; i < s.n; i += 5)
    for (int64_t j = 0; j < 3; ++j) s.x[i * 3 + j] += 40.0f;
  for (const char* name : {"bisecting_kmeans", "minibatch_kmeans"}) {
    const ml::Params p = {{"n_clusters", "4"}, {"batch_size", "64"}};
    ml::Params params = p;
    if (std::string(name) == "bisecting_kmeans") params.erase("batch_size");
    auto weighted = ml::make_estimator(name, params), plain = ml::make_estimator(name, params);
    weighted->fit_weighted(s.X(), Tensor(), s.W());
    plain->fit(s.X());
    auto far_centers = [](const std::vector<float>& c) {
      int64_t far = 0;
      for (size_t k = 0; k < c.size() / 3; ++k) far += c[k * 3] > 20.0f ? 1 : 0;
      return far;
    };
    EXPECT_EQ(far_centers(state_f32(*weighted, "cluster_centers")), 0) << name;
    EXPECT_GT(far_centers(state_f32(*plain, "cluster_centers")), 0) << name << " (sabotage arm: unweighted)";
  }
}

TEST(ClusterWeights, AllOnesThreadsAndAChangedWeight) {
  const std::vector<std::pair<const char*, ml::Params>> cases = {
      {"bisecting_kmeans", {{"n_clusters", "4"}}},
      {"bisecting_kmeans", {{"n_clusters", "3"}, {"init", "k-means++"}, {"bisecting_strategy", "largest_cluster"}}},
      {"minibatch_kmeans", {{"n_clusters", "4"}, {"batch_size", "50"}}},
  };
  for (const auto& [name, params] : cases) {
    ml_common::expect_all_ones_give_the_unweighted_bits(name, params, blobs(200, 43));
    WeightedHostData s = ml_common::with_weights(blobs(200, 44), [](int64_t i) { return 0.3 + 0.45 * (i % 6); });
    ml_common::expect_weighted_bytes_at_threads_123_and_moved(name, params, s, 9);
  }
}

}  // namespace
}  // namespace bl
