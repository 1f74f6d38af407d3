// Philox4x32-10, the exact int -> float conversions and Box-Muller normals (contract/rng.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "contract/rng.h"
#include "core/digest.h"
#include "core/thread_pool.h"

namespace {

struct PhiloxKat {
  uint32_t ctr[4];
  uint32_t key[2];
  uint32_t expected[4];
};

// Published known answers: Random123 (D. E. Shaw Research) tests/kat_vectors, lines
// "philox4x32 10 ..." (columns: counter words 0-3, key words 0-1, expected output words 0-3).
const PhiloxKat kKat10[] = {
    {{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}, {0x00000000u, 0x00000000u},
     {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

// The same file's "philox4x32 7 ..." lines: the round count is really a parameter.
const PhiloxKat kKat7[] = {
    {{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}, {0x00000000u, 0x00000000u},
     {0x5f6fb709u, 0x0d893f64u, 0x4f121f81u, 0x4f730a48u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu},
     {0x5207ddc2u, 0x45165e59u, 0x4d8ee751u, 0x8c52f662u}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
     {0x4dfccabau, 0x190a87f0u, 0xc47362bau, 0xb6b5242au}},
};

bl::PhiloxBlock block_of(const uint32_t w[4]) {
  bl::PhiloxBlock b;
  for (int i = 0; i < 4; ++i) b.w[i] = w[i];
  return b;
}

bool matches(const bl::PhiloxBlock& got, const uint32_t expected[4]) {
  for (int i = 0; i < 4; ++i)
    if (got.w[i] != expected[i]) return false;
  return true;
}

TEST(Philox, KnownAnswers10Rounds) {
  for (const PhiloxKat& k : kKat10) {
    bl::PhiloxBlock got = bl::philox4x32_10(block_of(k.ctr), k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(got.w[i], k.expected[i]) << "counter " << std::hex << k.ctr[0] << " word " << i;
  }
}

TEST(Philox, KnownAnswers7Rounds) {
  for (const PhiloxKat& k : kKat7) {
    bl::PhiloxBlock got = bl::philox4x32_rounds(block_of(k.ctr), k.key[0], k.key[1], 7);
    EXPECT_TRUE(matches(got, k.expected)) << "counter " << std::hex << k.ctr[0];
  }
}

// Sabotage arm: a generator with 9 rounds, or with the Weyl constants swapped, must fail the KAT.
TEST(Philox, SabotageNineRoundsFailsKat) {
  for (const PhiloxKat& k : kKat10) {
    bl::PhiloxBlock got = bl::philox4x32_rounds(block_of(k.ctr), k.key[0], k.key[1], 9);
    EXPECT_FALSE(matches(got, k.expected)) << "9 rounds passed the 10-round KAT";
  }
}

TEST(Philox, SabotageSwappedKeyScheduleFailsKat) {
  for (const PhiloxKat& k : kKat10) {
    bl::PhiloxBlock c = block_of(k.ctr);
    uint32_t k0 = k.key[0], k1 = k.key[1];
    for (int r = 0; r < 10; ++r) {
      if (r > 0) {
        k0 += bl::kPhiloxW1;  // swapped on purpose
        k1 += bl::kPhiloxW0;
      }
      c = bl::philox_round(c, k0, k1);
    }
    EXPECT_FALSE(matches(c, k.expected)) << "a wrong key schedule passed the KAT";
  }
}

// The documented layout: key = (seed low, seed high), counter = (block low, block high,
// stream low, stream high). The third KAT, spelled through philox_block, must still match.
TEST(Philox, SeedStreamBlockLayout) {
  const PhiloxKat& k = kKat10[2];
  uint64_t seed = (static_cast<uint64_t>(k.key[1]) << 32) | k.key[0];
  uint64_t block = (static_cast<uint64_t>(k.ctr[1]) << 32) | k.ctr[0];
  uint64_t stream = (static_cast<uint64_t>(k.ctr[3]) << 32) | k.ctr[2];
  EXPECT_TRUE(matches(bl::philox_block(seed, stream, block), k.expected));
  // Element i uses word i % 4 of block i / 4 (element indices reach blocks below 2^62).
  for (uint64_t blk : {0ull, 5ull, 0x3FFFFFFFFFFFFFFFull}) {
    bl::PhiloxBlock b = bl::philox_block(seed, stream, blk);
    for (uint64_t w = 0; w < 4; ++w)
      EXPECT_EQ(bl::random_u32_element(seed, stream, blk * 4 + w), b.w[w]);
  }
  // Different streams and seeds give different blocks.
  EXPECT_FALSE(matches(bl::philox_block(seed, stream + 1, block), k.expected));
  EXPECT_FALSE(matches(bl::philox_block(seed ^ (1ull << 40), stream, block), k.expected));
}

TEST(RngConversion, UniformCoIsExactTop24Bits) {
  EXPECT_EQ(bl::bits_of(bl::uniform_co(0u)), 0u);  // +0.0
  EXPECT_EQ(bl::uniform_co(0xFFu), 0.0f);           // the low 8 bits are not used
  EXPECT_EQ(bl::uniform_co(0x100u), 0x1p-24f);
  EXPECT_EQ(bl::uniform_co(0x80000000u), 0.5f);
  EXPECT_EQ(bl::uniform_co(0xFFFFFFFFu), 1.0f - 0x1p-24f);
  for (uint64_t i = 0; i < 100000; ++i) {
    uint32_t x = bl::random_u32_element(7, 0, i);
    float u = bl::uniform_co(x);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ASSERT_EQ(static_cast<uint32_t>(u * 16777216.0f), x >> 8) << "not exact for x=" << x;
  }
}

TEST(RngConversion, UniformOcIsExactAndNeverZero) {
  EXPECT_EQ(bl::uniform_oc(0u), 0x1p-24f);
  EXPECT_EQ(bl::uniform_oc(0xFFu), 0x1p-24f);
  EXPECT_EQ(bl::uniform_oc(0xFFFFFFFFu), 1.0f);
  EXPECT_EQ(bl::uniform_oc(0x7FFFFF00u), 0.5f);
  for (uint64_t i = 0; i < 100000; ++i) {
    uint32_t x = bl::random_u32_element(8, 0, i);
    float u = bl::uniform_oc(x);
    ASSERT_GT(u, 0.0f);
    ASSERT_LE(u, 1.0f);
    ASSERT_EQ(static_cast<uint32_t>(u * 16777216.0f), (x >> 8) + 1u);
  }
}

// Sabotage arm for the range checks above: the naive conversion x * 2^-32 rounds to 1.0 for large
// x, which the [0, 1) check must catch.
TEST(RngConversion, SabotageNaiveConversionLeavesTheRange) {
  volatile uint32_t x = 0xFFFFFFFFu;
  float naive = static_cast<float>(x) * 0x1p-32f;
  EXPECT_FALSE(naive < 1.0f) << "the naive conversion stayed below 1; the range test proves nothing";
  EXPECT_LT(bl::uniform_co(x), 1.0f);
}

TEST(RngConversion, UniformAbStaysInRange) {
  const float ranges[][2] = {{0.0f, 1.0f},   {-1.0f, 1.0f},   {-3.5f, -2.25f}, {1e-30f, 2e-30f},
                             {-1e30f, 1e30f}, {100.0f, 100.5f}, {-0.0f, 0x1p-149f}, {1.0f, 1.0f + 0x1p-23f}};
  for (const auto& r : ranges) {
    float a = r[0], b = r[1];
    for (uint64_t i = 0; i < 20000; ++i) {
      float v = bl::uniform_element(11, 3, i, a, b);
      ASSERT_GE(v, a) << "[" << a << ", " << b << ")";
      ASSERT_LT(v, b) << "[" << a << ", " << b << ")";
    }
    EXPECT_EQ(bl::uniform_ab(0u, a, b), a);
    EXPECT_LT(bl::uniform_ab(0xFFFFFFFFu, a, b), b);
  }
  // Rounding up to b is replaced by the float just below b: here u*(b-a)+a = b - 2^-47 rounds to b.
  EXPECT_EQ(bl::uniform_ab(0xFFFFFFFFu, 1.0f, 1.0f + 0x1p-23f), 1.0f);
  // The defined formula: fma(u, b - a, a).
  EXPECT_EQ(bl::uniform_ab(0x80000000u, 2.0f, 6.0f), 4.0f);
  EXPECT_EQ(bl::uniform_ab(0x40000000u, -1.0f, 1.0f), -0.5f);
}

TEST(RngConversion, UniformAbInvalidRangeGivesCanonicalNan) {
  const float inf = bl::float_of(0x7F800000u);
  EXPECT_EQ(bl::bits_of(bl::uniform_ab(5u, 1.0f, 1.0f)), bl::kCanonicalNanBits);
  EXPECT_EQ(bl::bits_of(bl::uniform_ab(5u, 2.0f, 1.0f)), bl::kCanonicalNanBits);
  EXPECT_EQ(bl::bits_of(bl::uniform_ab(5u, bl::canonical_nan(), 1.0f)), bl::kCanonicalNanBits);
  EXPECT_EQ(bl::bits_of(bl::uniform_ab(5u, 0.0f, inf)), bl::kCanonicalNanBits);
  EXPECT_EQ(bl::bits_of(bl::uniform_ab(5u, -3e38f, 3e38f)), bl::kCanonicalNanBits);  // b - a overflows
}

// Chi-square over 256 equal bins of 2^20 uniforms; with a fixed seed the statistic is a fixed
// number, so the bounds (mean 255, sd 22.6, +-6 sd) only guard against a broken generator.
TEST(RngStatistics, UniformChiSquare) {
  const int kBins = 256;
  const uint64_t n = 1u << 20;
  std::vector<double> count(kBins, 0.0);
  double sum = 0.0;
  for (uint64_t i = 0; i < n; ++i) {
    float u = bl::uniform_element(2024, 1, i);
    count[static_cast<int>(u * kBins)] += 1.0;
    sum += u;
  }
  double expected = static_cast<double>(n) / kBins, chi2 = 0.0;
  for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_GT(chi2, 255.0 - 6 * 22.6);
  EXPECT_LT(chi2, 255.0 + 6 * 22.6);
  EXPECT_NEAR(sum / n, 0.5, 0.002);
}

// Streams must be independent: the serial correlation between stream 0 and stream 1 is near 0.
TEST(RngStatistics, StreamsAreUncorrelated) {
  const uint64_t n = 1u << 18;
  double sxy = 0.0;
  for (uint64_t i = 0; i < n; ++i)
    sxy += (bl::uniform_element(5, 0, i) - 0.5) * (bl::uniform_element(5, 1, i) - 0.5);
  EXPECT_NEAR(sxy / n * 12.0, 0.0, 0.02);  // correlation coefficient; sd ~ 0.002
}

// The standard normal's deciles; each bin holds 10% of the mass.
const double kNormalDeciles[9] = {-1.2815516, -0.8416212, -0.5244005, -0.2533471, 0.0,
                                  0.2533471,  0.5244005,  0.8416212,  1.2815516};

TEST(RngStatistics, NormalMomentsAndDeciles) {
  const uint64_t n = 1u << 20;
  double sum = 0.0, sum2 = 0.0;
  std::vector<double> count(10, 0.0);
  for (uint64_t i = 0; i < n; ++i) {
    float z = bl::normal_element(99, 4, i);
    ASSERT_TRUE(bl::is_finite(z));
    ASSERT_LE(bl::abs(z), 5.77f);  // sqrt(-2 log 2^-24) = 5.7683...
    sum += z;
    sum2 += static_cast<double>(z) * z;
    int bin = 0;
    while (bin < 9 && z >= kNormalDeciles[bin]) ++bin;
    count[bin] += 1.0;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.005);
  EXPECT_NEAR(sum2 / n, 1.0, 0.01);
  double expected = n / 10.0, chi2 = 0.0;
  for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 9.0 + 6 * 4.25);  // 9 degrees of freedom: mean 9, sd 4.24
}

TEST(RngNormal, ElementLayoutUsesWordPairs) {
  const uint64_t seed = 0x0123456789abcdefull, stream = 17;
  for (uint64_t blk : {0ull, 1ull, 1000003ull, 0xFFFFFFFFFFFFFFFull}) {
    bl::PhiloxBlock b = bl::philox_block(seed, stream, blk);
    float z[4];
    bl::box_muller(b.w[0], b.w[1], &z[0], &z[1]);
    bl::box_muller(b.w[2], b.w[3], &z[2], &z[3]);
    for (uint64_t j = 0; j < 4; ++j)
      EXPECT_EQ(bl::bits_of(bl::normal_element(seed, stream, blk * 4 + j)), bl::bits_of(z[j]));
  }
}

TEST(RngNormal, BlockHelpersEqualElements) {
  for (uint64_t blk : {0ull, 3ull, 77777ull, 0x3FFFFFFFFFFFFFFFull}) {
    float z[4], u[4];
    bl::normal_block(5, 6, blk, z);
    bl::uniform_block(5, 6, blk, u);
    for (uint64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(bl::bits_of(z[j]), bl::bits_of(bl::normal_element(5, 6, blk * 4 + j)));
      EXPECT_EQ(bl::bits_of(u[j]), bl::bits_of(bl::uniform_element(5, 6, blk * 4 + j)));
    }
  }
}

TEST(RngNormal, BoxMullerFormula) {
  // u1 = 1 (x1 all ones) gives r = 0, so both normals are zero.
  float z0 = 1.0f, z1 = 1.0f;
  bl::box_muller(0xFFFFFFFFu, 0x12345678u, &z0, &z1);
  EXPECT_EQ(bl::abs(z0), 0.0f);
  EXPECT_EQ(bl::abs(z1), 0.0f);
  // u2 = 0 gives theta = 0: z0 = r, z1 = r * sin(0) = 0.
  bl::box_muller(0x7FFFFF00u, 0u, &z0, &z1);  // u1 = 0.5
  float r = bl::sqrt(bl::mul(-2.0f, bl::log(0.5f)));
  EXPECT_EQ(bl::bits_of(z0), bl::bits_of(bl::mul(r, bl::cos(0.0f))));
  EXPECT_EQ(bl::bits_of(z1), bl::bits_of(bl::mul(r, bl::sin(0.0f))));
  EXPECT_NEAR(z0, 1.1774100f, 1e-5f);  // sqrt(2 ln 2)
  // u2 = 1/4: theta = kTwoPiF / 4.
  bl::box_muller(0x7FFFFF00u, 0x40000000u, &z0, &z1);
  float theta = bl::mul(bl::float_of(bl::kTwoPiBits), 0.25f);
  EXPECT_EQ(bl::bits_of(z0), bl::bits_of(bl::mul(r, bl::cos(theta))));
  EXPECT_EQ(bl::bits_of(z1), bl::bits_of(bl::mul(r, bl::sin(theta))));
  EXPECT_NEAR(z1, 1.1774100f, 1e-5f);
  EXPECT_NEAR(z0, 0.0f, 1e-5f);
}

TEST(RngNormal, MeanAndStddevForm) {
  for (uint64_t i = 0; i < 1000; ++i) {
    float z = bl::normal_element(3, 9, i);
    float v = bl::normal_element(3, 9, i, 2.0f, 0.5f);
    EXPECT_EQ(bl::bits_of(v), bl::bits_of(bl::add(2.0f, bl::mul(0.5f, z))));
  }
}

// Golden digests of 65536 uniforms in [0, 1) and in [-2, 3): pins the counter layout and the
// conversions. The same values were produced by an AArch64 build (run under emulation), so they
// hold across architectures. Normals are not pinned here while the contract's log/sin/cos are
// still being finalized; the GPU test compares them with the CPU bit for bit instead.
TEST(RngGolden, UniformDigests) {
  const int n = 65536;
  std::vector<float> u(n), r(n), other_stream(n);
  for (int i = 0; i < n; ++i) {
    u[i] = bl::uniform_element(2026, 5, static_cast<uint64_t>(i));
    r[i] = bl::uniform_element(2026, 5, static_cast<uint64_t>(i), -2.0f, 3.0f);
    other_stream[i] = bl::uniform_element(2026, 6, static_cast<uint64_t>(i));
  }
  const char* golden_u = "155fef930d543b6f761d359c9bb9c59cf79dd120cb1c277f54b677b7f00b5425";
  EXPECT_EQ(bl::tensor_digest_f32({n}, u.data()), golden_u);
  EXPECT_EQ(bl::tensor_digest_f32({256, 256}, r.data()),
            "9a965490703e83d40e913b923f7b87d49e6b39df9e72ea8beffce50b2e26924f");
  // Sabotage arm: another stream must not match the golden digest.
  EXPECT_NE(bl::tensor_digest_f32({n}, other_stream.data()), golden_u);
}

// A fill split into size-derived chunks over 1, 2 and 3 threads gives the serial bits: each
// element is a pure function of (seed, stream, i).
TEST(RngFill, IdenticalForAnyThreadCount) {
  const int64_t n = 100003, chunk = 4096;
  std::vector<float> serial_u(n), serial_z(n);
  for (int64_t i = 0; i < n; ++i) {
    serial_u[i] = bl::uniform_element(42, 7, static_cast<uint64_t>(i));
    serial_z[i] = bl::normal_element(42, 7, static_cast<uint64_t>(i));
  }
  for (int threads : {1, 2, 3}) {
    bl::ThreadPool pool(threads);
    std::vector<float> u(n), z(n);
    int64_t tasks = (n + chunk - 1) / chunk;
    pool.parallel_for(tasks, [&](int64_t t) {
      for (int64_t i = t * chunk; i < n && i < (t + 1) * chunk; ++i) {
        u[i] = bl::uniform_element(42, 7, static_cast<uint64_t>(i));
        z[i] = bl::normal_element(42, 7, static_cast<uint64_t>(i));
      }
    });
    EXPECT_EQ(std::memcmp(u.data(), serial_u.data(), n * sizeof(float)), 0) << threads << " threads";
    EXPECT_EQ(std::memcmp(z.data(), serial_z.data(), n * sizeof(float)), 0) << threads << " threads";
  }
}

}  // namespace
