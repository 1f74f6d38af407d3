// test_knn_imputer.cpp: knn_imputer (src/ml/preprocessing/knn_imputer.cpp). The nan_euclidean
// distances, the donor choice and both weightings exactly on a small table (the sabotage arm: the
// distance without the present-coordinates rescaling ties two donors and picks another neighbour,
// a different value), the zero-distance rule, the column means for a row without donors; identical
// bytes at threads 1, 2 and 3, a moved input moves the model, the state round trip and each refusal
// named.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::expect_refusal_names;
using ml_common::host_table;
using ml_common::transform_of;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// n rows of d columns uniform in [-1, 1) times (j + 1), every `gap`-th entry NaN (gap 0: none).
Data gappy(int64_t n, int64_t d, uint64_t seed, int gap) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> x;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) x.push_back(rng.uniform_pm1() * static_cast<float>(j + 1));
  if (gap > 0)
    for (size_t k = 2; k < x.size(); k += static_cast<size_t>(gap)) x[k] = kNaN;
  return host_table(n, d, std::move(x));
}

TEST(KnnImputer, DistancesDonorsAndWeightsExact) {
  // Training rows r0..r3; the query [0, NaN, 2] is at nan_euclidean distance sqrt(1.5) from r0,
  // sqrt(27) from r2 and sqrt(13.5) from r3 (r1 lacks column 1, so it is no donor).
  const Data train = host_table(4, 3, {0, 0, 1, 1, kNaN, 2, 3, 4, kNaN, 0, 2, 5});
  const Data q = host_table(1, 3, {0, kNaN, 2});
  auto uniform = ml::make_estimator("knn_imputer", {{"n_neighbors", "2"}});
  uniform->fit(train.X());
  const float u = transform_of(*uniform, q)[1];
  EXPECT_EQ(u, 1.0f);  // the mean of r0's 0 and r3's 2
  // Sabotage arm: without the rescaling d / present, r2 and r3 tie at 3 and r2 (4) would be taken.
  EXPECT_NE(u, 2.0f);
  auto weighted = ml::make_estimator("knn_imputer", {{"n_neighbors", "2"}, {"weights", "distance"}});
  weighted->fit(train.X());
  const double w0 = 1.0 / std::sqrt(1.5), w3 = 1.0 / std::sqrt(13.5);
  EXPECT_EQ(transform_of(*weighted, q)[1], static_cast<float>((0.0 * w0 + 2.0 * w3) / (w0 + w3)));
  auto one = ml::make_estimator("knn_imputer", {{"n_neighbors", "1"}});
  one->fit(train.X());
  EXPECT_EQ(transform_of(*one, q)[1], 0.0f);
  // More neighbours than donors: every donor (0, 4, 2).
  auto all = ml::make_estimator("knn_imputer", {{"n_neighbors", "10"}});
  all->fit(train.X());
  EXPECT_EQ(transform_of(*all, q)[1], 2.0f);
  // A donor at distance 0 takes all the weight.
  const Data z = host_table(1, 3, {0, kNaN, 1});
  EXPECT_EQ(transform_of(*weighted, z)[1], 0.0f);
  // A row of NaN only has no donor: the columns' training means (1, 2, 8/3).
  const Data empty = host_table(1, 3, {kNaN, kNaN, kNaN});
  EXPECT_EQ(transform_of(*uniform, empty), (std::vector<float>{1.0f, 2.0f, static_cast<float>(8.0 / 3.0)}));
  // Observed entries stay bit for bit; the training rows' own gaps are filled from the others.
  const std::vector<float> t = transform_of(*uniform, train);
  for (size_t k = 0; k < t.size(); ++k)
    if (!std::isnan(train.x[k])) ASSERT_EQ(t[k], train.x[k]);
  // r1's column 1: donors r0 (sqrt(2 / 2 * 3)), r2 (sqrt(4 * 3)), r3 (sqrt(10 / 2 * 3)): r0 and r2.
  EXPECT_EQ(t[4], 2.0f);
}

TEST(KnnImputer, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = gappy(400, 5, 31, 7), test = gappy(200, 5, 32, 5);
  ml_common::expect_same_bytes_at_threads_123("knn_imputer", {}, train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("knn_imputer", {{"weights", "distance"}, {"n_neighbors", "3"}},
                                              train.X(), Tensor(), test.X());
  ml_common::expect_input_change_moves_the_model("knn_imputer", {}, gappy(9, 3, 5, 4), 50.0f);
}

TEST(KnnImputer, StateRoundTripGivesTheSameFileAndOutputs) {
  const Data train = gappy(60, 4, 41, 6), test = gappy(20, 4, 42, 3);
  auto est = ml::make_estimator("knn_imputer");
  est->fit(train.X());
  ml_common::expect_transformer_state_round_trip(*est, test.X());
  nlohmann::json st = ml_common::state_of(*est);
  st["n_samples"] = 61;
  ml_common::expect_state_refused("knn_imputer", st, "fit_X");
}

TEST(KnnImputer, RefusalsAreNamed) {
  expect_refusal_names([] { ml::make_estimator("knn_imputer", {{"n_neighbors", "0"}}); }, "n_neighbors");
  expect_refusal_names([] { ml::make_estimator("knn_imputer", {{"weights", "rank"}}); }, "weights");
  expect_refusal_names([] { ml::make_estimator("knn_imputer", {{"metric", "euclidean"}}); }, "metric");
  const Data x = gappy(10, 3, 1, 4), other = gappy(5, 2, 2, 0);
  Data inf = x;
  inf.x[4] = std::numeric_limits<float>::infinity();
  ml_common::expect_transformer_input_refusals("knn_imputer", x, other, inf, "infinity");
  const Data hole = host_table(3, 2, {1.0f, kNaN, 2.0f, kNaN, 3.0f, kNaN});
  expect_refusal_names([&] { ml::make_estimator("knn_imputer")->fit(hole.X()); }, "column 1 has no observed value");
}

}  // namespace
}  // namespace bl
