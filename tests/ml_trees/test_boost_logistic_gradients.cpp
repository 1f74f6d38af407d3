// Logistic gradient pass of histogram boosting (ml/boosting/logistic_gradients.h): the binary64
// sigmoid with its rounding test must give bl::sigmoid's bits for every input, and the fused
// gradient pass must equal the contract's per-row formula byte for byte at 1, 2 and 3 threads.
// Inputs: special values, both edges of the binary64 range [-80, 80], a strided sweep over all
// 2^32 bit patterns, every 31st float of +-[1/128, 1/64), and Philox draws. The opt-in sweep
// bitlearn_boost_sigmoid_sweep (tools/ml_trees_bench/sigmoid_sweep.cpp) compares every float of
// [-80, 80].
// Sabotage arm: with the rounding test switched off, inputs pinned here (found by a sweep of every
// float in [-80, 80]) round the wrong way and must be caught by the same comparison.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "contract/arith.h"
#include "contract/math.h"
#include "contract/rng.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "ml/boosting/logistic_gradients.h"

namespace bl::ml {
namespace {

std::vector<float> sigmoid_inputs() {
  std::vector<float> x;
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 80.0f, -80.0f,
                  float_of(bits_of(80.0f) + 1), float_of(bits_of(-80.0f) + 1), float_of(bits_of(80.0f) - 1),
                  float_of(bits_of(-80.0f) - 1), 17.0f, 17.328680f, 16.635532f, -87.3365f, -88.7f, -103.97f,
                  -104.0f, 1e-30f, -1e-30f, 1.4e-45f, -1.4e-45f, std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 0.5f, -0.5f, 1.0f,
                  -1.0f}) {
    x.push_back(v);
  }
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) x.push_back(float_of(static_cast<uint32_t>(u)));
  for (uint32_t u = bits_of(0.0078125f); u < bits_of(0.015625f); u += 31) {  // one binade, both signs
    x.push_back(float_of(u));
    x.push_back(neg(float_of(u)));
  }
  for (uint64_t i = 0; i < 200000; ++i) x.push_back(mul(normal_element(5, 1, i), 4.0f));
  return x;
}

std::vector<float> contract_sigmoid(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = canonicalize(sigmoid(x[i]));
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(BoostLogisticGradients, SigmoidBitsEqualTheContract) {
  const std::vector<float> x = sigmoid_inputs();
  const std::vector<float> want = contract_sigmoid(x);
  std::vector<float> got(x.size());
  sigmoid_bits(x.data(), got.data(), static_cast<int64_t>(x.size()));
  EXPECT_TRUE(same_bits(got, want));
  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA: the binary64 path does not run on this CPU";
  std::vector<float> direct(x.size());
  const int64_t fallbacks = sigmoid_f64_avx2(x.data(), direct.data(), static_cast<int64_t>(x.size()), 44);
  EXPECT_TRUE(same_bits(direct, want));
  // Out-of-range inputs go to bl::sigmoid, and the rounding test fires rarely (about 2^-19).
  EXPECT_LT(fallbacks, static_cast<int64_t>(x.size()) / 3);
}

TEST(BoostLogisticGradients, SabotageNoRoundingTestIsCaught) {
  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA: the binary64 path does not run on this CPU";
  // Inputs where the binary64 value and sigmoid(x) lie on two sides of a rounding boundary.
  const std::vector<float> x = {float_of(0x34000000u), float_of(0x34c00000u), float_of(0x36280000u),
                                float_of(0x3d21bc81u), float_of(0xbe104170u)};
  const std::vector<float> want = contract_sigmoid(x);
  std::vector<float> with_test(x.size()), without(x.size());
  sigmoid_f64_avx2(x.data(), with_test.data(), static_cast<int64_t>(x.size()), 44);
  sigmoid_f64_avx2(x.data(), without.data(), static_cast<int64_t>(x.size()), 0);
  EXPECT_TRUE(same_bits(with_test, want));
  EXPECT_FALSE(same_bits(without, want));
}

TEST(BoostLogisticGradients, GradientPassEqualsTheFormulaAtAnyThreadCount) {
  const int64_t n = 3 * 4096 + 17;
  std::vector<float> raw(static_cast<size_t>(n));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    raw[i] = mul(normal_element(9, 1, static_cast<uint64_t>(i)), 6.0f);
    y[i] = static_cast<int32_t>(random_u32_element(9, 2, static_cast<uint64_t>(i)) & 1u);
  }
  raw[3] = std::numeric_limits<float>::quiet_NaN();
  raw[4] = 95.0f;
  raw[5] = -95.0f;
  const float min_hessian = 1e-16f;
  std::vector<float> want_g(static_cast<size_t>(n)), want_h(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float q = canonicalize(sigmoid(raw[i]));
    want_g[i] = sub(q, y[i] == 1 ? 1.0f : 0.0f);
    want_h[i] = max(mul(q, sub(1.0f, q)), min_hessian);
  }
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    std::vector<float> g(static_cast<size_t>(n), -1.0f), h(static_cast<size_t>(n), -1.0f);
    logistic_gradients(raw.data(), y.data(), n, min_hessian, g.data(), h.data(), pool);
    EXPECT_TRUE(same_bits(g, want_g)) << "threads " << threads;
    EXPECT_TRUE(same_bits(h, want_h)) << "threads " << threads;
  }
}

}  // namespace
}  // namespace bl::ml
