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

}  // namespace
}  // namespace bl
