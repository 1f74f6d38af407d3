// test_mds.cpp: mds (metric SMACOF) against float64 references: points of the plane are embedded
// back with their distances (classical start, stress near 0); the stored stress is the float64 stress
// of the stored embedding, raw and normalized (Stress-1); SMACOF never raises the stress with more
// iterations; n_init keeps the best run (never worse than its first); a precomputed dissimilarity
// matrix gives the embedding of the rows it came from. Identical model bytes at threads 1, 2 and 3,
// a changed input or random_state moves the model, the state round trip and each refusal named.
// transform (the library's placement of new rows against the fixed embedding; scikit-learn has none)
// puts the training rows back on their embedding and a near copy of a row next to it.
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

// n rows of d features, uniform in [-scale, scale).
Data uniform_rows(int64_t n, int64_t d, float scale, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> x;
  for (int64_t i = 0; i < n * d; ++i) x.push_back(rng.uniform_pm1() * scale);
  return ml_common::host_table(n, d, std::move(x));
}

std::vector<double> distances64(const std::vector<float>& x, int64_t n, int64_t d) {
  std::vector<double> out(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t t = 0; t < d; ++t) s += (static_cast<double>(x[i * d + t]) - x[j * d + t]) * (x[i * d + t] - x[j * d + t]);
      out[i * n + j] = std::sqrt(s);
    }
  return out;
}

// x's float64 distance matrix rounded to binary32: the input of metric=precomputed.
Data precomputed_of(const Data& x) {
  const std::vector<double> dist = distances64(x.x, x.n, x.d);
  return ml_common::host_table(x.n, x.n, std::vector<float>(dist.begin(), dist.end()));
}

// (raw stress, sum of squared embedding distances) of the stored embedding against x's distances.
std::pair<double, double> stress64(const ml::Estimator& est, const Data& x, int64_t k) {
  const std::vector<double> want = distances64(x.x, x.n, x.d);
  const std::vector<double> got = distances64(state_f32(est, "embedding"), x.n, k);
  double s = 0.0, q = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    s += (got[i] - want[i]) * (got[i] - want[i]);
    q += got[i] * got[i];
  }
  return {s / 2.0, q};
}

TEST(MDS, PlanePointsAreEmbeddedWithTheirDistances) {
  const Data x = uniform_rows(40, 2, 3.0f, 1);
  auto est = ml::make_estimator("mds", {{"init", "classical_mds"}});
  est->fit(x.X());
  const std::vector<double> want = distances64(x.x, x.n, 2);
  const std::vector<double> got = distances64(state_f32(*est, "embedding"), x.n, 2);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (1.0 + want[i])) << i;
  EXPECT_LT(state_f32(*est, "stress")[0], 1e-6f);
}

TEST(MDS, StressIsTheFloat64StressOfTheEmbedding) {
  const Data x = uniform_rows(60, 5, 1.0f, 2);
  for (const char* normalized : {"false", "true"}) {
    auto est = ml::make_estimator("mds", {{"normalized_stress", normalized}});
    est->fit(x.X());
    const auto [s, q] = stress64(*est, x, 2);
    const double want = std::string(normalized) == "true" ? std::sqrt(s / (q / 2.0)) : s;
    EXPECT_NEAR(state_f32(*est, "stress")[0], want, 1e-4 * want) << normalized;
  }
}

TEST(MDS, StressNeverRisesAndNInitKeepsTheBest) {
  const Data x = uniform_rows(50, 4, 1.0f, 3);
  double last = 1e300;
  for (int iters : {1, 2, 5, 20, 100}) {
    auto est = ml::make_estimator("mds", {{"max_iter", std::to_string(iters)}, {"eps", "0"}});
    est->fit(x.X());
    const double s = stress64(*est, x, 2).first;
    EXPECT_LE(s, last * (1.0 + 1e-6)) << "max_iter " << iters;
    EXPECT_EQ(ml_common::state_of(*est)["n_iter"].get<int64_t>(), iters);
    last = s;
  }
  auto one = ml::make_estimator("mds", {{"max_iter", "30"}});
  auto four = ml::make_estimator("mds", {{"max_iter", "30"}, {"n_init", "4"}});
  one->fit(x.X());
  four->fit(x.X());
  EXPECT_LE(state_f32(*four, "stress")[0], state_f32(*one, "stress")[0]);
}

TEST(MDS, PrecomputedDissimilaritiesGiveTheEmbeddingOfTheirRows) {
  const Data x = uniform_rows(30, 3, 1.0f, 4), pre = precomputed_of(x);
  auto a = ml::make_estimator("mds", {{"init", "classical_mds"}});
  auto b = ml::make_estimator("mds", {{"init", "classical_mds"}, {"metric", "precomputed"}});
  a->fit(x.X());
  b->fit(pre.X());
  std::vector<float> ea = state_f32(*a, "embedding"), eb = state_f32(*b, "embedding");
  for (size_t i = 0; i < ea.size(); ++i) EXPECT_NEAR(ea[i], eb[i], 1e-4) << i;
  Data asym = pre;
  asym.x[1] += 0.5f;
  expect_refusal_names([&] { b->fit(asym.X()); }, "not symmetric");
}

TEST(MDS, TransformPutsTrainingRowsOnTheirEmbedding) {
  const Data x = uniform_rows(80, 4, 1.0f, 12), pre = precomputed_of(x);
  for (bool precomputed : {false, true}) {
    auto est = ml::make_estimator("mds", {{"metric", precomputed ? "precomputed" : "euclidean"}, {"eps", "1e-9"},
                                          {"max_iter", "3000"}, {"init", "classical_mds"}});
    const Data& in = precomputed ? pre : x;
    est->fit(in.X());
    std::vector<float> e = state_f32(*est, "embedding"), z = est->transform(in.X()).to_vector<float>();
    double scale = 0.0;
    for (float v : e) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(z[i], e[i], 2e-3 * scale) << precomputed << " " << i;
  }
  // A copy of row 0 moved by 1e-3 lands within about that of row 0's embedding.
  auto est = ml::make_estimator("mds", {{"init", "classical_mds"}});
  est->fit(x.X());
  Data near = uniform_rows(1, 4, 1.0f, 13);
  for (int64_t f = 0; f < 4; ++f) near.x[f] = x.x[f] + 1e-3f;
  std::vector<float> e = state_f32(*est, "embedding"), z = est->transform(near.X()).to_vector<float>();
  EXPECT_LT(std::hypot(z[0] - e[0], z[1] - e[1]), 0.05);
}

TEST(MDS, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data x = uniform_rows(300, 6, 1.0f, 5);
  for (const char* init : {"random", "classical_mds"})
    ml_common::expect_same_bytes_at_threads_123("mds", {{"init", init}, {"n_init", "2"}, {"max_iter", "50"}}, x.X(),
                                                Tensor(), uniform_rows(40, 6, 1.0f, 14).X());
  const Data small = uniform_rows(20, 3, 1.0f, 6);
  ml_common::expect_input_change_moves_the_model("mds", {}, small, 3.0f);
  ml_common::expect_input_change_moves_the_model("mds", {{"init", "classical_mds"}}, small, 3.0f);
  auto a = ml::make_estimator("mds", {{"random_state", "0"}});
  auto b = ml::make_estimator("mds", {{"random_state", "1"}});
  a->fit(small.X());
  b->fit(small.X());
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

TEST(MDS, StateRoundTripAndRefusals) {
  const Data x = uniform_rows(20, 3, 1.0f, 7);
  auto est = ml::make_estimator("mds", {{"n_components", "3"}});
  est->fit(x.X());
  EXPECT_EQ(ml::estimator_from_json_text(est->to_json_text())->to_json_text(), est->to_json_text());
  auto plain = ml::make_estimator("mds");
  plain->fit(x.X());
  ml_common::expect_transformer_state_round_trip(*plain, uniform_rows(5, 3, 1.0f, 11).X());
  expect_refusal_names([&] { est->predict(x.X()); }, "not supported");
  expect_refusal_names([] { ml::make_estimator("mds", {{"init", "pca"}}); }, "init");
  expect_refusal_names([] { ml::make_estimator("mds", {{"metric", "cosine"}}); }, "metric");
  expect_refusal_names([] { ml::make_estimator("mds", {{"n_init", "0"}}); }, "n_init");
  expect_refusal_names([] { ml::make_estimator("mds", {{"eps", "-1"}}); }, "eps");
  const Data one = uniform_rows(1, 3, 1.0f, 8);
  auto m = ml::make_estimator("mds");
  expect_refusal_names([&] { m->fit(one.X()); }, "n_samples=1");
  auto pre = ml::make_estimator("mds", {{"metric", "precomputed"}});
  expect_refusal_names([&] { pre->fit(x.X()); }, "square");
  Data neg;  // symmetric, zero diagonal, one negative pair
  neg.n = neg.d = 4;
  for (int64_t i = 0; i < 16; ++i) neg.x.push_back(i / 4 == i % 4 ? 0.0f : 1.0f);
  neg.x[1] = neg.x[4] = -1.0f;
  auto pn = ml::make_estimator("mds", {{"metric", "precomputed"}});
  expect_refusal_names([&] { pn->fit(neg.X()); }, "negative");
}

}  // namespace
}  // namespace bl
