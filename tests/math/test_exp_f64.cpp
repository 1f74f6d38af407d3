// The binary64 exp of CUDA/HIP device code (contract/math/exp_f64.h), run here on the CPU: the same
// binary64 operations (fma, mul, add, conversion; one rounding each) give the same bits on the host,
// so these tests check the device path's rounding test and fallback against the float-float
// reference without a GPU. tests/cuda/test_exp_f64_cuda.cu repeats them on the device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "math/exp_f64_cases.h"

namespace {

using exp_f64_cases::Variant;

struct Outcome {
  int64_t n = 0;
  int64_t wrong = 0;      // results that differ from the float-float reference
  int64_t fell_back = 0;  // inputs decided by the float-float path
  uint32_t first_wrong = 0;
};

Outcome run_variant(const std::vector<float>& x, Variant v) {
  Outcome o;
  for (float xi : x) {
    bool fb = false;
    const float got = exp_f64_cases::exp_variant(xi, v, &fb);
    const float ref = bl::exp(xi);  // the host evaluates the float-float definition
    ++o.n;
    o.fell_back += fb ? 1 : 0;
    if (bl::bits_of(got) != bl::bits_of(ref)) {
      if (o.wrong == 0) o.first_wrong = bl::bits_of(xi);
      ++o.wrong;
    }
  }
  return o;
}

// Every 1021st bit pattern (all exponents, both signs), the special values and the hard inputs.
std::vector<float> sample_inputs() {
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 1021) x.push_back(bl::float_of(uint32_t(u)));
  for (float s : bl::conformance::special_values()) x.push_back(s);
  for (float h : exp_f64_cases::hard_inputs()) x.push_back(h);
  return x;
}

TEST(ExpF64, ShippedVariantMatchesReferenceOnHardInputs) {
  const Outcome o = run_variant(exp_f64_cases::hard_inputs(), exp_f64_cases::kShipped);
  EXPECT_EQ(o.wrong, 0) << "first wrong input 0x" << std::hex << o.first_wrong;
  // The exception-table inputs lie within 2^-44 of a rounding boundary: the test must fire on most.
  EXPECT_GE(o.fell_back, 1);
}

TEST(ExpF64, ShippedVariantMatchesReferenceOnSampleAndFallbackIsRare) {
  const std::vector<float> x = sample_inputs();
  const Outcome o = run_variant(x, exp_f64_cases::kShipped);
  EXPECT_EQ(o.wrong, 0) << "first wrong input 0x" << std::hex << o.first_wrong;
  std::printf("exp_f64 sample: %lld inputs, %lld decided by the float-float fallback\n",
              static_cast<long long>(o.n), static_cast<long long>(o.fell_back));
  EXPECT_LT(o.fell_back, o.n / 4096);
}

TEST(ExpF64, LowDegreeWithHonestMarginStaysCorrect) {
  // A poor approximation is harmless when the rounding test's margin covers its error: the
  // fallback then fires often, but every result is right.
  const Outcome o = run_variant(sample_inputs(), exp_f64_cases::kLowDegreeHonest);
  EXPECT_EQ(o.wrong, 0) << "first wrong input 0x" << std::hex << o.first_wrong;
  EXPECT_GT(o.fell_back, 100);
}

TEST(ExpF64, SabotageTooSmallErrorBoundIsCaught) {
  const Outcome o = run_variant(sample_inputs(), exp_f64_cases::kTooSmallBound);
  EXPECT_GT(o.wrong, 0) << "a 2^-26 approximation trusted to 2^-44 went unnoticed";
}

TEST(ExpF64, SabotageTooSmallUlpMarginIsCaughtByHardInputs) {
  const Outcome o = run_variant(exp_f64_cases::hard_inputs(), exp_f64_cases::kTooSmallUlpMargin);
  EXPECT_GT(o.wrong, 0) << "a 2^-46 approximation trusted to 8 binary64 units went unnoticed";
}

// The rounding test on the integer bits (exp_f64_round): where it does not fire, the result is
// the binary32 rounding of y (the host's conversion, round to nearest even); it fires on values
// within the margin of a rounding boundary, also for subnormal results and at the overflow edge.
TEST(ExpF64, RoundingOnBitsEqualsConversionAndFiresNearBoundaries) {
  using bl::exp_f64_detail::bits_of_f64;
  using bl::exp_f64_detail::exp_f64_margin_ulps;
  using bl::exp_f64_detail::exp_f64_round;
  using bl::exp_f64_detail::f64_of_bits;
  const uint32_t margin = exp_f64_margin_ulps(bl::exp_f64_detail::kExpF64MarginBits);
  EXPECT_EQ(margin, 512u);
  int64_t checked = 0, fired = 0;
  uint64_t s = 12345;
  // y from 2^-152 to 2^129: random significands, and values d units away from a rounding boundary.
  for (int e = -152; e <= 128; ++e) {
    for (int k = 0; k < 400; ++k) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t exp_field = static_cast<uint64_t>(e + 1023) << 52;
      uint64_t mant = (s >> 12) & ((uint64_t{1} << 52) - 1);
      const int64_t d = static_cast<int64_t>(k % 40) - 20 + (k % 3 == 0 ? 0 : static_cast<int64_t>(margin) * (k % 5));
      if (k >= 200) mant = ((mant >> 29) << 29) + (uint64_t{1} << 28) + static_cast<uint64_t>(d);
      mant &= (uint64_t{1} << 52) - 1;
      const double y = f64_of_bits(exp_field | mant);
      bool hard = false;
      const float f = exp_f64_round(y, margin, true, &hard);
      ++checked;
      if (hard) {
        ++fired;
        continue;
      }
      ASSERT_EQ(bl::bits_of(f), bl::bits_of(static_cast<float>(y)))
          << "y = " << y << " (bits 0x" << std::hex << bits_of_f64(y) << ")";
    }
  }
  EXPECT_GT(fired, 1000);
  EXPECT_LT(fired, checked / 2);
  // Exactly on a rounding boundary (normal, subnormal, overflow edge) and just beyond the margin.
  const double boundaries[] = {1.0 + 0x1p-24, 0x1p-140 * (1.0 + 0x1p-10), 0x1p-150, 0x1p127 * (2.0 - 0x1p-24)};
  for (double b : boundaries) {
    bool hard = false;
    exp_f64_round(b, margin, true, &hard);
    EXPECT_TRUE(hard) << "boundary " << b;
  }
  bool hard = true;
  const double beyond = f64_of_bits(bits_of_f64(1.0 + 0x1p-24) + margin + 1);
  EXPECT_EQ(bl::bits_of(exp_f64_round(beyond, margin, true, &hard)), bl::bits_of(static_cast<float>(beyond)));
  EXPECT_FALSE(hard);
  EXPECT_EQ(bl::bits_of(exp_f64_round(0x1p128, margin, true, &hard)), 0x7F800000u);
  EXPECT_EQ(bl::bits_of(exp_f64_round(0x1p-151, margin, true, &hard)), 0u);
}

TEST(ExpF64, SabotageNoRoundingTestIsCaught) {
  const std::vector<float> x = exp_f64_cases::hard_inputs();
  const Outcome o = run_variant(x, exp_f64_cases::kNoRoundingTest);
  EXPECT_GT(o.wrong, 0) << "binary64 rounded without a rounding test went unnoticed";
}

// All 2^32 inputs (about 10 minutes on one core): opt-in with BITLEARN_EXP_F64_EXHAUSTIVE=1
// (ctest -L exhaustive). Prints the fallback count and the inputs that need the rounding test.
TEST(ExpF64, ExhaustiveScan) {
  const char* on = std::getenv("BITLEARN_EXP_F64_EXHAUSTIVE");
  if (!on || std::string(on) != "1") GTEST_SKIP() << "set BITLEARN_EXP_F64_EXHAUSTIVE=1";
  int64_t wrong = 0, fell_back = 0, no_test_wrong = 0;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); ++u) {
    const float x = bl::float_of(static_cast<uint32_t>(u));
    bool hard = false;
    const float y = bl::exp_f64_detail::exp_f64_fast(x, bl::exp_f64_detail::kExpF64Degree,
                                                     bl::exp_f64_detail::kExpF64MarginBits, &hard);
    if (!hard && bl::bits_of(y) == bl::bits_of(bl::exp(x))) continue;
    const float ref = bl::exp(x);
    if (hard) {
      ++fell_back;
      if (bl::bits_of(y) != bl::bits_of(ref)) {
        ++no_test_wrong;
        std::printf("  without the rounding test 0x%08X would give 0x%08X, reference 0x%08X\n",
                    static_cast<unsigned>(u), bl::bits_of(y), bl::bits_of(ref));
      }
    } else {
      ++wrong;
      std::printf("  WRONG 0x%08X -> 0x%08X, reference 0x%08X\n", static_cast<unsigned>(u),
                  bl::bits_of(y), bl::bits_of(ref));
    }
  }
  std::printf("exp_f64 exhaustive: 2^32 inputs, %lld wrong, %lld decided by the fallback, %lld of "
              "them wrong without it\n",
              static_cast<long long>(wrong), static_cast<long long>(fell_back),
              static_cast<long long>(no_test_wrong));
  EXPECT_EQ(wrong, 0);
}

}  // namespace
