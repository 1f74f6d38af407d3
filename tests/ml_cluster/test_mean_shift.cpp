// test_mean_shift.cpp: mean_shift against a float64 re-implementation of scikit-learn's MeanShift
// written from its definition (climbs from every row, centers sorted by (count, coordinates)
// descending, near-duplicates within the bandwidth removed, nearest-center labels) on separated
// blobs for several bandwidths; the estimated bandwidth against a sort-based reference; bin seeding
// finding the blobs; cluster_all=false marking a far row -1; predict as the nearest center;
// identical bytes at threads 1, 2 and 3 (and the sabotage arm); each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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

// n rows in 3 blobs 6 apart with spread 1 (uniform).
Data make_blobs(int64_t n, int64_t d, uint64_t seed) { return ml_common::uniform_blobs(n, d, 3, 6.0f, seed); }

double sqd(const double* a, const float* b, int64_t d) {
  double s = 0;
  for (int64_t f = 0; f < d; ++f) s += (a[f] - b[f]) * (a[f] - b[f]);
  return s;
}

struct Ref {
  std::vector<float> centers;
  std::vector<int64_t> labels;
};

Ref reference(const Data& x, double h) {
  const int64_t n = x.n, d = x.d;
  std::vector<std::pair<std::vector<float>, int64_t>> found;
  for (int64_t s = 0; s < n; ++s) {
    std::vector<double> m(x.x.begin() + s * d, x.x.begin() + (s + 1) * d);
    int64_t count = 0;
    for (int it = 0; it <= 300; ++it) {
      std::vector<double> sum(d, 0.0);
      count = 0;
      for (int64_t j = 0; j < n; ++j)
        if (sqd(m.data(), x.x.data() + j * d, d) <= h * h) {
          ++count;
          for (int64_t f = 0; f < d; ++f) sum[f] += x.x[j * d + f];
        }
      double shift = 0;
      for (int64_t f = 0; f < d; ++f) {
        double v = sum[f] / count;
        shift += (v - m[f]) * (v - m[f]);
        m[f] = v;
      }
      if (std::sqrt(shift) <= 1e-3 * h) break;
    }
    std::vector<float> c(m.begin(), m.end());
    bool seen = false;
    for (auto& [k, v] : found)
      if (k == c) {
        v = count;
        seen = true;
      }
    if (!seen) found.push_back({c, count});
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : b.first < a.first;
  });
  std::vector<char> keep(found.size(), 1);
  for (size_t i = 0; i < found.size(); ++i) {
    if (!keep[i]) continue;
    std::vector<double> ci(found[i].first.begin(), found[i].first.end());
    for (size_t j = 0; j < found.size(); ++j)
      if (sqd(ci.data(), found[j].first.data(), d) <= h * h) keep[j] = 0;
    keep[i] = 1;
  }
  Ref r;
  for (size_t i = 0; i < found.size(); ++i)
    if (keep[i]) r.centers.insert(r.centers.end(), found[i].first.begin(), found[i].first.end());
  const int64_t k = static_cast<int64_t>(r.centers.size()) / d;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> xi(x.x.begin() + i * d, x.x.begin() + (i + 1) * d);
    int64_t arg = 0;
    for (int64_t c = 1; c < k; ++c)
      if (sqd(xi.data(), r.centers.data() + c * d, d) < sqd(xi.data(), r.centers.data() + arg * d, d)) arg = c;
    r.labels.push_back(arg);
  }
  return r;
}

TEST(MeanShift, MatchesTheFloat64ReferenceOnBlobs) {
  const Data x = make_blobs(120, 2, 7);
  for (double h : {0.8, 1.5, 3.0}) {
    auto est = ml::make_estimator("mean_shift", {{"bandwidth", ml::param_text(h)}});
    est->fit(x.X());
    const nlohmann::json st = state_of(*est);
    const Ref ref = reference(x, h);
    const std::vector<float> c = ml::f32_from_hex(st["cluster_centers"].get<std::string>(), "c");
    ASSERT_EQ(c.size(), ref.centers.size()) << h;
    for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], ref.centers[i], 1e-5) << h;
    EXPECT_EQ(st["labels"].get<std::vector<int64_t>>(), ref.labels) << h;
    EXPECT_EQ(est->predict(x.X()).to_vector<int64_t>(), ref.labels) << h;
    if (h == 1.5) {  // the three blobs
      EXPECT_EQ(c.size(), 6u);
      std::set<std::pair<int64_t, int64_t>> pairs;
      for (int64_t i = 0; i < x.n; ++i) pairs.insert({static_cast<int64_t>(x.y[i]), ref.labels[i]});
      EXPECT_EQ(pairs.size(), 3u);
    }
  }
}

TEST(MeanShift, EstimatedBandwidthIsTheMeanKthNeighborDistance) {
  const Data x = make_blobs(50, 3, 11);
  const int64_t k = static_cast<int64_t>(50 * 0.3);
  double sum = 0;
  for (int64_t i = 0; i < x.n; ++i) {
    std::vector<double> r;
    std::vector<double> xi(x.x.begin() + i * 3, x.x.begin() + i * 3 + 3);
    for (int64_t j = 0; j < x.n; ++j) r.push_back(std::sqrt(sqd(xi.data(), x.x.data() + j * 3, 3)));
    std::sort(r.begin(), r.end());
    sum += r[k - 1];
  }
  auto est = ml::make_estimator("mean_shift");
  est->fit(x.X());
  std::vector<int64_t> bits = ml::i64_from_hex(state_of(*est)["bandwidth_f64"].get<std::string>(), "b");
  double h;
  std::memcpy(&h, bits.data(), sizeof h);
  EXPECT_NEAR(h, sum / 50, 1e-12 * h);
}

TEST(MeanShift, BinSeedingAndClusterAll) {
  Data x = make_blobs(90, 2, 3);
  auto est = ml::make_estimator("mean_shift", {{"bandwidth", "1.5"}, {"bin_seeding", "true"}});
  est->fit(x.X());
  std::vector<int64_t> lab = state_of(*est)["labels"].get<std::vector<int64_t>>();
  std::set<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 0; i < x.n; ++i) pairs.insert({static_cast<int64_t>(x.y[i]), lab[i]});
  EXPECT_EQ(pairs.size(), 3u);
  // A far row: its own seed makes a center of count 1 unless cluster_all=false drops it.
  x.x.push_back(30.0f);
  x.x.push_back(30.0f);
  x.y.push_back(0.0f);
  x.n += 1;
  auto all = ml::make_estimator("mean_shift", {{"bandwidth", "1.5"}, {"bin_seeding", "true"}, {"min_bin_freq", "2"}});
  all->fit(x.X());
  EXPECT_NE(state_of(*all)["labels"].get<std::vector<int64_t>>().back(), -1);
  auto some = ml::make_estimator(
      "mean_shift", {{"bandwidth", "1.5"}, {"bin_seeding", "true"}, {"min_bin_freq", "2"}, {"cluster_all", "false"}});
  some->fit(x.X());
  const std::vector<int64_t> l2 = state_of(*some)["labels"].get<std::vector<int64_t>>();
  EXPECT_EQ(l2.back(), -1);
  for (int64_t i = 0; i + 1 < x.n; ++i) EXPECT_GE(l2[i], 0);
  EXPECT_NE(some->predict(x.X()).to_vector<int64_t>().back(), -1);  // predict: always the nearest center
}

TEST(MeanShift, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = make_blobs(150, 3, 5);
  for (const char* bw : {"1.2", "none"}) {
    const ml::Params p{{"bandwidth", bw}};
    ml_common::expect_same_bytes_at_threads_123("mean_shift", p, x.X(), Tensor(), x.X());
    ml_common::expect_input_change_moves_the_model("mean_shift", p, x, 3.0f);
  }
}

TEST(MeanShift, RefusalsAreNamed) {
  EXPECT_NE(error_of([] { ml::make_estimator("mean_shift", {{"bandwidth", "0"}}); }).find("bandwidth"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("mean_shift", {{"max_iter", "-1"}}); }).find("max_iter"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("mean_shift", {{"min_bin_freq", "0"}}); }).find("min_bin_freq"),
            std::string::npos);
  Data same;
  same.n = 4;
  same.d = 2;
  same.x.assign(8, 1.0f);
  EXPECT_NE(error_of([&] { ml::make_estimator("mean_shift")->fit(same.X()); }).find("bandwidth"), std::string::npos);
  auto est = ml::make_estimator("mean_shift");
  EXPECT_NE(error_of([&] { est->predict(same.X()); }).find("before fit"), std::string::npos);
}

}  // namespace
}  // namespace bl
