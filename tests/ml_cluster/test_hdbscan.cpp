// test_hdbscan.cpp: hdbscan on data with a known answer: well-separated blobs come out as the
// blobs (with far single rows as noise, probability 0, and the rest in (0, 1]); nested blobs give
// the outer clusters under eom and the inner ones under leaf; allow_single_cluster keeps one
// cluster; cluster_selection_epsilon merges clusters born below it; max_cluster_size splits a
// cluster that is too large; duplicate rows (zero weights, infinite lambdas) are deterministic;
// predict as the nearest training row; identical bytes at threads 1, 2 and 3 (and the sabotage arm);
// each refusal named. The exact comparison with scikit-learn's own tree code is in
// python/tests/test_cluster3_peer.py.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::state_of;

std::vector<int64_t> fit_labels(const Data& x, const ml::Params& p) {
  auto est = ml::make_estimator("hdbscan", p);
  est->fit(x.X());
  return state_of(*est)["labels"].get<std::vector<int64_t>>();
}

// Rows i of blob c (c = i % k) at centers[c] + uniform[-s, s) in every feature.
Data blobs(const std::vector<std::vector<float>>& centers, int64_t n, float s, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data x;
  x.n = n;
  x.d = static_cast<int64_t>(centers[0].size());
  const int64_t k = static_cast<int64_t>(centers.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < x.d; ++f) x.x.push_back(centers[i % k][f] + s * rng.uniform_pm1());
  return x;
}

void add_row(Data& x, std::vector<float> r) {
  x.x.insert(x.x.end(), r.begin(), r.end());
  ++x.n;
}

// Same label within each blob (rows i % k), different labels across blobs; noise (-1) only where
// allow_noise, and then on at most a fifth of the rows.
void expect_blob_partition(const std::vector<int64_t>& lab, int64_t n, int64_t k, bool allow_noise = false) {
  std::map<int64_t, int64_t> blob_label;
  std::set<int64_t> seen;
  int64_t noise = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (lab[i] < 0) {
      EXPECT_TRUE(allow_noise) << i;
      ++noise;
      continue;
    }
    auto it = blob_label.emplace(i % k, lab[i]).first;
    EXPECT_EQ(lab[i], it->second) << i;
  }
  for (auto& [b, l] : blob_label) seen.insert(l);
  EXPECT_EQ(static_cast<int64_t>(blob_label.size()), k);
  EXPECT_EQ(static_cast<int64_t>(seen.size()), k);
  EXPECT_LE(5 * noise, n);
}

TEST(Hdbscan, SeparatedBlobsAndFarRowsAsNoise) {
  Data x = blobs({{0, 0}, {20, 0}, {0, 20}}, 150, 1.0f, 4);
  add_row(x, {60, 60});
  add_row(x, {-60, 60});
  for (const char* ms : {"none", "1", "3"}) {
    auto est = ml::make_estimator("hdbscan", {{"min_cluster_size", "10"}, {"min_samples", ms}});
    est->fit(x.X());
    const nlohmann::json st = state_of(*est);
    const std::vector<int64_t> lab = st["labels"].get<std::vector<int64_t>>();
    expect_blob_partition(lab, 150, 3);
    EXPECT_EQ(lab[150], -1);
    EXPECT_EQ(lab[151], -1);
    const std::vector<double> p = ml_common::f64_field(st, "probabilities_f64");
    for (int64_t i = 0; i < 150; ++i) EXPECT_TRUE(p[i] > 0.0 && p[i] <= 1.0) << i;
    EXPECT_EQ(p[150], 0.0);
    // predict: the nearest training row's label
    EXPECT_EQ(est->predict(x.X()).to_vector<int64_t>(), lab);
  }
}

TEST(Hdbscan, EomKeepsOuterClustersLeafTheInnerOnes) {
  // Two groups 100 apart, each two blobs 3 apart: eom prefers the two groups (their
  // stability dominates), leaf the four blobs.
  const Data x = blobs({{0, 0}, {3, 0}, {100, 0}, {103, 0}}, 200, 1.0f, 8);
  const std::vector<int64_t> leaf = fit_labels(x, {{"min_cluster_size", "15"}, {"cluster_selection_method", "leaf"}});
  expect_blob_partition(leaf, 200, 4, true);
  const std::vector<int64_t> eom = fit_labels(x, {{"min_cluster_size", "15"}});
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(eom[i], eom[i % 4 < 2 ? 0 : 2]) << i;
  EXPECT_NE(eom[0], eom[2]);
  // cluster_selection_epsilon above the blobs' separation: leaf selection climbs to the groups.
  const std::vector<int64_t> merged = fit_labels(
      x, {{"min_cluster_size", "15"}, {"cluster_selection_method", "leaf"}, {"cluster_selection_epsilon", "10"}});
  int64_t noise = 0;
  for (int64_t i = 0; i < 200; ++i) {
    noise += merged[i] < 0;
    if (merged[i] >= 0) EXPECT_EQ(merged[i], merged[i % 4 < 2 ? 0 : 2]) << i;
  }
  EXPECT_LE(5 * noise, 200);
  // max_cluster_size below a group's size: eom must take the blobs.
  const std::vector<int64_t> small = fit_labels(x, {{"min_cluster_size", "15"}, {"max_cluster_size", "60"}});
  expect_blob_partition(small, 200, 4, true);
}

TEST(Hdbscan, AllowSingleCluster) {
  const Data x = blobs({{0, 0}}, 80, 1.0f, 2);
  EXPECT_EQ(fit_labels(x, {{"min_cluster_size", "50"}}), std::vector<int64_t>(80, -1));
  const std::vector<int64_t> one = fit_labels(x, {{"min_cluster_size", "50"}, {"allow_single_cluster", "true"}});
  int64_t clustered = 0;
  for (int64_t l : one) {
    EXPECT_TRUE(l == 0 || l == -1);
    clustered += l == 0;
  }
  EXPECT_GT(clustered, 0);
}

TEST(Hdbscan, DuplicateRowsAreDeterministic) {
  // Every row four times: zero weights (infinite lambdas) and many ties.
  Data x = blobs({{0, 0}, {10, 10}}, 40, 1.0f, 6);
  const Data once = x;
  for (int r = 0; r < 3; ++r) {
    x.x.insert(x.x.end(), once.x.begin(), once.x.end());
    x.n += once.n;
  }
  auto a = ml::make_estimator("hdbscan", {{"min_cluster_size", "8"}});
  a->fit(x.X());
  auto b = ml::make_estimator("hdbscan", {{"min_cluster_size", "8"}});
  b->fit(x.X());
  EXPECT_EQ(a->to_json_text(), b->to_json_text());
  const std::vector<int64_t> lab = state_of(*a)["labels"].get<std::vector<int64_t>>();
  for (int64_t i = 0; i < x.n; ++i) EXPECT_EQ(lab[i], lab[i % 40]) << i;
  for (double p : ml_common::f64_field(state_of(*a), "probabilities_f64")) EXPECT_TRUE(p >= 0.0 && p <= 1.0);
}

TEST(Hdbscan, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = ml_common::uniform_blobs(700, 3, 3, 4.0f, 3);
  for (const char* method : {"eom", "leaf"}) {
    const ml::Params p{{"min_cluster_size", "12"}, {"cluster_selection_method", method}};
    ml_common::expect_same_bytes_at_threads_123("hdbscan", p, x.X(), Tensor(), x.X());
    ml_common::expect_input_change_moves_the_model("hdbscan", p, x, 3.0f);
  }
}

TEST(Hdbscan, RefusalsAreNamed) {
  const Data x = ml_common::uniform_blobs(10, 2, 2, 4.0f, 1);
  EXPECT_NE(error_of([] { ml::make_estimator("hdbscan", {{"min_cluster_size", "1"}}); }).find("min_cluster_size"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("hdbscan", {{"alpha", "0"}}); }).find("alpha"), std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("hdbscan", {{"min_samples", "0"}}); }).find("min_samples"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("hdbscan", {{"cluster_selection_method", "x"}}); })
                .find("cluster_selection_method"),
            std::string::npos);
  auto fit_error = [&](const ml::Params& p, const Data& d) {
    return error_of([&] { ml::make_estimator("hdbscan", p)->fit(d.X()); });
  };
  EXPECT_NE(fit_error({{"min_samples", "11"}}, x).find("min_samples"), std::string::npos);
  EXPECT_NE(fit_error({{"min_samples", "2.5"}}, x).find("min_samples"), std::string::npos);
  EXPECT_NE(fit_error({}, ml_common::uniform_blobs(1, 2, 1, 1.0f, 1)).find("more than one sample"), std::string::npos);
  ml_common::expect_predict_before_fit_refused_and_state_round_trip("hdbscan", x.X());
}

}  // namespace
}  // namespace bl
