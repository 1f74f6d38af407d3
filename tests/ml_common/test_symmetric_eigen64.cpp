// test_symmetric_eigen64.cpp: the binary64 dense symmetric eigensolver of
// ml/decomposition/symmetric_eigen64.h against long-double reference arithmetic: A v = lambda v
// residuals, orthonormality and reconstruction below 1e-12 relative to |A|, over sizes 0..257;
// matrices of known spectrum (repeated eigenvalues, rank-deficient) give that spectrum; the zero
// and diagonal matrices give exact results; values descending and the sign rule held; non-finite
// input and a size mismatch are named errors; the bits are a pure function of the matrix (the
// same on a second call, fixed by a committed digest; sabotage arms: one ulp of one entry moves
// the bits, and a vector with its sign flipped is caught by the sign-rule check), the same for the
// leading vectors alone and at threads 1, 2 and 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "core/thread_pool.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml_common/estimator_checks.h"

namespace bl {
namespace {

using Mat = std::vector<double>;

double unit(test_rng::SplitMix64& rng) { return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1p-53 - 0.5; }

Mat random_symmetric(int64_t n, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Mat a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = unit(rng);
  return a;
}

// Q diag(lambda) Q^T with Q a product of three random Householder reflections (long double).
Mat with_spectrum(const std::vector<double>& lambda, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(lambda.size());
  test_rng::SplitMix64 rng(seed);
  std::vector<long double> q(static_cast<size_t>(n * n), 0.0L);
  for (int64_t i = 0; i < n; ++i) q[i * n + i] = 1.0L;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<long double> v(static_cast<size_t>(n));
    long double vv = 0.0L;
    for (auto& x : v) {
      x = unit(rng);
      vv += x * x;
    }
    for (int64_t r = 0; r < n; ++r) {  // Q = Q (I - 2 v v^T / v^T v)
      long double u = 0.0L;
      for (int64_t c = 0; c < n; ++c) u += q[r * n + c] * v[c];
      for (int64_t c = 0; c < n; ++c) q[r * n + c] -= 2.0L * u * v[c] / vv;
    }
  }
  Mat a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      long double s = 0.0L;
      for (int64_t t = 0; t < n; ++t) s += q[i * n + t] * lambda[t] * q[j * n + t];
      a[i * n + j] = static_cast<double>(s);
    }
  for (int64_t i = 0; i < n; ++i)  // exactly symmetric
    for (int64_t j = 0; j < i; ++j) a[j * n + i] = a[i * n + j];
  return a;
}

bool sign_rule_holds(const ml::SymmetricEigen64& e, int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    const double* v = &e.vectors[t * n];
    int64_t big = 0;
    for (int64_t k = 1; k < n; ++k)
      if (std::fabs(v[k]) > std::fabs(v[big])) big = k;
    if (!(v[big] > 0.0)) return false;
  }
  return true;
}

// Residuals, orthonormality and reconstruction in long double, relative to the Frobenius norm.
void expect_decomposes(const Mat& a, int64_t n, const ml::SymmetricEigen64& e, const std::string& what) {
  ASSERT_EQ(e.values.size(), static_cast<size_t>(n)) << what;
  ASSERT_EQ(e.vectors.size(), static_cast<size_t>(n * n)) << what;
  long double norm = 0.0L;
  for (double x : a) norm += static_cast<long double>(x) * x;
  norm = std::sqrt(norm);
  const long double scale = norm > 0.0L ? norm : 1.0L;
  long double worst_res = 0.0L, worst_orth = 0.0L, worst_rec = 0.0L;
  for (int64_t t = 0; t < n; ++t) {
    const double* v = &e.vectors[t * n];
    long double r2 = 0.0L;
    for (int64_t i = 0; i < n; ++i) {
      long double s = 0.0L;
      for (int64_t j = 0; j < n; ++j) s += static_cast<long double>(a[i * n + j]) * v[j];
      const long double r = s - static_cast<long double>(e.values[t]) * v[i];
      r2 += r * r;
    }
    worst_res = std::max(worst_res, std::sqrt(r2) / scale);
    for (int64_t u = 0; u <= t; ++u) {
      long double s = 0.0L;
      for (int64_t i = 0; i < n; ++i) s += static_cast<long double>(v[i]) * e.vectors[u * n + i];
      worst_orth = std::max(worst_orth, std::fabs(s - (u == t ? 1.0L : 0.0L)));
    }
    if (t > 0) EXPECT_GE(e.values[t - 1], e.values[t]) << what << ": values not descending at " << t;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      long double s = 0.0L;
      for (int64_t t = 0; t < n; ++t)
        s += static_cast<long double>(e.vectors[t * n + i]) * e.values[t] * e.vectors[t * n + j];
      worst_rec = std::max(worst_rec, std::fabs(s - a[i * n + j]) / scale);
    }
  EXPECT_LT(worst_res, 1e-12L) << what;
  EXPECT_LT(worst_orth, 1e-12L) << what;
  EXPECT_LT(worst_rec, 1e-12L) << what;
  EXPECT_TRUE(sign_rule_holds(e, n)) << what;
}

uint64_t digest(const ml::SymmetricEigen64& e) {
  uint64_t h = 1469598103934665603ULL;
  auto add = [&](const std::vector<double>& xs) {
    for (double x : xs) {
      uint64_t b;
      std::memcpy(&b, &x, 8);
      for (int k = 0; k < 8; ++k) {
        h ^= (b >> (8 * k)) & 0xFF;
        h *= 1099511628211ULL;
      }
    }
  };
  add(e.values);
  add(e.vectors);
  return h;
}

TEST(SymmetricEigen64, RandomMatricesDecomposeOverSizes) {
  for (int64_t n : {0, 1, 2, 3, 17, 100, 257}) {
    const Mat a = random_symmetric(n, 100 + static_cast<uint64_t>(n));
    expect_decomposes(a, n, ml::symmetric_eigen64(a, n), "random n=" + std::to_string(n));
  }
}

TEST(SymmetricEigen64, KnownSpectraWithRepeatsAndRankDeficiency) {
  for (int64_t n : {3, 17, 100}) {
    std::vector<double> repeated, deficient, clustered;
    for (int64_t t = 0; t < n; ++t) {
      repeated.push_back(t < n / 2 ? 2.0 : -1.0);           // two eigenvalues of high multiplicity
      deficient.push_back(t % 3 == 0 ? 0.0 : 1.0 + 0.5 * t);  // rank n - ceil(n/3)
      clustered.push_back(1.0 + 1e-9 * static_cast<double>(t % 4));
    }
    for (const auto* spec : {&repeated, &deficient, &clustered}) {
      const Mat a = with_spectrum(*spec, 7 + static_cast<uint64_t>(n));
      const ml::SymmetricEigen64 e = ml::symmetric_eigen64(a, n);
      const std::string what = "n=" + std::to_string(n) + " spectrum " + std::to_string(spec - &repeated);
      expect_decomposes(a, n, e, what);
      std::vector<double> want = *spec;
      std::sort(want.begin(), want.end(), [](double x, double y) { return x > y; });
      double top = 0.0;
      for (double x : want) top = std::max(top, std::fabs(x));
      for (int64_t t = 0; t < n; ++t) EXPECT_NEAR(e.values[t], want[t], 1e-12 * top * n) << what << " value " << t;
    }
  }
}

TEST(SymmetricEigen64, ZeroAndDiagonalMatricesAreExact) {
  const int64_t n = 5;
  const ml::SymmetricEigen64 z = ml::symmetric_eigen64(Mat(n * n, 0.0), n);
  for (int64_t t = 0; t < n; ++t) {
    EXPECT_EQ(z.values[t], 0.0);
    for (int64_t k = 0; k < n; ++k) EXPECT_EQ(z.vectors[t * n + k], k == t ? 1.0 : 0.0);
  }
  const std::vector<double> diag = {3.0, -7.5, 3.0, 0.25, 11.0};
  Mat a(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i) a[i * n + i] = diag[i];
  const ml::SymmetricEigen64 e = ml::symmetric_eigen64(a, n);
  const std::vector<double> want_values = {11.0, 3.0, 3.0, 0.25, -7.5};
  const std::vector<int64_t> want_index = {4, 0, 2, 3, 1};  // equal values keep the lower index first
  for (int64_t t = 0; t < n; ++t) {
    EXPECT_EQ(e.values[t], want_values[t]);
    for (int64_t k = 0; k < n; ++k) EXPECT_EQ(e.vectors[t * n + k], k == want_index[t] ? 1.0 : 0.0);
  }
  const ml::SymmetricEigen64 one = ml::symmetric_eigen64({-4.5}, 1);
  EXPECT_EQ(one.values, std::vector<double>{-4.5});
  EXPECT_EQ(one.vectors, std::vector<double>{1.0});
}

TEST(SymmetricEigen64, ExtremeScalesNeitherOverflowNorUnderflow) {
  for (double s : {0x1p+1000, 0x1p-900}) {
    Mat a = random_symmetric(17, 5);
    for (double& x : a) x *= s;
    const ml::SymmetricEigen64 e = ml::symmetric_eigen64(a, 17);
    Mat b = random_symmetric(17, 5);
    const ml::SymmetricEigen64 f = ml::symmetric_eigen64(b, 17);
    for (int64_t t = 0; t < 17; ++t) EXPECT_EQ(e.values[t], f.values[t] * s);  // power-of-two scaling is exact
    EXPECT_EQ(e.vectors, f.vectors);
  }
  EXPECT_EQ(ml::hypot64(3.0, 4.0), 5.0);
  EXPECT_EQ(ml::hypot64(-0x1p+1000, 0.0), 0x1p+1000);
  EXPECT_EQ(ml::hypot64(0x1p+1023, 0x1p+1023), 0x1p+1023 * std::sqrt(2.0));
}

TEST(SymmetricEigen64, NonFiniteInputAndBadSizesAreNamedErrors) {
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Mat a = random_symmetric(4, 3);
    a[2 * 4 + 1] = bad;
    const std::string msg = ml_common::error_of([&] { ml::symmetric_eigen64(a, 4, -1, "some_estimator"); });
    EXPECT_NE(msg.find("some_estimator"), std::string::npos) << msg;
    EXPECT_NE(msg.find("non-finite"), std::string::npos) << msg;
  }
  EXPECT_NE(ml_common::error_of([] { ml::symmetric_eigen64(Mat(5, 0.0), 2); }).find("2 x 2"), std::string::npos);
}

TEST(SymmetricEigen64, BitsArePureFunctionOfTheMatrix) {
  const Mat a = random_symmetric(17, 2024);
  const ml::SymmetricEigen64 e = ml::symmetric_eigen64(a, 17);
  EXPECT_EQ(digest(e), digest(ml::symmetric_eigen64(a, 17)));
  std::printf("  symmetric_eigen64 digest (n=17, seed 2024): 0x%016llx\n", static_cast<unsigned long long>(digest(e)));
  EXPECT_EQ(digest(e), 0x15a01ab31e1e6758ULL) << "the committed bits moved: the order of operations changed";
  // The leading vectors alone, and any thread count, give the same bits.
  const ml::SymmetricEigen64 lead = ml::symmetric_eigen64(a, 17, 3);
  ASSERT_EQ(lead.vectors.size(), 3u * 17u);
  EXPECT_EQ(lead.values, e.values);
  EXPECT_TRUE(std::equal(lead.vectors.begin(), lead.vectors.end(), e.vectors.begin()));
  const Mat big = random_symmetric(100, 77);
  const ml::SymmetricEigen64 ref = ml::symmetric_eigen64(big, 100);
  std::printf("  symmetric_eigen64 digest (n=100, seed 77): 0x%016llx\n", static_cast<unsigned long long>(digest(ref)));
  EXPECT_EQ(digest(ref), 0x4d0a89dd08d6e8dbULL) << "the committed bits moved (two row blocks of the reduction)";
  const int threads = num_threads();
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    const ml::SymmetricEigen64 again = ml::symmetric_eigen64(big, 100);
    EXPECT_EQ(digest(again), digest(ref)) << t << " threads";
  }
  set_num_threads(threads);
  // Sabotage arm 1: one ulp of one entry (both triangles) moves the bits.
  Mat b = a;
  b[3 * 17 + 5] = b[5 * 17 + 3] = std::nextafter(a[3 * 17 + 5], 1.0);
  EXPECT_NE(digest(e), digest(ml::symmetric_eigen64(b, 17)));
  // Sabotage arm 2: a vector with its sign flipped still decomposes A but breaks the sign rule.
  ml::SymmetricEigen64 flipped = e;
  for (int64_t k = 0; k < 17; ++k) flipped.vectors[4 * 17 + k] = -flipped.vectors[4 * 17 + k];
  EXPECT_TRUE(sign_rule_holds(e, 17));
  EXPECT_FALSE(sign_rule_holds(flipped, 17));
}

}  // namespace
}  // namespace bl
