// test_birch.cpp: birch on hand-checked trees: merges under the threshold, leaf and root splits with
// branching_factor 2 (the farthest pair seeds the halves, a subcluster equally far from both seeds
// goes to the second, split leaves are replaced in place), the global agglomerative step,
// predict as the nearest subcluster's label and transform as the distances to the centers; a tiny
// threshold keeps every row as its own subcluster; identical bytes at threads 1, 2 and 3 (and the
// sabotage arm); each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::state_of;

Data column(std::vector<float> v) {
  Data x;
  x.n = static_cast<int64_t>(v.size());
  x.d = 1;
  x.x = std::move(v);
  return x;
}

TEST(Birch, MergesUnderTheThreshold) {
  const Data x = column({0.0f, 0.5f, 5.0f, 5.5f, 10.0f});
  auto est = ml::make_estimator("birch", {{"n_clusters", "none"}, {"threshold", "0.5"}});
  est->fit(x.X());
  nlohmann::json st = state_of(*est);
  EXPECT_EQ(ml_common::f64_field(st, "subcluster_centers_f64"), (std::vector<double>{0.25, 5.25, 10.0}));
  EXPECT_EQ(st["labels"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 0, 1, 1, 2}));
  // radius of {0, 0.5} is 0.25 <= 0.2 fails: every row its own subcluster.
  auto tight = ml::make_estimator("birch", {{"n_clusters", "none"}, {"threshold", "0.2"}});
  tight->fit(x.X());
  EXPECT_EQ(ml_common::f64_field(state_of(*tight), "subcluster_centers_f64"), (std::vector<double>{0.0, 0.5, 5.0, 5.5, 10.0}));
  // n_clusters=2: ward on the centers 0.25, 5.25, 10 joins the last two.
  auto two = ml::make_estimator("birch", {{"n_clusters", "2"}, {"threshold", "0.5"}});
  two->fit(x.X());
  const std::vector<int64_t> lab = state_of(*two)["labels"].get<std::vector<int64_t>>();
  EXPECT_EQ(lab[0], lab[1]);
  EXPECT_EQ(lab[2], lab[3]);
  EXPECT_EQ(lab[2], lab[4]);
  EXPECT_NE(lab[0], lab[2]);
  // predict: the nearest center's label; transform: the distances to the centers.
  const Tensor q = Tensor::from_vector(std::vector<float>{1.0f, 8.0f}, {2, 1});
  EXPECT_EQ(two->predict(q).to_vector<int64_t>(), (std::vector<int64_t>{lab[0], lab[4]}));
  EXPECT_EQ(est->transform(q).to_vector<float>(), (std::vector<float>{0.75f, 4.25f, 9.0f, 7.75f, 2.75f, 2.0f}));
}

TEST(Birch, SplitsWithBranchingFactorTwo) {
  // Rows 0, 10, 20, 30 (no merges). The third row overflows the root leaf: seeds 0 and 20, and 10
  // (equally far from both) goes to the second half: leaves [0] [10, 20]. Row 30 overflows the
  // second leaf: seeds 10 and 30, 20 to the second: [10] [20, 30] in its place; the root then holds
  // three entries and splits. Leaves left to right: [0] [10] [20, 30].
  const Data x = column({0.0f, 10.0f, 20.0f, 30.0f});
  auto est = ml::make_estimator("birch", {{"n_clusters", "none"}, {"branching_factor", "2"}});
  est->fit(x.X());
  EXPECT_EQ(ml_common::f64_field(state_of(*est), "subcluster_centers_f64"), (std::vector<double>{0.0, 10.0, 20.0, 30.0}));
  // Rows in the other order: 30, 20, 10, 0 gives leaves [30] [20] [10, 0].
  auto rev = ml::make_estimator("birch", {{"n_clusters", "none"}, {"branching_factor", "2"}});
  rev->fit(column({30.0f, 20.0f, 10.0f, 0.0f}).X());
  EXPECT_EQ(ml_common::f64_field(state_of(*rev), "subcluster_centers_f64"), (std::vector<double>{30.0, 20.0, 10.0, 0.0}));
}

TEST(Birch, TinyThresholdKeepsEveryRowAndLabelsFollowTheCenters) {
  const Data x = ml_common::uniform_blobs(200, 3, 3, 4.0f, 9);
  auto est = ml::make_estimator("birch", {{"n_clusters", "none"}, {"threshold", "1e-6"}, {"branching_factor", "4"}});
  est->fit(x.X());
  const nlohmann::json st = state_of(*est);
  std::vector<double> c = ml_common::f64_field(st, "subcluster_centers_f64");
  ASSERT_EQ(static_cast<int64_t>(c.size()), x.n * x.d);
  std::vector<std::vector<double>> got, want;
  for (int64_t i = 0; i < x.n; ++i) {
    got.emplace_back(c.begin() + i * x.d, c.begin() + (i + 1) * x.d);
    want.emplace_back(x.x.begin() + i * x.d, x.x.begin() + (i + 1) * x.d);
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  // each row's label is the subcluster holding the row itself
  const std::vector<int64_t> lab = st["labels"].get<std::vector<int64_t>>();
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t f = 0; f < x.d; ++f) EXPECT_EQ(c[lab[i] * x.d + f], static_cast<double>(x.x[i * x.d + f]));
  // n_clusters=3 on well-separated blobs: the blobs
  auto three = ml::make_estimator("birch", {{"threshold", "0.5"}});
  three->fit(x.X());
  const std::vector<int64_t> l3 = state_of(*three)["labels"].get<std::vector<int64_t>>();
  for (int64_t i = 0; i < x.n; ++i) EXPECT_EQ(l3[i], l3[i % 3]) << i;
  EXPECT_TRUE(l3[0] != l3[1] && l3[1] != l3[2] && l3[0] != l3[2]);
}

TEST(Birch, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = ml_common::uniform_blobs(700, 4, 3, 4.0f, 3);
  for (const char* nc : {"3", "none"}) {
    const ml::Params p{{"n_clusters", nc}, {"threshold", "0.4"}, {"branching_factor", "8"}};
    ml_common::expect_same_bytes_at_threads_123("birch", p, x.X(), Tensor(), x.X());
    ml_common::expect_input_change_moves_the_model("birch", p, x, 3.0f);
  }
}

TEST(Birch, RefusalsAreNamed) {
  const Data x = ml_common::uniform_blobs(10, 2, 2, 4.0f, 1);
  EXPECT_NE(error_of([] { ml::make_estimator("birch", {{"threshold", "0"}}); }).find("threshold"), std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("birch", {{"branching_factor", "1"}}); }).find("branching_factor"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("birch", {{"n_clusters", "0"}}); }).find("n_clusters"), std::string::npos);
  EXPECT_NE(error_of([&] { ml::make_estimator("birch", {{"n_clusters", "2.5"}})->fit(x.X()); }).find("n_clusters"),
            std::string::npos);
  ml::WarningCollector warnings;
  auto few = ml::make_estimator("birch", {{"n_clusters", "5"}, {"threshold", "100"}});
  few->fit(x.X());
  ASSERT_EQ(warnings.messages().size(), 1u);
  EXPECT_NE(warnings.messages()[0].find("less than n_clusters"), std::string::npos);
  ml_common::expect_predict_before_fit_refused_and_state_round_trip("birch", x.X());
}

}  // namespace
}  // namespace bl
