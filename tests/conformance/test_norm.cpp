// Conformance of layer norm and RMS norm (kernels/norm.h): CPU == reference bit for bit.
#include <cmath>
#include <string>
#include <vector>

#include "conformance/test_reduce_util.h"
#include "kernels/norm.h"

namespace bl::conformance {
namespace {

void check_rows(int64_t rows, int64_t n, const std::vector<float>& x) {
  auto gamma = generate_floats(n, 1000 + n, 2.0f);
  auto beta = generate_floats(n, 2000 + n, 1.0f);
  const float eps = 1e-5f;
  for (int variant = 0; variant < 4; ++variant) {
    const float* g = (variant & 1) ? gamma.data() : nullptr;
    const float* b = (variant & 2) ? beta.data() : nullptr;
    std::vector<float> ey(x.size()), ay(x.size()), em(rows), am(rows), er(rows), ar(rows);
    layer_norm_reference(x.data(), rows, n, g, b, eps, ey.data(), em.data(), er.data());
    for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
      layer_norm_cpu(x.data(), rows, n, g, b, eps, ay.data(), am.data(), ar.data(), pool);
      std::string ctx = "layer_norm variant=" + std::to_string(variant) + " rows=" + std::to_string(rows) +
                        " n=" + std::to_string(n) + " " + label;
      ASSERT_TRUE(bits_equal(ey, ay, ctx + " y"));
      ASSERT_TRUE(bits_equal(em, am, ctx + " mean"));
      ASSERT_TRUE(bits_equal(er, ar, ctx + " rstd"));
    });
    if (variant >= 2) continue;
    rms_norm_reference(x.data(), rows, n, g, eps, ey.data(), er.data());
    for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
      rms_norm_cpu(x.data(), rows, n, g, eps, ay.data(), ar.data(), pool);
      std::string ctx = "rms_norm variant=" + std::to_string(variant) + " rows=" + std::to_string(rows) +
                        " n=" + std::to_string(n) + " " + label;
      ASSERT_TRUE(bits_equal(ey, ay, ctx + " y"));
      ASSERT_TRUE(bits_equal(er, ar, ctx + " rstd"));
    });
  }
}

TEST(NormConformance, AllLengthsOneRow) {
  for (int64_t n : interesting_lengths())
    for (const auto& x : data_variants(n, 500 + n)) check_rows(1, n, x);
}

TEST(NormConformance, Batches) {
  const int64_t shapes[][2] = {{5, 4097}, {1000, 7}, {3, 12289}, {64, 768}, {0, 5}, {4, 0}};
  for (auto& s : shapes)
    for (const auto& x : data_variants(s[0] * s[1], 23 + s[1])) check_rows(s[0], s[1], x);
}

TEST(NormConformance, BatchInvariance) {
  const int64_t n = 4099, rows = 7;
  auto batch = generate_floats(rows * n, 78, 3.0f, 61);
  auto gamma = generate_floats(n, 79, 2.0f);
  std::vector<float> yb(batch.size()), rb(batch.size());
  layer_norm_cpu(batch.data(), rows, n, gamma.data(), gamma.data(), 1e-5f, yb.data(), nullptr, nullptr,
                 pool_with(3));
  rms_norm_cpu(batch.data(), rows, n, gamma.data(), 1e-6f, rb.data(), nullptr, pool_with(3));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> row(batch.begin() + r * n, batch.begin() + (r + 1) * n), y1(n), r1(n);
    layer_norm_cpu(row.data(), 1, n, gamma.data(), gamma.data(), 1e-5f, y1.data(), nullptr, nullptr,
                   pool_with(1));
    rms_norm_cpu(row.data(), 1, n, gamma.data(), 1e-6f, r1.data(), nullptr, pool_with(2));
    ASSERT_TRUE(bits_equal(yb.data() + r * n, y1.data(), n, sizeof(float), "layer_norm row"));
    ASSERT_TRUE(bits_equal(rb.data() + r * n, r1.data(), n, sizeof(float), "rms_norm row"));
  }
}

TEST(NormConformance, AccuracyAgainstFloat64) {
  const int64_t n = 65537;
  auto x = generate_floats(n, 80, 5.0f);
  std::vector<float> y(n);
  layer_norm_cpu(x.data(), 1, n, nullptr, nullptr, 1e-5f, y.data(), nullptr, nullptr, pool_with(2));
  double mean = 0, var = 0;
  for (float v : x) mean += v;
  mean /= n;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= n;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i)
    worst = std::max(worst, std::fabs(y[i] - (x[i] - mean) / std::sqrt(var + 1e-5)));
  EXPECT_LT(worst, 1e-5);
}

// Sabotage arm: a layer norm with a one-pass variance (E[x^2] - mean^2) is caught.
TEST(NormConformance, SabotageOnePassVarianceIsCaught) {
  const int64_t n = 12289;
  auto x = generate_floats(n, 81, 3.0f);
  for (auto& v : x) v = add(v, 10.0f);
  std::vector<float> expected(n), sabotaged(n);
  layer_norm_reference(x.data(), 1, n, nullptr, nullptr, 1e-5f, expected.data(), nullptr, nullptr);
  float mean = finish_mean(reference_reduce_one<StepAdd>(x.data(), n, 1, 0.0f), n);
  float ms = finish_mean(reference_reduce_one<StepSquare>(x.data(), n, 1, 0.0f), n);
  float den = norm_denominator(sub(ms, mul(mean, mean)), 1e-5f);
  for (int64_t i = 0; i < n; ++i) sabotaged[i] = layer_norm_element(x[i], mean, den, 1, 0, false, false);
  EXPECT_FALSE(bits_equal(expected, sabotaged, "one-pass variance"));
}

}  // namespace
}  // namespace bl::conformance
