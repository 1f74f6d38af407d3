// test_host_math.cpp: the binary64 exp64 / log64 of ml/host_math.h against the C library (whose
// exp and log are within an ulp): at most 4 binary64 ulps apart over their range, the special
// values, log64(exp64(x)) close to x; and their bits fixed by committed values, so that a change of
// the evaluation order is seen (with its sabotage arm: the C library's e is not the committed bits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "conformance/test_rng_splitmix.h"
#include "ml/host_math.h"

namespace bl {
namespace {

int64_t ulps_apart(double a, double b) {
  int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  if (ia < 0) ia = std::numeric_limits<int64_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int64_t>::min() - ib;
  return ia > ib ? ia - ib : ib - ia;
}

TEST(HostMath, Exp64AndLog64AreWithinFourUlpsOfTheCLibrary) {
  test_rng::SplitMix64 rng(42);
  int64_t worst_exp = 0, worst_log = 0;
  for (int i = 0; i < 200000; ++i) {
    const double u = (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1p-53;  // (0, 1)
    const double x = (u - 0.5) * 1400.0;                                         // (-700, 700)
    worst_exp = std::max(worst_exp, ulps_apart(ml::exp64(x), std::exp(x)));
    const double y = std::ldexp(0.5 + u, static_cast<int>(rng.next() % 2000) - 1000);
    worst_log = std::max(worst_log, ulps_apart(ml::log64(y), std::log(y)));
  }
  EXPECT_LE(worst_exp, 4);
  EXPECT_LE(worst_log, 4);
  std::printf("  exp64: %lld ulps, log64: %lld ulps from the C library at worst\n", static_cast<long long>(worst_exp),
              static_cast<long long>(worst_log));
}

TEST(HostMath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_EQ(ml::exp64(0.0), 1.0);
  EXPECT_EQ(ml::exp64(710.0), inf);
  EXPECT_EQ(ml::exp64(-746.0), 0.0);
  EXPECT_EQ(ml::exp64(-inf), 0.0);
  EXPECT_TRUE(std::isnan(ml::exp64(nan)));
  EXPECT_EQ(ml::log64(1.0), 0.0);
  EXPECT_EQ(ml::log64(0.0), -inf);
  EXPECT_EQ(ml::log64(inf), inf);
  EXPECT_TRUE(std::isnan(ml::log64(-1.0)));
  EXPECT_TRUE(std::isnan(ml::log64(nan)));
  EXPECT_NEAR(ml::log64(ml::exp64(3.25)), 3.25, 1e-15);
  EXPECT_NEAR(ml::log64(4.9e-324), -744.44007192138126, 1e-12);  // the smallest subnormal
}

TEST(HostMath, BitsAreFixed) {
  // Committed results that every machine must give. exp64(1) is one ulp above the correctly
  // rounded e (0x4005bf0a8b145769, what the C library returns): the sabotage arm of this check,
  // showing that the committed bits are exp64's own and not whatever the C library gives.
  const double x[] = {1.0, -3.7, 123.456};
  const uint64_t want[] = {0x4005bf0a8b14576aull, 0x3f99511fc6871044ull, 0x4b11428e1cbc0143ull};
  for (int i = 0; i < 3; ++i) {
    const double e = ml::exp64(x[i]);
    uint64_t b;
    std::memcpy(&b, &e, 8);
    EXPECT_EQ(b, want[i]) << "exp64(" << x[i] << ")";
  }
  const double libc_e = std::exp(1.0);
  uint64_t lb;
  std::memcpy(&lb, &libc_e, 8);
  EXPECT_NE(lb, want[0]) << "the C library's e would have passed the committed-bits check";
  const double y[] = {10.0, 0.3};
  const uint64_t want_log[] = {0x40026bb1bbb55516ull, 0xbff34378fcbda721ull};
  for (int i = 0; i < 2; ++i) {
    const double l = ml::log64(y[i]);
    uint64_t b;
    std::memcpy(&b, &l, 8);
    EXPECT_EQ(b, want_log[i]) << "log64(" << y[i] << ")";
  }
}

double from_bits(uint64_t b) {
  double v;
  std::memcpy(&v, &b, 8);
  return v;
}

// digamma64 / lgamma64 against float64 references (SciPy's digamma and gammaln, committed as bits):
// within 4 ulps where |reference| >= 1/2, within 4e-15 absolute near the roots (where the
// recurrence's cancellation leaves an absolute, not a relative, error).
TEST(HostMath, Digamma64AndLgamma64MatchFloat64References) {
  struct Ref {
    double x;
    uint64_t psi, lgam;
  };
  const Ref refs[] = {
      {1e-08, 0xc197d784024f119eull, 0x40326bb1bb9c8a88ull},
      {0.013, 0xc0535ea9b9d1a904ull, 0x4011577da5973457ull},
      {0.25, 0xc010e8e9943cd7c3ull, 0x3ff49bbd81c16efbull},
      {0.5, 0xbfff6a897d3214fcull, 0x3fe250d048e7a1bcull},
      {1.0, 0xbfe2788cfc6fb619ull, 0x0000000000000000ull},
      {1.4616321449683622, 0xbc9aa2d9b3ce29e0ull, 0xbfbf19b9bcc38a48ull},
      {1.7, 0x3fcab1b25f1db0c1ull, 0xbfb886da6f118370ull},
      {2.0, 0x3fdb0ee6072093ceull, 0x0000000000000000ull},
      {2.5, 0x3fe680425af12b5eull, 0x3fd2383e809a67e8ull},
      {3.3, 0x3ff08ea206bad281ull, 0x3fef964fc1bf8d40ull},
      {5.0, 0x3ff8190ed71d7a48ull, 0x40096ca77c922cf9ull},
      {7.25, 0x3ffe9137b7a7e564ull, 0x401c35701a50ff06ull},
      {9.99, 0x4002016f32733d79ull, 0x40298f02675dd192ull},
      {10.0, 0x40020396dc85cc95ull, 0x40299a8921a7f7cfull},
      {17.5, 0x4006aab74d2a67e8ull, 0x40400a61f910a7fbull},
      {123.456, 0x40133f502faf1dfdull, 0x407d59b0522ff3beull},
      {10000.0, 0x40226bab2df571caull, 0x40f40b3b7add8cb0ull},
      {37000000.0, 0x40316d2a6a554e84ull, 0x41c21cfa1acf2273ull},
  };
  int64_t worst_psi = 0, worst_lgam = 0;
  for (const Ref& r : refs) {
    const double want_psi = from_bits(r.psi), want_lgam = from_bits(r.lgam);
    const double psi = ml::digamma64(r.x), lgam = ml::lgamma64(r.x);
    if (std::fabs(want_psi) >= 0.5) {
      EXPECT_LE(ulps_apart(psi, want_psi), 4) << "digamma64(" << r.x << ")";
      worst_psi = std::max(worst_psi, ulps_apart(psi, want_psi));
    } else {
      EXPECT_NEAR(psi, want_psi, 4e-15) << "digamma64(" << r.x << ")";
    }
    if (std::fabs(want_lgam) >= 0.5) {
      EXPECT_LE(ulps_apart(lgam, want_lgam), 4) << "lgamma64(" << r.x << ")";
      worst_lgam = std::max(worst_lgam, ulps_apart(lgam, want_lgam));
    } else {
      EXPECT_NEAR(lgam, want_lgam, 4e-15) << "lgamma64(" << r.x << ")";
    }
  }
  std::printf("  digamma64: %lld ulps, lgamma64: %lld ulps from the references at worst (|value| >= 1/2)\n",
              static_cast<long long>(worst_psi), static_cast<long long>(worst_lgam));
  // lgamma64 against the C library's lgamma over (0.5, 200), and psi's recurrence psi(x+1) = psi(x) + 1/x.
  test_rng::SplitMix64 rng(7);
  int64_t worst = 0;
  for (int i = 0; i < 20000; ++i) {
    const double x = 0.5 + 199.5 * ((static_cast<double>(rng.next() >> 11) + 0.5) * 0x1p-53);
    if (std::fabs(std::lgamma(x)) >= 0.5) worst = std::max(worst, ulps_apart(ml::lgamma64(x), std::lgamma(x)));
    EXPECT_NEAR(ml::digamma64(x + 1.0), ml::digamma64(x) + 1.0 / x, 1e-14 * std::max(1.0, std::fabs(ml::digamma64(x))));
  }
  EXPECT_LE(worst, 8);
  // sin64 / cos64 over (-10, 10) and asin64 over [-1, 1] against the C library (within an ulp).
  int64_t worst_sin = 0, worst_cos = 0, worst_asin = 0;
  for (int i = 0; i < 20000; ++i) {
    const double u = (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1p-53;
    const double x = (u - 0.5) * 20.0, s = 2.0 * u - 1.0;
    if (std::fabs(std::sin(x)) >= 0.25) worst_sin = std::max(worst_sin, ulps_apart(ml::sin64(x), std::sin(x)));
    if (std::fabs(std::cos(x)) >= 0.25) worst_cos = std::max(worst_cos, ulps_apart(ml::cos64(x), std::cos(x)));
    worst_asin = std::max(worst_asin, ulps_apart(ml::asin64(s), std::asin(s)));
    EXPECT_NEAR(ml::sin64(x), std::sin(x), 4e-16);
    EXPECT_NEAR(ml::cos64(x), std::cos(x), 4e-16);
  }
  EXPECT_LE(worst_sin, 4);
  EXPECT_LE(worst_cos, 4);
  EXPECT_LE(worst_asin, 4);
  std::printf("  sin64: %lld, cos64: %lld, asin64: %lld ulps from the C library at worst\n",
              static_cast<long long>(worst_sin), static_cast<long long>(worst_cos), static_cast<long long>(worst_asin));
  EXPECT_EQ(ml::asin64(1.0), 1.5707963267948966);
  EXPECT_TRUE(std::isnan(ml::asin64(1.5)));
  EXPECT_TRUE(std::isnan(ml::digamma64(0.0)) && std::isnan(ml::lgamma64(-1.0)));
  EXPECT_EQ(ml::digamma64(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace bl
