// test_bisecting_kmeans.cpp: bisecting_kmeans on separated blobs (every blob one cluster, for both
// strategies and inits), inertia against a float64 recomputation from the centers and labels,
// predict through the tree equal to the fit's labels, n_clusters = 1 giving the column means, the
// largest_cluster strategy splitting the largest leaf, identical bytes at threads 1, 2 and 3 (and
// the sabotage arm), and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
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

// n rows in `blobs` blobs (y = blob) 10 apart, spread 0.5, of sizes growing with the blob index.
Data make_blobs(int64_t n, int64_t d, int64_t blobs, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = (i * i) % (blobs * blobs + 1) % blobs;  // uneven sizes
    out.y.push_back(static_cast<float>(b));
    for (int64_t j = 0; j < d; ++j)
      out.x.push_back(0.5f * rng.uniform_pm1() + 10.0f * static_cast<float>(j == b % d ? 1 + b / d : 0));
  }
  return out;
}

std::vector<float> state_f32(const ml::Estimator& est, const std::string& key) {
  nlohmann::json st;
  est.save_state(st);
  return ml::f32_from_hex(st[key].get<std::string>(), key);
}

TEST(BisectingKMeans, SeparatedBlobsInertiaAndPredict) {
  const Data x = make_blobs(400, 3, 5, 17);
  for (const char* strategy : {"biggest_inertia", "largest_cluster"})
    for (const char* init : {"random", "k-means++"}) {
      auto est = ml::make_estimator("bisecting_kmeans",
                                    {{"n_clusters", "5"}, {"bisecting_strategy", strategy}, {"init", init}});
      est->fit(x.X());
      std::vector<int64_t> lab = est->predict(x.X()).to_vector<int64_t>();
      std::map<int, int64_t> blob_to_label;
      std::map<int64_t, int> label_to_blob;
      for (int64_t i = 0; i < x.n; ++i) {
        const int b = static_cast<int>(x.y[i]);
        if (!blob_to_label.count(b)) blob_to_label[b] = lab[i];
        if (!label_to_blob.count(lab[i])) label_to_blob[lab[i]] = b;
        EXPECT_EQ(blob_to_label[b], lab[i]) << strategy << " " << init << " row " << i;
        EXPECT_EQ(label_to_blob[lab[i]], b) << strategy << " " << init << " row " << i;
      }
      std::vector<float> c = state_f32(*est, "cluster_centers");
      double inertia = 0.0;
      for (int64_t i = 0; i < x.n; ++i)
        for (int64_t f = 0; f < 3; ++f) {
          double v = static_cast<double>(x.x[i * 3 + f]) - static_cast<double>(c[lab[i] * 3 + f]);
          inertia += v * v;
        }
      const double got = static_cast<double>(state_f32(*est, "inertia")[0]);
      EXPECT_NEAR(got, inertia, 1e-4 * inertia) << strategy << " " << init;
      EXPECT_NEAR(-est->score(x.X(), Tensor()), inertia, 1e-4 * inertia);
      // transform: distances to the centers, the own center the nearest here
      std::vector<float> t = est->transform(x.X()).to_vector<float>();
      for (int64_t i = 0; i < x.n; ++i)
        for (int64_t k = 0; k < 5; ++k) EXPECT_LE(t[i * 5 + lab[i]], t[i * 5 + k]);
    }
}

TEST(BisectingKMeans, OneClusterIsTheMeanAndLargestClusterSplitsTheLargest) {
  const Data x = make_blobs(90, 2, 3, 5);
  auto one = ml::make_estimator("bisecting_kmeans", {{"n_clusters", "1"}});
  one->fit(x.X());
  std::vector<float> c = state_f32(*one, "cluster_centers");
  for (int64_t f = 0; f < 2; ++f) {
    double m = 0.0;
    for (int64_t i = 0; i < x.n; ++i) m += x.x[i * 2 + f];
    EXPECT_NEAR(c[f], m / x.n, 1e-5);
  }
  for (int64_t v : one->predict(x.X()).to_vector<int64_t>()) EXPECT_EQ(v, 0);
  // Three clusters by largest_cluster: the second split takes the larger half of the first.
  auto est = ml::make_estimator("bisecting_kmeans", {{"n_clusters", "3"}, {"bisecting_strategy", "largest_cluster"}});
  est->fit(x.X());
  nlohmann::json st;
  est->save_state(st);
  std::vector<int64_t> left = st["tree_left"].get<std::vector<int64_t>>();
  ASSERT_EQ(left.size(), 5u);
  EXPECT_EQ(left[0], 1);
}

TEST(BisectingKMeans, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = make_blobs(1500, 6, 7, 23), test = make_blobs(300, 6, 7, 24);
  for (const char* strategy : {"biggest_inertia", "largest_cluster"})
    ml_common::expect_same_bytes_at_threads_123(
        "bisecting_kmeans", {{"n_clusters", "9"}, {"bisecting_strategy", strategy}, {"n_init", "2"}}, x.X(), Tensor(),
        test.X());
  ml_common::expect_input_change_moves_the_model("bisecting_kmeans", {{"n_clusters", "4"}}, x, 3.0f);
}

TEST(BisectingKMeans, RefusalsAreNamed) {
  EXPECT_NE(error_of([] { ml::make_estimator("bisecting_kmeans", {{"bisecting_strategy", "x"}}); })
                .find("bisecting_strategy"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("bisecting_kmeans", {{"n_init", "0"}}); }).find("n_init"), std::string::npos);
  const Data x = make_blobs(5, 2, 2, 1);
  auto est = ml::make_estimator("bisecting_kmeans", {{"n_clusters", "6"}});
  EXPECT_NE(error_of([&] { est->fit(x.X()); }).find("n_clusters"), std::string::npos);
  Data same = x;
  for (float& v : same.x) v = 1.0f;
  auto est2 = ml::make_estimator("bisecting_kmeans", {{"n_clusters", "5"}});
  // Identical rows are not refused: each split leaves every row on the left (ties go left).
  est2->fit(same.X());
  std::vector<int64_t> lab = est2->predict(same.X()).to_vector<int64_t>();
  for (int64_t v : lab) EXPECT_EQ(v, lab[0]);
}

}  // namespace
}  // namespace bl
