// Boosting feature binning (ml/boosting/binning.h) against a plain reference written here:
// thresholds from std::sort and the documented quantile / midpoint rule, bins from
// std::lower_bound. Covers the radix sort and the branch-free bin search of the fast path with
// +-inf, +-0, subnormals, the largest floats, NaN, heavy ties, few distinct values, max_bins 2, 3,
// 17 and 255, and more rows than the binning sample. Sabotage arm: a reference with a threshold
// moved by one ulp must disagree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "ml/boosting/binning.h"

namespace bl::ml {
namespace {

float midpoint_ref(float a, float b) {
  float m = static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5);
  return (m >= b) ? a : m;
}

// The thresholds binning.h documents, computed the obvious way.
std::vector<float> thresholds_ref(const std::vector<float>& X, int64_t n, int64_t d, int64_t f, int64_t max_bins) {
  const int64_t take = std::min(n, kBinningSample);
  std::vector<float> v;
  for (int64_t i = 0; i < take; ++i) {
    const int64_t r = take == n ? i : static_cast<int64_t>((static_cast<unsigned __int128>(i) * n) / take);
    const float x = X[r * d + f];
    if (x == x) v.push_back(x == 0.0f ? 0.0f : x);
  }
  std::sort(v.begin(), v.end());
  std::vector<float> distinct = v;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<float> t;
  if (static_cast<int64_t>(distinct.size()) <= max_bins) {
    for (size_t i = 0; i + 1 < distinct.size(); ++i) t.push_back(midpoint_ref(distinct[i], distinct[i + 1]));
  } else {
    const int64_t count = static_cast<int64_t>(v.size());
    for (int64_t k = 1; k < max_bins; ++k) {
      const float q = v[static_cast<size_t>(k * count / max_bins)];
      if (t.empty() || q > t.back()) t.push_back(q);
    }
    if (!t.empty() && t.back() >= v.back()) t.pop_back();
  }
  return t;
}

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Column f of X: 0 uniform, 1 special values mixed in, 2 few distinct values with ties, 3 mostly
// NaN, 4 huge magnitudes of both signs.
std::vector<float> make_x(int64_t n, int64_t d, uint64_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f,  -0.0f, inf, -inf, std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(), std::numeric_limits<float>::quiet_NaN(), 1.0f};
  test_rng::SplitMix64 rng{seed};
  std::vector<float> X(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t f = 0; f < d; ++f) {
      const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
      float x = static_cast<float>(u * 20.0 - 10.0);
      if (f % 5 == 1 && rng.next() % 7 == 0) x = specials[rng.next() % 10];
      if (f % 5 == 2) x = static_cast<float>(static_cast<int>(u * 5.0)) - 2.0f;
      if (f % 5 == 3 && rng.next() % 10 != 0) x = std::numeric_limits<float>::quiet_NaN();
      if (f % 5 == 4) x = static_cast<float>((u - 0.5) * 6e38);
      X[static_cast<size_t>(i * d + f)] = x;
    }
  }
  return X;
}

TEST(BoostBinning, FastPathsEqualTheReference) {
  struct Shape {
    int64_t n, d;
  };
  for (Shape s : {Shape{1, 5}, Shape{2, 5}, Shape{97, 5}, Shape{4099, 10}, Shape{kBinningSample + 7, 5}}) {
    const std::vector<float> X = make_x(s.n, s.d, static_cast<uint64_t>(s.n * 3 + s.d));
    for (int64_t max_bins : {2, 3, 17, 255}) {
      const BinMapper m = fit_bins(X.data(), s.n, s.d, max_bins);
      ASSERT_EQ(static_cast<int64_t>(m.thresholds.size()), s.d);
      for (int64_t f = 0; f < s.d; ++f) {
        ASSERT_TRUE(same_floats(m.thresholds[f], thresholds_ref(X, s.n, s.d, f, max_bins)))
            << "thresholds of feature " << f << " n=" << s.n << " max_bins=" << max_bins;
      }
      const std::vector<uint8_t> bins = apply_bins(m, X.data(), s.n, s.d);
      for (int64_t i = 0; i < s.n; ++i) {
        for (int64_t f = 0; f < s.d; ++f) {
          const float x = X[static_cast<size_t>(i * s.d + f)];
          const std::vector<float>& t = m.thresholds[f];
          const int expect = x != x ? kMissingBin : static_cast<int>(std::lower_bound(t.begin(), t.end(), x) - t.begin());
          ASSERT_EQ(static_cast<int>(bins[static_cast<size_t>(i * s.d + f)]), expect)
              << "row " << i << " feature " << f << " x=" << x << " n=" << s.n << " max_bins=" << max_bins;
        }
      }
    }
  }
}

TEST(BoostBinning, SabotageOneUlpDisagrees) {
  const std::vector<float> X = make_x(4099, 5, 9);
  const BinMapper m = fit_bins(X.data(), 4099, 5, 255);
  std::vector<float> moved = thresholds_ref(X, 4099, 5, 0, 255);
  ASSERT_FALSE(moved.empty());
  moved[moved.size() / 2] = std::nextafter(moved[moved.size() / 2], std::numeric_limits<float>::infinity());
  EXPECT_FALSE(same_floats(m.thresholds[0], moved)) << "a threshold one ulp off went unnoticed";
}

}  // namespace
}  // namespace bl::ml
