// test_optics.cpp: optics against a naive float64 OPTICS (full distance matrix, the same
// processing rule) on tie-free blobs: the same ordering, predecessors, core distances and
// reachabilities; the published six-point example (ordering, core distances, reachabilities,
// predecessors, xi and dbscan labels); ties on a grid broken by the lowest index; max_eps and the
// dbscan extraction against a direct count; predict as the nearest training row; identical bytes at
// threads 1, 2 and 3 (and the sabotage arm); each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::state_of;
constexpr double kInf = std::numeric_limits<double>::infinity();

double dist(const Data& x, int64_t a, int64_t b) {
  double s = 0;
  for (int64_t f = 0; f < x.d; ++f) {
    const double t = static_cast<double>(x.x[a * x.d + f]) - static_cast<double>(x.x[b * x.d + f]);
    s += t * t;
  }
  return std::sqrt(s);
}

struct Graph {
  std::vector<int64_t> ordering, pred;
  std::vector<double> core, reach;
};

// Naive OPTICS: the full matrix, sorted rows for the core distances, no rounding.
Graph naive(const Data& x, int64_t min_samples, double max_eps) {
  const int64_t n = x.n;
  Graph g;
  std::vector<std::vector<double>> D(n, std::vector<double>(n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) D[i][j] = dist(x, i, j);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> r = D[i];
    std::sort(r.begin(), r.end());
    g.core.push_back(r[min_samples - 1] > max_eps ? kInf : r[min_samples - 1]);
  }
  g.reach.assign(n, kInf);
  g.pred.assign(n, -1);
  std::vector<bool> done(n, false);
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = -1;
    for (int64_t j = 0; j < n; ++j)
      if (!done[j] && (p < 0 || g.reach[j] < g.reach[p])) p = j;
    done[p] = true;
    g.ordering.push_back(p);
    if (std::isinf(g.core[p])) continue;
    for (int64_t j = 0; j < n; ++j)
      if (!done[j] && D[p][j] <= max_eps && std::max(D[p][j], g.core[p]) < g.reach[j]) {
        g.reach[j] = std::max(D[p][j], g.core[p]);
        g.pred[j] = p;
      }
  }
  return g;
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isinf(b[i])) {
      EXPECT_TRUE(std::isinf(a[i])) << i;
    } else {
      EXPECT_NEAR(a[i], b[i], 1e-13 * (1 + b[i])) << i;
    }
  }
}

TEST(Optics, MatchesTheNaiveGraphOnTieFreeData) {
  const Data x = ml_common::uniform_blobs(90, 3, 3, 4.0f, 11);
  for (int64_t ms : {2, 5, 12})
    for (double max_eps : {kInf, 1.0}) {
      const Graph ref = naive(x, ms, max_eps);
      auto est = ml::make_estimator("optics", {{"min_samples", std::to_string(ms)},
                                               {"max_eps", std::isinf(max_eps) ? "inf" : ml::param_text(max_eps)}});
      est->fit(x.X());
      const nlohmann::json st = state_of(*est);
      EXPECT_EQ(st["ordering"].get<std::vector<int64_t>>(), ref.ordering) << ms;
      EXPECT_EQ(st["predecessor"].get<std::vector<int64_t>>(), ref.pred) << ms;
      expect_close(ml_common::f64_field(st, "core_distances_f64"), ref.core);
      expect_close(ml_common::f64_field(st, "reachability_f64"), ref.reach);
      // dbscan extraction at eps: a row starting a cluster has reach > eps and core <= eps.
      auto db = ml::make_estimator("optics", {{"min_samples", std::to_string(ms)}, {"cluster_method", "dbscan"},
                                              {"eps", "0.8"}});
      db->fit(x.X());
      const std::vector<int64_t> lab = state_of(*db)["labels"].get<std::vector<int64_t>>();
      const Graph full = naive(x, ms, kInf);
      int64_t label = -1;
      for (int64_t p : full.ordering) {
        const bool far = full.reach[p] > 0.8, core = full.core[p] <= 0.8;
        if (far && core) ++label;
        EXPECT_EQ(lab[p], far && !core ? -1 : label);
      }
      // predict: the nearest training row's label
      EXPECT_EQ(est->predict(x.X()).to_vector<int64_t>(), st["labels"].get<std::vector<int64_t>>());
    }
}

TEST(Optics, PublishedSixPointExample) {
  Data x;
  x.n = 6;
  x.d = 2;
  x.x = {1, 2, 2, 5, 3, 6, 8, 7, 8, 8, 7, 3};
  auto est = ml::make_estimator("optics", {{"min_samples", "2"}});
  est->fit(x.X());
  const nlohmann::json st = state_of(*est);
  EXPECT_EQ(st["ordering"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 1, 2, 5, 3, 4}));
  EXPECT_EQ(st["predecessor"].get<std::vector<int64_t>>(), (std::vector<int64_t>{-1, 0, 1, 5, 3, 2}));
  expect_close(ml_common::f64_field(st, "core_distances_f64"),
               {std::sqrt(10.0), std::sqrt(2.0), std::sqrt(2.0), 1.0, 1.0, std::sqrt(17.0)});
  expect_close(ml_common::f64_field(st, "reachability_f64"), {kInf, std::sqrt(10.0), std::sqrt(2.0), std::sqrt(17.0), 1.0, 5.0});
  EXPECT_EQ(st["labels"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  auto db = ml::make_estimator("optics", {{"min_samples", "2"}, {"cluster_method", "dbscan"}, {"eps", "4.5"}});
  db->fit(x.X());
  EXPECT_EQ(state_of(*db)["labels"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
}

TEST(Optics, TiesGoToTheLowestIndex) {
  // A 4 x 4 unit grid: every reachability ties; the next row is always the lowest index among the
  // smallest, so the walk is the naive one (which uses the same rule). Sabotage: the naive walk
  // with ties to the highest index gives another ordering.
  Data x;
  x.d = 2;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      x.x.push_back(static_cast<float>(i));
      x.x.push_back(static_cast<float>(j));
    }
  x.n = 16;
  auto est = ml::make_estimator("optics", {{"min_samples", "3"}});
  est->fit(x.X());
  const std::vector<int64_t> ord = state_of(*est)["ordering"].get<std::vector<int64_t>>();
  EXPECT_EQ(ord, naive(x, 3, kInf).ordering);
  Data rev = x;  // rows reversed: the ordering is not the mirror of ord (the rule names indices)
  for (int64_t i = 0; i < 16; ++i)
    for (int f = 0; f < 2; ++f) rev.x[i * 2 + f] = x.x[(15 - i) * 2 + f];
  auto r = ml::make_estimator("optics", {{"min_samples", "3"}});
  r->fit(rev.X());
  std::vector<int64_t> mirrored;
  for (int64_t p : state_of(*r)["ordering"].get<std::vector<int64_t>>()) mirrored.push_back(15 - p);
  EXPECT_NE(mirrored, ord);
}

TEST(Optics, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = ml_common::uniform_blobs(700, 4, 3, 4.0f, 3);
  for (const char* method : {"xi", "dbscan"}) {
    const ml::Params p{{"min_samples", "6"}, {"cluster_method", method}, {"eps", "1"}};
    ml_common::expect_same_bytes_at_threads_123("optics", p, x.X(), Tensor(), x.X());
    ml_common::expect_input_change_moves_the_model("optics", p, x, 3.0f);
  }
}

TEST(Optics, RefusalsAreNamed) {
  const Data x = ml_common::uniform_blobs(10, 2, 2, 4.0f, 1);
  EXPECT_NE(error_of([] { ml::make_estimator("optics", {{"min_samples", "0"}}); }).find("min_samples"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("optics", {{"cluster_method", "kmeans"}}); }).find("cluster_method"),
            std::string::npos);
  auto fit_error = [&](const ml::Params& p) { return error_of([&] { ml::make_estimator("optics", p)->fit(x.X()); }); };
  EXPECT_NE(fit_error({{"min_samples", "11"}}).find("no greater"), std::string::npos);
  EXPECT_NE(fit_error({{"min_samples", "2.5"}}).find("min_samples"), std::string::npos);
  EXPECT_NE(fit_error({{"xi", "1.5"}}).find("xi"), std::string::npos);
  EXPECT_NE(fit_error({{"cluster_method", "dbscan"}, {"eps", "2"}, {"max_eps", "1"}}).find("max_eps"),
            std::string::npos);
  EXPECT_NE(fit_error({{"min_cluster_size", "20"}}).find("min_cluster_size"), std::string::npos);
  ml_common::expect_predict_before_fit_refused_and_state_round_trip("optics", x.X());
}

}  // namespace
}  // namespace bl
