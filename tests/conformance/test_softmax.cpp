// Conformance of softmax / log-softmax (kernels/softmax.h): CPU == reference bit for bit,
// batch invariance, special rows, sabotage arms.
#include <cmath>
#include <string>
#include <vector>

#include "conformance/test_reduce_util.h"
#include "kernels/softmax.h"

namespace bl::conformance {
namespace {

void check_rows(int64_t rows, int64_t n, const std::vector<float>& x) {
  for (bool log_form : {false, true}) {
    std::vector<float> expected(x.size()), actual(x.size());
    softmax_reference(x.data(), rows, n, expected.data(), log_form);
    for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
      std::fill(actual.begin(), actual.end(), 7.0f);
      softmax_cpu(x.data(), rows, n, actual.data(), log_form, pool);
      ASSERT_TRUE(bits_equal(expected, actual,
                             std::string(log_form ? "log_softmax" : "softmax") + " rows=" +
                                 std::to_string(rows) + " n=" + std::to_string(n) + " " + label));
    });
  }
}

TEST(SoftmaxConformance, AllLengthsOneRow) {
  for (int64_t n : interesting_lengths())
    for (const auto& x : data_variants(n, 300 + n)) check_rows(1, n, x);
}

TEST(SoftmaxConformance, Batches) {
  const int64_t shapes[][2] = {{5, 4097}, {1000, 7}, {3, 12289}, {64, 33}, {0, 5}, {4, 0}};
  for (auto& s : shapes)
    for (const auto& x : data_variants(s[0] * s[1], 17 + s[1])) check_rows(s[0], s[1], x);
}

TEST(SoftmaxConformance, InPlace) {
  auto x = generate_floats(3 * 5000, 5, 10.0f, 41);
  std::vector<float> expected(x.size());
  softmax_reference(x.data(), 3, 5000, expected.data(), false);
  softmax_cpu(x.data(), 3, 5000, x.data(), false, pool_with(2));
  EXPECT_TRUE(bits_equal(expected, x, "in place"));
}

// A row alone gives the same bits as the same row inside a larger batch.
TEST(SoftmaxConformance, BatchInvariance) {
  const int64_t n = 8191, rows = 9;
  auto batch = generate_floats(rows * n, 77, 20.0f, 53);
  for (bool log_form : {false, true}) {
    std::vector<float> yb(batch.size());
    softmax_cpu(batch.data(), rows, n, yb.data(), log_form, pool_with(3));
    for (int64_t r : {int64_t{0}, int64_t{4}, rows - 1}) {
      std::vector<float> row(batch.begin() + r * n, batch.begin() + (r + 1) * n), y1(n);
      softmax_cpu(row.data(), 1, n, y1.data(), log_form, pool_with(1));
      ASSERT_TRUE(bits_equal(yb.data() + r * n, y1.data(), n, sizeof(float), "row " + std::to_string(r)));
    }
  }
}

TEST(SoftmaxConformance, SpecialRows) {
  const float inf = float_of(0x7F800000u);
  std::vector<float> x = {-inf, -inf, 1.0f, 2.0f, float_of(0xFFC00001u), 0.0f, inf, 1.0f, -inf, -inf};
  std::vector<float> y(x.size());
  softmax_cpu(x.data(), 5, 2, y.data(), false, pool_with(1));
  EXPECT_EQ(bits_of(y[0]), kCanonicalNanBits);  // all -inf row
  EXPECT_EQ(bits_of(y[4]), kCanonicalNanBits);  // NaN row
  EXPECT_EQ(bits_of(y[5]), kCanonicalNanBits);
  EXPECT_EQ(bits_of(y[6]), kCanonicalNanBits);  // +inf row
  float e = exp(-1.0f);
  EXPECT_EQ(y[3], div(1.0f, add(e, 1.0f)));
  // Accuracy sanity: sums to ~1 and close to float64 softmax.
  auto z = generate_floats(65537, 9, 30.0f);
  std::vector<float> p(z.size());
  softmax_cpu(z.data(), 1, 65537, p.data(), false, pool_with(2));
  double m = -1e300, s = 0;
  for (float v : z) m = std::max<double>(m, v);
  for (float v : z) s += std::exp(v - m);
  double worst = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    double ref = std::exp(z[i] - m) / s;
    worst = std::max(worst, std::fabs(p[i] - ref) / ref);
  }
  EXPECT_LT(worst, 1e-5);
}

// Sabotage arm: a softmax whose denominator is summed sequentially (or with leaf 2048) must be
// caught by the same comparison.
TEST(SoftmaxConformance, SabotageSequentialDenominatorIsCaught) {
  const int64_t n = 1000003;
  auto x = generate_floats(n, 31, 4.0f);
  std::vector<float> expected(n), sabotaged(n);
  softmax_reference(x.data(), 1, n, expected.data(), false);
  float m = reference_reduce_one<StepMax>(x.data(), n, 1, 0.0f);
  float s = 0.0f;
  for (float v : x) s = add(s, exp(sub(v, m)));
  for (int64_t i = 0; i < n; ++i) sabotaged[i] = softmax_element(x[i], m, s);
  EXPECT_FALSE(bits_equal(expected, sabotaged, "sequential denominator"));
}

}  // namespace
}  // namespace bl::conformance
