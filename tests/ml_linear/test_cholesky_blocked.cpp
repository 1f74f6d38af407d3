// test_cholesky_blocked.cpp: the blocked Cholesky factor (ml/linear/cholesky.h) against float64
// (L L^T = A to the rounding of the factor), the same bytes at threads 1, 2 and 3, the index of the
// first non-positive pivot, and the sabotage arm: another panel width is another schedule and must
// give other bits.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "core/thread_pool.h"
#include "ml/linear/cholesky.h"

namespace bl {
namespace {

// A = G G^T / d + ridge I for a random G [n, d]: symmetric positive definite, condition ~ (1 + 1/ridge).
std::vector<float> spd(int64_t n, int64_t d, float ridge, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<double> g(static_cast<size_t>(n * d));
  for (double& v : g) v = rng.uniform_pm1();
  std::vector<float> a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < d; ++k) s += g[i * d + k] * g[j * d + k];
      a[i * n + j] = static_cast<float>(s / static_cast<double>(d) + (i == j ? ridge : 0.0));
    }
  return a;
}

std::vector<float> factor(const std::vector<float>& a, int64_t n, int64_t block = ml::kCholeskyBlock) {
  std::vector<float> L;
  EXPECT_EQ(ml::cholesky_factor_blocked(Tensor::from_vector(a, {n, n}), L, block), -1) << "n=" << n;
  return L;
}

TEST(CholeskyBlocked, FactorReproducesTheMatrixInFloat64) {
  for (int64_t n : {1, 2, 17, 127, 128, 129, 255, 256, 257, 600}) {
    std::vector<float> a = spd(n, 40, 0.5f, 3 + n), L = factor(a, n);
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_EQ(j > i ? L[i * n + j] : 0.0f, 0.0f) << "upper part at " << i << "," << j;
        double s = 0;
        for (int64_t k = 0; k <= std::min(i, j); ++k) s += static_cast<double>(L[i * n + k]) * L[j * n + k];
        worst = std::max(worst, std::fabs(s - a[i * n + j]));
        scale = std::max(scale, std::fabs(static_cast<double>(a[i * n + j])));
      }
    EXPECT_LT(worst, 64.0 * static_cast<double>(n) * 0x1p-24 * scale) << "n=" << n;
  }
}

TEST(CholeskyBlocked, SameBytesAtThreads123) {
  const int64_t n = 700;
  std::vector<float> a = spd(n, 64, 0.1f, 11);
  const int saved = num_threads();
  set_num_threads(1);
  std::vector<float> L1 = factor(a, n);
  for (int t : {2, 3}) {
    set_num_threads(t);
    EXPECT_EQ(factor(a, n), L1) << "threads=" << t;
  }
  set_num_threads(saved);
}

TEST(CholeskyBlocked, NamesTheFirstPivotThatIsNotPositive) {
  for (int64_t bad : {0, 5, 127, 128, 129, 256, 300}) {
    const int64_t n = 400;
    std::vector<float> a = spd(n, 30, 0.5f, 7);
    // Row/column `bad` made a copy of row/column 0 (bad > 0) or the first diagonal negative.
    if (bad == 0) {
      a[0] = -1.0f;
    } else {
      for (int64_t j = 0; j < n; ++j) a[bad * n + j] = a[j], a[j * n + bad] = a[j * n];
      a[bad * n + bad] = a[0];
    }
    std::vector<float> L;
    EXPECT_EQ(ml::cholesky_factor_blocked(Tensor::from_vector(a, {n, n}), L), bad);
  }
}

TEST(CholeskyBlocked, SabotageAnotherPanelWidthGivesOtherBits) {
  const int64_t n = 600;
  std::vector<float> a = spd(n, 64, 0.1f, 5);
  EXPECT_NE(factor(a, n, 64), factor(a, n));
}

}  // namespace
}  // namespace bl
