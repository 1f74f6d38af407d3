// Conformance of cumsum (kernels/cumsum.h): CPU == reference bit for bit, sabotage arms.
#include <cmath>
#include <string>
#include <vector>

#include "conformance/test_reduce_util.h"
#include "kernels/cumsum.h"

namespace bl::conformance {
namespace {

void check(ReduceShape s, const std::vector<float>& x) {
  std::vector<float> expected(x.size()), actual(x.size());
  cumsum_reference(x.data(), s, expected.data());
  for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
    std::fill(actual.begin(), actual.end(), 3.0f);
    cumsum_cpu(x.data(), s, actual.data(), pool);
    ASSERT_TRUE(bits_equal(expected, actual,
                           "cumsum (" + std::to_string(s.outer) + "," + std::to_string(s.n) + "," +
                               std::to_string(s.inner) + ") " + label));
  });
}

TEST(CumsumConformance, AllLengths) {
  for (int64_t n : interesting_lengths())
    for (const auto& x : data_variants(n, 600 + n)) check(ReduceShape{1, n, 1}, x);
}

TEST(CumsumConformance, BatchedAndStrided) {
  const ReduceShape shapes[] = {{3, 1025, 1}, {100, 7, 1}, {2, 513, 17}, {3, 2049, 5}, {0, 3, 2}, {2, 0, 3}};
  for (ReduceShape s : shapes)
    for (const auto& x : data_variants(s.outer * s.n * s.inner, 9 + s.n)) check(s, x);
}

TEST(CumsumConformance, InPlaceAndSignedZero) {
  auto x = generate_floats(5000, 12, 1.0f, 29);
  std::vector<float> expected(x.size());
  cumsum_reference(x.data(), ReduceShape{1, 5000, 1}, expected.data());
  cumsum_cpu(x.data(), ReduceShape{1, 5000, 1}, x.data(), pool_with(3));
  EXPECT_TRUE(bits_equal(expected, x, "in place"));
  std::vector<float> z = {-0.0f, -0.0f}, y(2);
  cumsum_cpu(z.data(), ReduceShape{1, 2, 1}, y.data(), pool_with(1));
  EXPECT_EQ(bits_of(y[0]), 0x80000000u);  // the first element is copied, not added to +0
  EXPECT_EQ(bits_of(y[1]), 0x80000000u);
}

TEST(CumsumConformance, AccuracyAgainstFloat64) {
  const int64_t n = 1000003;
  auto x = generate_floats(n, 13);
  std::vector<float> y(n);
  cumsum_cpu(x.data(), ReduceShape{1, n, 1}, y.data(), pool_with(2));
  double s = 0, abs_s = 0, worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += x[i];
    abs_s += std::fabs(x[i]);
    worst = std::max(worst, std::fabs(y[i] - s) / abs_s);
  }
  EXPECT_LT(worst, (kCumsumBlock + cumsum_block_count(n)) * 0x1p-24);
}

// Sabotage arm: a plain sequential cumsum, and another block size, are caught.
TEST(CumsumConformance, SabotageOtherScheduleIsCaught) {
  const int64_t n = 65537;
  auto x = generate_floats(n, 14);
  std::vector<float> expected(n), sequential(n);
  cumsum_reference(x.data(), ReduceShape{1, n, 1}, expected.data());
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) sequential[i] = acc = (i == 0 ? x[0] : add(acc, x[i]));
  EXPECT_FALSE(bits_equal(expected, sequential, "sequential"));
  // Block 256 instead of 512: the reference run on two halves of each block boundary pattern.
  std::vector<float> block256(n);
  float offset = 0.0f, local = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 256 == 0 && i > 0) offset = (i == 256 ? local : add(offset, local));
    local = (i % 256 == 0) ? x[i] : add(local, x[i]);
    block256[i] = i < 256 ? local : add(offset, local);
  }
  EXPECT_FALSE(bits_equal(expected, block256, "block 256"));
}

}  // namespace
}  // namespace bl::conformance
