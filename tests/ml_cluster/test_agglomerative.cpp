// test_agglomerative.cpp: agglomerative_clustering against a naive float64 agglomeration (every
// step merges the closest pair of clusters by the linkage's definition on the member rows: ward
// sqrt(2 n_a n_b / (n_a + n_b)) |c_a - c_b|, complete the largest, average the mean, single the
// smallest pairwise distance) on tie-free data: the same merges (as sets of rows), distances and
// partitions for all four linkages and both metrics; scikit-learn's cut numbering on a hand-checked
// tree; distance_threshold; duplicate rows (ties); predict as the nearest training row; identical
// bytes at threads 1, 2 and 3 (and the sabotage arm); each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
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
using ml_common::state_of;

// n rows in 3 blobs 4 apart with spread 1 (uniform), random enough that no two distances tie.
Data make_data(int64_t n, int64_t d, uint64_t seed) { return ml_common::uniform_blobs(n, d, 3, 4.0f, seed); }

struct Tree {
  std::vector<std::set<int64_t>> merges;  // rows under each merge, in merge order
  std::vector<double> dist;
  std::vector<std::vector<std::set<int64_t>>> partitions;  // partitions[k]: the clusters after k merges
};

double row_dist(const Data& x, int64_t a, int64_t b, bool manhattan) {
  double s = 0;
  for (int64_t f = 0; f < x.d; ++f) {
    double t = static_cast<double>(x.x[a * x.d + f]) - static_cast<double>(x.x[b * x.d + f]);
    s += manhattan ? std::fabs(t) : t * t;
  }
  return manhattan ? s : std::sqrt(s);
}

double linkage_dist(const Data& x, const std::set<int64_t>& A, const std::set<int64_t>& B, const std::string& link,
                    bool manhattan) {
  if (link == "ward") {
    double s = 0;
    for (int64_t f = 0; f < x.d; ++f) {
      double ca = 0, cb = 0;
      for (int64_t a : A) ca += x.x[a * x.d + f];
      for (int64_t b : B) cb += x.x[b * x.d + f];
      double t = ca / A.size() - cb / B.size();
      s += t * t;
    }
    const double na = static_cast<double>(A.size()), nb = static_cast<double>(B.size());
    return std::sqrt(2.0 * na * nb / (na + nb)) * std::sqrt(s);
  }
  double mn = std::numeric_limits<double>::infinity(), mx = 0, sum = 0;
  for (int64_t a : A)
    for (int64_t b : B) {
      const double v = row_dist(x, a, b, manhattan);
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      sum += v;
    }
  if (link == "single") return mn;
  if (link == "complete") return mx;
  return sum / static_cast<double>(A.size() * B.size());
}

// The naive O(n^3) agglomeration: the closest pair of current clusters, lowest (i, j) on ties.
Tree naive(const Data& x, const std::string& link, bool manhattan) {
  std::vector<std::set<int64_t>> cl;
  for (int64_t i = 0; i < x.n; ++i) cl.push_back({i});
  Tree t;
  t.partitions.push_back(cl);
  while (cl.size() > 1) {
    double best = std::numeric_limits<double>::infinity();
    size_t bi = 0, bj = 1;
    for (size_t i = 0; i < cl.size(); ++i)
      for (size_t j = i + 1; j < cl.size(); ++j) {
        const double v = linkage_dist(x, cl[i], cl[j], link, manhattan);
        if (v < best) {
          best = v;
          bi = i;
          bj = j;
        }
      }
    cl[bi].insert(cl[bj].begin(), cl[bj].end());
    t.merges.push_back(cl[bi]);
    t.dist.push_back(best);
    cl.erase(cl.begin() + static_cast<std::ptrdiff_t>(bj));
    t.partitions.push_back(cl);
  }
  return t;
}

std::vector<double> distances_of(const nlohmann::json& st) {
  std::vector<int64_t> bits = ml::i64_from_hex(st["distances_f64"].get<std::string>(), "d");
  std::vector<double> v(bits.size());
  std::memcpy(v.data(), bits.data(), bits.size() * sizeof(double));
  return v;
}

// The rows under every node of children [n - 1, 2] (scikit-learn numbering).
std::vector<std::set<int64_t>> node_rows(const std::vector<int64_t>& ch, int64_t n) {
  std::vector<std::set<int64_t>> rows(static_cast<size_t>(2 * n - 1));
  for (int64_t i = 0; i < n; ++i) rows[i] = {i};
  for (int64_t k = 0; k < n - 1; ++k) {
    EXPECT_LT(ch[2 * k], n + k);
    EXPECT_LT(ch[2 * k + 1], n + k);
    rows[n + k] = rows[ch[2 * k]];
    rows[n + k].insert(rows[ch[2 * k + 1]].begin(), rows[ch[2 * k + 1]].end());
  }
  return rows;
}

std::set<std::set<int64_t>> partition_of(const std::vector<int64_t>& labels) {
  std::map<int64_t, std::set<int64_t>> m;
  for (size_t i = 0; i < labels.size(); ++i) m[labels[i]].insert(static_cast<int64_t>(i));
  std::set<std::set<int64_t>> out;
  for (auto& [k, s] : m) out.insert(s);
  return out;
}

TEST(AgglomerativeClustering, MatchesTheNaiveAgglomerationOnTieFreeData) {
  const Data x = make_data(60, 3, 5);
  for (const char* link : {"ward", "complete", "average", "single"})
    for (bool manhattan : {false, true}) {
      if (manhattan && std::string(link) == "ward") continue;
      const Tree ref = naive(x, link, manhattan);
      for (int64_t k : {1, 2, 3, 7, 60}) {
        auto est = ml::make_estimator("agglomerative_clustering",
                                      {{"linkage", link},
                                       {"metric", manhattan ? "manhattan" : "euclidean"},
                                       {"n_clusters", std::to_string(k)}});
        est->fit(x.X());
        const nlohmann::json st = state_of(*est);
        const std::vector<int64_t> ch = st["children"].get<std::vector<int64_t>>();
        const std::vector<double> dist = distances_of(st);
        const auto rows = node_rows(ch, x.n);
        for (int64_t m = 0; m < x.n - 1; ++m) {
          EXPECT_EQ(rows[x.n + m], ref.merges[m]) << link << " merge " << m;
          EXPECT_NEAR(dist[m], ref.dist[m], 1e-9 * ref.dist[m]) << link << " merge " << m;
        }
        const std::vector<int64_t> lab = st["labels"].get<std::vector<int64_t>>();
        const auto& part = ref.partitions[x.n - k];
        EXPECT_EQ(partition_of(lab), std::set<std::set<int64_t>>(part.begin(), part.end())) << link << " k=" << k;
        for (int64_t l : lab) EXPECT_TRUE(l >= 0 && l < k);
        // predict: the nearest training row's label, so the fit labels on the training rows
        EXPECT_EQ(est->predict(x.X()).to_vector<int64_t>(), lab) << link;
      }
    }
}

TEST(AgglomerativeClustering, CutNumbersClustersAsScikitLearn) {
  // Rows 0, 1 close, 2, 3 close, 4 far: single linkage merges (0,1)=5, (2,3)=6, (5,6)=7, (7,4)=8
  // (scikit-learn's single linkage keeps the order of the spanning tree's edge ends).
  // _hc_cut with 3 clusters: heap [-8] -> [-7, -4] -> [-6, -4, -5]: labels 2 2 0 0 1.
  Data x;
  x.n = 5;
  x.d = 1;
  x.x = {0.0f, 0.1f, 1.0f, 1.25f, 10.0f};
  auto est = ml::make_estimator("agglomerative_clustering", {{"linkage", "single"}, {"n_clusters", "3"}});
  est->fit(x.X());
  const nlohmann::json st = state_of(*est);
  EXPECT_EQ(st["children"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 1, 2, 3, 5, 6, 7, 4}));
  EXPECT_EQ(st["labels"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 2, 0, 0, 1}));
  // predict: the nearest training row (0.4 is nearer row 1 than row 2)
  Tensor q = Tensor::from_vector(std::vector<float>{0.4f, 1.2f, 7.0f}, {3, 1});
  EXPECT_EQ(est->predict(q).to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 1}));
}

TEST(AgglomerativeClustering, DistanceThresholdCountsTheMergesAtOrAbove) {
  const Data x = make_data(40, 2, 9);
  for (const char* link : {"ward", "average"}) {
    auto full = ml::make_estimator("agglomerative_clustering", {{"linkage", link}});
    full->fit(x.X());
    const std::vector<double> dist = distances_of(state_of(*full));
    for (int64_t m : {0, 20, 37, 38}) {
      const double th = dist[m];  // merges m.. are >= th
      auto est = ml::make_estimator("agglomerative_clustering", {{"linkage", link},
                                                                 {"n_clusters", "none"},
                                                                 {"distance_threshold", ml::param_text(th)}});
      est->fit(x.X());
      const nlohmann::json st = state_of(*est);
      const int64_t k = x.n - 1 - m + 1;
      EXPECT_EQ(st["n_clusters"].get<int64_t>(), k) << link << " " << m;
      auto byk = ml::make_estimator("agglomerative_clustering", {{"linkage", link}, {"n_clusters", std::to_string(k)}});
      byk->fit(x.X());
      EXPECT_EQ(st["labels"], state_of(*byk)["labels"]);
    }
  }
}

TEST(AgglomerativeClustering, DuplicateRowsAndTies) {
  // Every row twice plus a grid with equal distances: the fit is deterministic, duplicates merge
  // first at distance 0 and share a label.
  Data x;
  x.d = 2;
  for (int rep = 0; rep < 2; ++rep)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        x.x.push_back(static_cast<float>(i));
        x.x.push_back(static_cast<float>(j));
      }
  x.n = 32;
  for (const char* link : {"ward", "complete", "average", "single"}) {
    auto est = ml::make_estimator("agglomerative_clustering", {{"linkage", link}, {"n_clusters", "16"}});
    est->fit(x.X());
    const nlohmann::json st = state_of(*est);
    const std::vector<double> dist = distances_of(st);
    for (int m = 0; m < 16; ++m) EXPECT_EQ(dist[m], 0.0) << link;
    for (int m = 1; m < 31; ++m) EXPECT_LE(dist[m - 1], dist[m]) << link;
    const std::vector<int64_t> lab = st["labels"].get<std::vector<int64_t>>();
    for (int i = 0; i < 16; ++i) EXPECT_EQ(lab[i], lab[i + 16]) << link;
    EXPECT_EQ(partition_of(lab).size(), 16u);
    auto again = ml::make_estimator("agglomerative_clustering", {{"linkage", link}, {"n_clusters", "16"}});
    again->fit(x.X());
    EXPECT_EQ(again->to_json_text(), est->to_json_text());
  }
}

TEST(AgglomerativeClustering, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = make_data(150, 4, 3);
  for (const char* link : {"ward", "single"}) {
    const ml::Params p{{"linkage", link}, {"n_clusters", "4"}};
    ml_common::expect_same_bytes_at_threads_123("agglomerative_clustering", p, x.X(), Tensor(), x.X());
    ml_common::expect_input_change_moves_the_model("agglomerative_clustering", p, x, 3.0f);
  }
}

TEST(AgglomerativeClustering, RefusalsAreNamed) {
  const Data x = make_data(10, 2, 1);
  EXPECT_NE(error_of([] { ml::make_estimator("agglomerative_clustering", {{"linkage", "centroid"}}); }).find("linkage"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("agglomerative_clustering", {{"n_clusters", "0"}}); }).find("n_clusters"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("agglomerative_clustering", {{"distance_threshold", "-1"}}); })
                .find("distance_threshold"),
            std::string::npos);
  auto fit_error = [&](const ml::Params& p, const Data& d) {
    return error_of([&] { ml::make_estimator("agglomerative_clustering", p)->fit(d.X()); });
  };
  EXPECT_NE(fit_error({{"linkage", "ward"}, {"metric", "manhattan"}}, x).find("ward"), std::string::npos);
  EXPECT_NE(fit_error({{"distance_threshold", "1"}}, x).find("exactly one"), std::string::npos);
  EXPECT_NE(fit_error({{"n_clusters", "none"}}, x).find("exactly one"), std::string::npos);
  EXPECT_NE(fit_error({{"n_clusters", "11"}}, x).find("n_clusters"), std::string::npos);
  EXPECT_NE(fit_error({}, make_data(1, 2, 1)).find("at least 2 rows"), std::string::npos);
  EXPECT_NE(fit_error({}, make_data(16385, 1, 1)).find("limit"), std::string::npos);
  auto est = ml::make_estimator("agglomerative_clustering");
  EXPECT_NE(error_of([&] { est->predict(x.X()); }).find("before fit"), std::string::npos);
  est->fit(x.X());
  EXPECT_NE(error_of([&] { est->predict(make_data(3, 3, 1).X()); }).find("agglomerative_clustering"),
            std::string::npos);
}

}  // namespace
}  // namespace bl
