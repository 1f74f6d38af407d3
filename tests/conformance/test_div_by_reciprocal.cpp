// The division lemma of kernels/div_by_reciprocal.h on the CPU: a / b from one binary64
// reciprocal of b equals the hardware's correctly rounded binary32 division, bit for bit, for
// dense sets of a (every significand of a binade, every subnormal) and many b (small and large,
// powers of two, even integers where ties occur, many trailing ones, random in [1, 8192]).
// The same for the form that rounds the product on its bits. Sabotage arms: a reciprocal rounded
// to binary32, and the rule without its tie case, are caught.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "kernels/div_by_reciprocal.h"

namespace bl::conformance {
namespace {

// The divisors every dense sweep runs with.
std::vector<float> divisors() {
  std::vector<float> b = {1.0f, 2.0f, 3.0f, 6.0f, 7.0f, 10.0f, 12.0f, 4096.0f, 8190.0f, 8192.0f,
                          float_of(0x3F800001u),   // 1 + 2^-23
                          float_of(0x3FFFFFFFu),   // 2 - 2^-23: all significand bits set
                          float_of(0x45FFFFFFu),   // 8192 - 2^-11
                          float_of(0x4B7FFFFFu),   // 2^24 - 1: odd integer, all ones
                          float_of(0x4B7FFFFEu),   // 2^24 - 2: even integer, many ones
                          1536.0f, 3.0e7f, 1.1f,
                          246.0f, 3994.0f, 7974.0f};  // even, RN64(1/b) off by almost half a unit
  test_rng::SplitMix64 rng(0x5EEDu);
  for (int i = 0; i < 10; ++i) {  // random b in [1, 8192]: exponent 0..12, random significand
    const uint32_t e = static_cast<uint32_t>(rng.next() % 13);
    const uint32_t f = static_cast<uint32_t>(rng.next()) & 0x007FFFFFu;
    b.push_back(float_of(((127u + e) << 23) | f));
  }
  return b;
}

// Counts a (given by bits in [first, last), every `step`-th) whose quotient by `quotient` differs
// from the hardware division.
template <class Quotient>
int64_t count_differences(float b, uint32_t first, uint32_t last, Quotient quotient, uint32_t step = 1) {
  const Reciprocal d = reciprocal_of(b);
  int64_t differ = 0;
  for (uint32_t u = first; u < last; u += step) {
    const float a = float_of(u);
    differ += bits_of(quotient(a, d)) != bits_of(div(a, b));
  }
  return differ;
}

// Both shipped forms against one hardware division per a: a difference in either counts.
float shipped_both(float a, const Reciprocal& d) {
  const float y = div_by_reciprocal(a, d);
  return bits_of(div_by_reciprocal_bits(a, d)) == bits_of(y) ? y : float_of(0x7FC00001u);
}

TEST(DivByReciprocal, EvenIntegerTest) {
  EXPECT_TRUE(is_even_integer(2.0f));
  EXPECT_TRUE(is_even_integer(6.0f));
  EXPECT_TRUE(is_even_integer(8190.0f));
  EXPECT_TRUE(is_even_integer(float_of(0x4B7FFFFEu)));
  EXPECT_TRUE(is_even_integer(3.0e7f));
  EXPECT_TRUE(is_even_integer(-4.0f));
  EXPECT_FALSE(is_even_integer(0.0f));
  EXPECT_FALSE(is_even_integer(1.0f));
  EXPECT_FALSE(is_even_integer(3.0f));
  EXPECT_FALSE(is_even_integer(2.5f));
  EXPECT_FALSE(is_even_integer(float_of(0x4B7FFFFFu)));
  EXPECT_FALSE(is_even_integer(float_of(0x7F800000u)));
  EXPECT_FALSE(is_even_integer(float_of(0x7FC00000u)));
  // Against the definition for every float in [1, 2^25) whose low 9 significand bits are 0.
  for (uint32_t u = 0x3F800000u; u < 0x4C000000u; u += 512u) {
    const float b = float_of(u);
    const double half = static_cast<double>(b) / 2.0;
    const bool even = half == static_cast<double>(static_cast<int64_t>(half));
    ASSERT_EQ(is_even_integer(b), even) << "b bits 0x" << std::hex << u;
  }
}

// Every a in [0.5, 1) for each divisor; every 61st subnormal a and a in [2^-120, 2^-119)
// (quotients on both sides of 2^-126 for b > 2^6); every subnormal a for the tie-prone 3994.
// Divisions with subnormal operands or results are slow on some CPUs (microcode assists), hence
// the sampling; DivByReciprocal.ExhaustiveRanges takes every a of these ranges (opt-in).
TEST(DivByReciprocal, EveryBinadeSignificandAndSampledSubnormals) {
  for (float b : divisors()) {
    EXPECT_EQ(count_differences(b, 0x3F000000u, 0x3F800000u, shipped_both), 0) << "a in [0.5, 1), b = " << b;
    EXPECT_EQ(count_differences(b, 0x00000000u, 0x00800000u, shipped_both, 61), 0) << "subnormal a, b = " << b;
    EXPECT_EQ(count_differences(b, 0x03800000u, 0x04000000u, shipped_both, 61), 0) << "a near 2^-120, b = " << b;
  }
  EXPECT_EQ(count_differences(3994.0f, 0x00000000u, 0x00800000u, shipped_both), 0) << "every subnormal a, b = 3994";
}

// Every a of the three ranges for every divisor (about 10 s here, minutes where subnormal
// division is slow): opt-in with BITLEARN_DIV_RECIPROCAL_EXHAUSTIVE=1 (ctest -L exhaustive).
TEST(DivByReciprocal, ExhaustiveRanges) {
  const char* on = std::getenv("BITLEARN_DIV_RECIPROCAL_EXHAUSTIVE");
  if (!on || std::string(on) != "1") GTEST_SKIP() << "set BITLEARN_DIV_RECIPROCAL_EXHAUSTIVE=1";
  for (float b : divisors()) {
    EXPECT_EQ(count_differences(b, 0x00000000u, 0x00800000u, shipped_both), 0) << "subnormal a, b = " << b;
    EXPECT_EQ(count_differences(b, 0x03800000u, 0x04000000u, shipped_both), 0) << "a near 2^-120, b = " << b;
  }
}

// Sampled a over all non-negative finite floats up to 1 (and a few above), many more divisors.
TEST(DivByReciprocal, SampledQuotients) {
  test_rng::SplitMix64 rng(0xD1Fu);
  for (int j = 0; j < 200; ++j) {
    const uint32_t e = static_cast<uint32_t>(rng.next() % 14);  // b in [1, 16384)
    const float b = float_of(((127u + e) << 23) | (static_cast<uint32_t>(rng.next()) & 0x007FFFFFu));
    const float even = static_cast<float>(2 * (1 + rng.next() % 4096));  // even integers
    for (float bb : {b, even}) {
      const Reciprocal d = reciprocal_of(bb);
      for (int i = 0; i < 20000; ++i) {
        const float a = float_of(static_cast<uint32_t>(rng.next() % 0x3F800001u));  // [0, 1]
        ASSERT_EQ(bits_of(div_by_reciprocal(a, d)), bits_of(div(a, bb))) << "a = " << a << " b = " << bb;
        ASSERT_EQ(bits_of(div_by_reciprocal_bits(a, d)), bits_of(div(a, bb))) << "bits: a = " << a << " b = " << bb;
      }
    }
  }
}

// Ties below 2^-126 (b an even integer, a / b a binary32 midpoint) go to the division.
TEST(DivByReciprocal, SubnormalTiesTakeTheDivision) {
  const float a = float_of(5991u);  // a / 3994 = 1.5 * 2^-149 rounds to even: 2 * 2^-149
  const Reciprocal d = reciprocal_of(3994.0f);
  EXPECT_EQ(bits_of(div(a, 3994.0f)), 2u);
  EXPECT_EQ(bits_of(div_by_reciprocal(a, d)), 2u);
  EXPECT_EQ(bits_of(div_by_reciprocal_fast(a, d.r)), 1u);  // the product alone misses the tie
  EXPECT_EQ(bits_of(div_by_reciprocal_bits(a, d)), 2u);
  EXPECT_EQ(bits_of(div_by_reciprocal(0.0f, d)), 0u);
  EXPECT_EQ(bits_of(div_by_reciprocal(1.0f, reciprocal_of(1.0f))), bits_of(1.0f));
}

// Sabotage arm 1: a reciprocal rounded to binary32 (then the product in binary64) is caught.
TEST(DivByReciprocal, SabotageBinary32ReciprocalIsCaught) {
  const auto sabotaged = [](float a, const Reciprocal& d) {
    return div_by_reciprocal_fast(a, static_cast<double>(static_cast<float>(d.r)));
  };
  EXPECT_GT(count_differences(3.0f, 0x3F000000u, 0x3F010000u, sabotaged), 0);
  EXPECT_GT(count_differences(1.1f, 0x3F000000u, 0x3F010000u, sabotaged), 0);
}

// Sabotage arm 2: the product alone, without the tie rule, is caught among subnormal a.
TEST(DivByReciprocal, SabotageNoTieRuleIsCaught) {
  const auto sabotaged = [](float a, const Reciprocal& d) { return div_by_reciprocal_fast(a, d.r); };
  EXPECT_GT(count_differences(3994.0f, 0x00000000u, 0x00200000u, sabotaged), 0);
  EXPECT_GT(count_differences(246.0f, 0x00000000u, 0x00200000u, sabotaged), 0);
  const auto sabotaged_bits = [](float a, const Reciprocal& d) { return div_by_reciprocal_fast_bits(a, d.r); };
  EXPECT_GT(count_differences(3994.0f, 0x00000000u, 0x00200000u, sabotaged_bits), 0);
  EXPECT_EQ(count_differences(7.0f, 0x00000000u, 0x00800000u, sabotaged, 7), 0);  // not even: no ties
}

}  // namespace
}  // namespace bl::conformance
