// test_spectral.cpp: spectral_clustering recovers well-separated blobs exactly (the same partition
// as the generating labels) with both affinities, and separates two concentric rings that k-means
// alone cannot (nearest_neighbors affinity; the sabotage arm: kmeans on the raw rows mixes them);
// identical model file bytes at threads 1, 2 and 3 (with the sabotage arm of family_checks.h); the
// named errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
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

std::vector<int64_t> labels_of(const ml::Estimator& est) {
  return nlohmann::json::parse(est.to_json_text())["state"]["labels"].get<std::vector<int64_t>>();
}

// Whether labels a and b define the same partition (a bijection between their values).
bool same_partition(const std::vector<int64_t>& a, const std::vector<float>& b) {
  std::map<int64_t, float> ab;
  std::map<float, int64_t> ba;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ab.count(a[i]) && ab[a[i]] != b[i]) return false;
    if (ba.count(b[i]) && ba[b[i]] != a[i]) return false;
    ab[a[i]] = b[i];
    ba[b[i]] = a[i];
  }
  return true;
}

TEST(SpectralClustering, RecoversSeparatedBlobsWithBothAffinities) {
  ml_common::HostData X = ml_common::uniform_blobs(150, 3, 3, 8.0f, 4);
  for (const char* affinity : {"rbf", "nearest_neighbors"}) {
    auto est = ml::make_estimator("spectral_clustering",
                                  {{"n_clusters", "3"}, {"affinity", affinity}, {"gamma", "0.5"}});
    est->fit(X.X());
    EXPECT_TRUE(same_partition(labels_of(*est), X.y)) << affinity;
  }
}

TEST(SpectralClustering, SeparatesConcentricRings) {
  ml_common::HostData X;
  X.n = 200;
  X.d = 2;
  for (int64_t i = 0; i < X.n; ++i) {
    const float r = i % 2 ? 1.0f : 4.0f, t = 0.0314159f * static_cast<float>(i);
    X.x.push_back(r * std::cos(t));
    X.x.push_back(r * std::sin(t));
    X.y.push_back(static_cast<float>(i % 2));
  }
  auto est = ml::make_estimator("spectral_clustering",
                                {{"n_clusters", "2"}, {"affinity", "nearest_neighbors"}, {"n_neighbors", "6"}});
  est->fit(X.X());
  EXPECT_TRUE(same_partition(labels_of(*est), X.y));
  // Sabotage arm: kmeans on the rows themselves does not find the rings.
  auto km = ml::make_estimator("kmeans", {{"n_clusters", "2"}});
  km->fit(X.X());
  EXPECT_FALSE(same_partition(km->predict(X.X()).to_vector<int64_t>(), X.y));
}

TEST(SpectralClustering, SameBytesAtThreads123) {
  ml_common::HostData X = ml_common::uniform_blobs(120, 4, 3, 2.0f, 7);
  for (const char* affinity : {"rbf", "nearest_neighbors"})
    ml_common::expect_same_bytes_at_threads_123("spectral_clustering", {{"n_clusters", "3"}, {"affinity", affinity}},
                                                X.X(), Tensor(), X.X());
  ml_common::expect_input_change_moves_the_model("spectral_clustering", {{"n_clusters", "3"}, {"gamma", "0.3"}}, X,
                                                 2.5f);
}

TEST(SpectralClustering, BadInputsAreNamedErrors) {
  ml_common::HostData X = ml_common::uniform_blobs(10, 2, 2, 3.0f, 9);
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("spectral_clustering", {{"n_clusters", "11"}})->fit(X.X()); }),
                  "n_clusters=11"));
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("spectral_clustering", {{"affinity", "nearest_neighbors"}, {"n_neighbors", "12"},
                                                               {"n_clusters", "2"}})
                        ->fit(X.X());
                  }),
                  "n_neighbors=12"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("spectral_clustering", {{"affinity", "cosine"}}); }), "affinity"));
  ml_common::HostData big = ml_common::uniform_blobs(4097, 1, 2, 3.0f, 9);
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("spectral_clustering", {{"n_clusters", "2"}})->fit(big.X()); }),
                  "limit of 4096"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("spectral_clustering", {{"gamma", "0"}}); }), "gamma"));
}

}  // namespace
}  // namespace bl
