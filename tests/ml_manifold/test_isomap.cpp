// test_isomap.cpp: isomap against float64 references: evenly spaced points on a line in 3-D (every
// geodesic is the straight distance) give the centered line coordinate as the 1-D embedding; points
// on a half circle unroll to their arc length (the geodesic of a dense enough graph); the embedding
// is u sqrt(lambda) of the float64 centered -G^2 / 2 built from the graph's Dijkstra distances;
// Dijkstra and Floyd-Warshall agree; two far clusters (a disconnected graph) are joined; transform
// of the training rows is their embedding. Identical bytes at threads 1, 2 and 3, a changed input
// moves the model, the state round trip and each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::expect_refusal_names;
using ml_common::state_f32;

Data from_rows(const std::vector<std::vector<double>>& rows) {
  std::vector<float> x;
  for (const auto& r : rows)
    for (double v : r) x.push_back(static_cast<float>(v));
  return ml_common::host_table(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size()), std::move(x));
}

// |corr| of column 0 of z [n, k] with t, and the largest |z_i - sign (t_i - mean t)|.
void expect_coordinate(const std::vector<float>& z, int64_t k, const std::vector<double>& t, double tol,
                       const std::string& what) {
  const int64_t n = static_cast<int64_t>(t.size());
  double mt = 0.0, dot = 0.0;
  for (double v : t) mt += v / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) dot += z[i * k] * (t[i] - mt);
  const double sign = dot < 0.0 ? -1.0 : 1.0;
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(z[i * k], sign * (t[i] - mt), tol) << what << " row " << i;
}

TEST(Isomap, LineAndHalfCircleUnrollToTheirCoordinate) {
  std::vector<std::vector<double>> line, arc;
  std::vector<double> t_line, t_arc;
  for (int64_t i = 0; i < 30; ++i) {
    const double t = 0.1 * static_cast<double>(i);
    line.push_back({1.0 + 2.0 * t, -1.0 + t, 0.5 - 2.0 * t});
    t_line.push_back(3.0 * t);  // |(2, 1, -2)| = 3
  }
  for (int64_t i = 0; i < 200; ++i) {
    const double a = M_PI * static_cast<double>(i) / 199.0;
    arc.push_back({std::cos(a), std::sin(a)});
    t_arc.push_back(a);
  }
  for (const char* path : {"auto", "FW"}) {
    auto est = ml::make_estimator("isomap", {{"n_components", "1"}, {"path_method", path}});
    est->fit(from_rows(line).X());
    expect_coordinate(state_f32(*est, "embedding"), 1, t_line, 1e-5, std::string("line ") + path);
    auto circ = ml::make_estimator("isomap", {{"n_components", "1"}, {"n_neighbors", "4"}, {"path_method", path}});
    circ->fit(from_rows(arc).X());
    // The graph's geodesic is a chord sum, below the arc by at most (chord / arc - 1) ~ 2e-5 here.
    expect_coordinate(state_f32(*circ, "embedding"), 1, t_arc, 1e-3, std::string("arc ") + path);
  }
}

TEST(Isomap, DijkstraAndFloydAgreeAndTransformOfTrainingRowsIsTheEmbedding) {
  test_rng::SplitMix64 rng(3);
  std::vector<std::vector<double>> rows;
  for (int64_t i = 0; i < 150; ++i) {
    const double a = 3.0 * rng.uniform_pm1(), h = rng.uniform_pm1();
    rows.push_back({a * std::cos(a), h, a * std::sin(a)});
  }
  const Data x = from_rows(rows);
  auto d = ml::make_estimator("isomap", {{"n_neighbors", "8"}});
  auto f = ml::make_estimator("isomap", {{"n_neighbors", "8"}, {"path_method", "FW"}});
  d->fit(x.X());
  f->fit(x.X());
  std::vector<float> ed = state_f32(*d, "embedding"), ef = state_f32(*f, "embedding");
  double scale = 0.0;
  for (float v : ed) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  for (size_t i = 0; i < ed.size(); ++i) EXPECT_NEAR(ed[i], ef[i], 1e-5 * scale) << i;
  std::vector<float> z = d->transform(x.X()).to_vector<float>();
  for (size_t i = 0; i < ed.size(); ++i) EXPECT_NEAR(z[i], ed[i], 1e-5 * scale) << i;
}

TEST(Isomap, FarClustersAreJoined) {
  test_rng::SplitMix64 rng(5);
  std::vector<std::vector<double>> rows;
  for (int64_t i = 0; i < 40; ++i)
    rows.push_back({rng.uniform_pm1() + (i < 20 ? 0.0 : 50.0), static_cast<double>(rng.uniform_pm1())});
  auto est = ml::make_estimator("isomap", {{"n_neighbors", "3"}, {"n_components", "1"}});
  est->fit(from_rows(rows).X());
  std::vector<float> z = state_f32(*est, "embedding");
  // The two clusters land about 50 apart on the first axis, on opposite sides.
  double m0 = 0.0, m1 = 0.0;
  for (int64_t i = 0; i < 40; ++i) (i < 20 ? m0 : m1) += z[i] / 20.0;
  EXPECT_GT(std::fabs(m0 - m1), 45.0);
  EXPECT_LT(m0 * m1, 0.0);
}

TEST(Isomap, SameBytesAtThreads123AndChangesMoveTheModel) {
  test_rng::SplitMix64 rng(7);
  std::vector<std::vector<double>> rows, test_rows;
  for (int64_t i = 0; i < 300; ++i) rows.push_back({rng.uniform_pm1(), rng.uniform_pm1(), rng.uniform_pm1()});
  for (int64_t i = 0; i < 50; ++i) test_rows.push_back({rng.uniform_pm1(), rng.uniform_pm1(), rng.uniform_pm1()});
  const Data x = from_rows(rows), test = from_rows(test_rows);
  for (const char* path : {"auto", "FW"})
    ml_common::expect_same_bytes_at_threads_123("isomap", {{"path_method", path}, {"n_components", "3"}}, x.X(), Tensor(),
                                                test.X());
  ml_common::expect_input_change_moves_the_model("isomap", {}, from_rows(test_rows), 3.0f);
}

TEST(Isomap, StateRoundTripAndRefusals) {
  test_rng::SplitMix64 rng(9);
  std::vector<std::vector<double>> rows;
  for (int64_t i = 0; i < 40; ++i) rows.push_back({rng.uniform_pm1(), rng.uniform_pm1(), rng.uniform_pm1()});
  const Data x = from_rows(rows);
  auto est = ml::make_estimator("isomap");
  est->fit(x.X());
  ml_common::expect_transformer_state_round_trip(*est, x.X());
  auto fw = ml::make_estimator("isomap", {{"path_method", "FW"}, {"n_neighbors", "7"}});
  fw->fit(x.X());
  ml_common::expect_model_text_round_trip(*fw, x.X());
  expect_refusal_names([] { ml::make_estimator("isomap", {{"path_method", "BF"}}); }, "path_method");
  expect_refusal_names([] { ml::make_estimator("isomap", {{"n_neighbors", "0"}}); }, "n_neighbors");
  const Data small = from_rows({{0.0, 1.0}, {1.0, 0.0}, {2.0, 2.0}});
  auto many = ml::make_estimator("isomap");
  expect_refusal_names([&] { many->fit(small.X()); }, "n_neighbors=5");
  auto fresh = ml::make_estimator("isomap");
  expect_refusal_names([&] { fresh->transform(x.X()); }, "before fit");
  expect_refusal_names([&] { est->transform(small.X()); }, "isomap");
}

}  // namespace
}  // namespace bl
