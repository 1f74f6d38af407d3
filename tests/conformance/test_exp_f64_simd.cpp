// Conformance of the explicit-SIMD binary64 exp kernels (kernels/cpu/exp_f64_cpu.h): AVX2 and
// AVX-512 outputs equal canonicalize(bl::exp(x)) by memcmp on hard inputs (exception-table inputs
// of the float-float path, inputs near a binary32 rounding boundary, specials, subnormals, the
// range edges), on a dense sample, at every tail length and offset, in place, and through the
// math map and softmax at 1, 2 and 3 threads. Sabotage arms: a too-small error bound and no rounding
// test must be caught by the same inputs. The AVX-512 arm skips where the CPU lacks AVX-512.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "core/error.h"
#include "core/fp_probe.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/exp_f64_cpu.h"
#include "kernels/math_map.h"
#include "kernels/softmax.h"

namespace bl::conformance {
namespace {

// Inputs whose e^x lies closest to a binary32 rounding boundary: the exception table of the
// float-float exp (exp_log_exceptions.h) and an input on which the rounding test fires.
std::vector<float> exception_inputs() {
  const uint32_t bits[] = {0x33800000u, 0x383A3EF1u, 0x39C6BE5Bu, 0x39E5BB1Du, 0x40315B33u,
                           0x4288942Bu, 0xBAE0E25Cu, 0xBBF0EDF1u, 0xBCE017BBu, 0xBF81EADFu,
                           0xC13D6631u, 0xC16912CDu, 0x3F0D642Eu};
  std::vector<float> v;
  for (uint32_t b : bits) v.push_back(float_of(b));
  return v;
}

// Kernel variants (Taylor degree, rounding-test margin as -log2; 0 = no test).
struct Variant {
  int degree;
  int margin_bits;
};

struct Kernel {
  const char* name;
  void (*run)(const float*, float*, int64_t);
  void (*variant)(const float*, float*, int64_t, int, int);
  Variant too_small_bound;    // sabotage: a low degree trusted with the kernel's margin
  Variant low_degree_honest;  // control: the same low degree with an honest margin
  Variant no_rounding_test;   // sabotage: a good degree rounded without the test
};

// Degree 4 (error 2^-34.5) with margin 2^-44 / 2^-32; degree 5 (2^-42.7) without the test. (Degree 6 without the test rounds every binary32
// input right: its error, 2^-50.4, is below the distance of the hardest case; no arm can catch it.)
Kernel kernel_named(const std::string& name) {
  if (name == "table_avx2")
    return {"table_avx2", &exp_f64_table_avx2, &exp_f64_table_avx2_variant, {4, 44}, {4, 32}, {5, 0}};
  return {"table_avx512", &exp_f64_table_avx512, &exp_f64_table_avx512_variant, {4, 44}, {4, 32}, {5, 0}};
}

bool kernel_available(const std::string& name) {
  if (name == "table_avx2") return cpu_has_avx2_fma();
  return isa_supported(Isa::avx512);
}

std::vector<float> reference_exp(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = canonicalize(exp(x[i]));
  return y;
}

// Inputs where a wrong evaluation shows: the exception table and a known rounding-test input with
// their neighbours, specials, subnormals, and the edges of the SIMD range and of exp's range.
std::vector<float> hard_set() {
  std::vector<float> v;
  for (float h : exception_inputs()) {
    const uint32_t b = bits_of(h);
    for (int d = -3; d <= 3; ++d) v.push_back(float_of(b + static_cast<uint32_t>(d)));
  }
  for (float s : special_values()) v.push_back(s);
  const uint32_t more[] = {
      0x7FC00001u, 0x7FA00000u, 0xFFFFFFFFu, 0x7F800001u,  // NaN payloads (quiet, signaling)
      0x00000002u, 0x80400000u, 0x807FFFFFu, 0x80800000u,  // subnormal and tiny inputs
      0x42B17217u, 0x42B17218u, 0x42B17219u,               // around the overflow threshold
      0xC2AEAC4Fu, 0xC2AEAC50u, 0xC2AEAC51u,               // around e^x = smallest normal
      0xC2CFF1B4u, 0xC2CFF1B5u, 0xC2CFF1B6u,               // around e^x = half the smallest subnormal
      0xC2D10000u, 0xC2D20000u, 0x42B20000u,               // -104.5, -105, 89
      0x3F317218u, 0xBF317218u, 0x32000000u, 0xB2000000u};
  for (uint32_t b : more) v.push_back(float_of(b));
  for (float edge : {-87.0f, 88.0f}) {
    const uint32_t b = bits_of(edge);
    for (int d = -2; d <= 2; ++d) v.push_back(float_of(b + static_cast<uint32_t>(d)));
  }
  return v;
}

// About 2.2 million inputs spread over [-90, 90] (every 1031st binary32 of [0, 90], both signs),
// plus the hard set. Built once.
const std::vector<float>& dense_set() {
  static const std::vector<float> v = [] {
    std::vector<float> d = hard_set();
    const uint32_t top = bits_of(90.0f);
    for (uint32_t b = 0; b < top; b += 1031) {
      d.push_back(float_of(b));
      d.push_back(float_of(b | 0x80000000u));
    }
    return d;
  }();
  return v;
}

// canonicalize(bl::exp(x)) of dense_set(), computed once.
const std::vector<float>& dense_expected() {
  static const std::vector<float> y = reference_exp(dense_set());
  return y;
}

int64_t count_differences(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += bits_of(a[i]) != bits_of(b[i]);
  return d;
}

class ExpF64Simd : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!kernel_available(GetParam())) GTEST_SKIP() << "this CPU has no " << GetParam();
  }
  Kernel k() const { return kernel_named(GetParam()); }
};

TEST_P(ExpF64Simd, MatchesScalarOnHardInputs) {
  const auto x = hard_set();
  std::vector<float> y(x.size(), 7.0f);
  k().run(x.data(), y.data(), static_cast<int64_t>(x.size()));
  EXPECT_TRUE(bits_equal(reference_exp(x), y, std::string(k().name) + " hard inputs"));
}

TEST_P(ExpF64Simd, MatchesScalarOnDenseSample) {
  const auto& x = dense_set();
  std::vector<float> y(x.size(), 7.0f);
  k().run(x.data(), y.data(), static_cast<int64_t>(x.size()));
  EXPECT_TRUE(bits_equal(dense_expected(), y, std::string(k().name) + " dense sample"));
}

TEST_P(ExpF64Simd, EveryTailLengthAndOffsetInPlace) {
  const auto x = hard_set();
  const auto expected = reference_exp(x);
  for (int64_t off = 0; off < 5; ++off) {
    for (int64_t len : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 31, 33, 97}) {
      if (off + len > static_cast<int64_t>(x.size())) continue;
      std::vector<float> y(static_cast<size_t>(len) + 2, 7.0f);
      k().run(x.data() + off, y.data() + 1, len);  // out unaligned, guard before and after
      const std::string ctx = std::string(k().name) + " off=" + std::to_string(off) + " len=" + std::to_string(len);
      ASSERT_TRUE(bits_equal(expected.data() + off, y.data() + 1, static_cast<size_t>(len), 4, ctx));
      ASSERT_EQ(bits_of(y[0]), bits_of(7.0f)) << ctx << ": wrote before out";
      ASSERT_EQ(bits_of(y[static_cast<size_t>(len) + 1]), bits_of(7.0f)) << ctx << ": wrote past n";
      std::vector<float> in_place(x.begin() + off, x.begin() + off + len);
      k().run(in_place.data(), in_place.data(), len);
      ASSERT_TRUE(bits_equal(expected.data() + off, in_place.data(), static_cast<size_t>(len), 4, ctx + " in place"));
    }
  }
}

TEST_P(ExpF64Simd, SabotageTooSmallErrorBoundIsCaught) {
  const auto& x = dense_set();
  const Variant variant = k().too_small_bound;
  std::vector<float> y(x.size());
  k().variant(x.data(), y.data(), static_cast<int64_t>(x.size()), variant.degree, variant.margin_bits);
  EXPECT_GT(count_differences(dense_expected(), y), 0) << "a too-small error bound went unnoticed";
}

TEST_P(ExpF64Simd, SabotageNoRoundingTestIsCaught) {
  const auto x = hard_set();
  const Variant variant = k().no_rounding_test;
  std::vector<float> y(x.size());
  k().variant(x.data(), y.data(), static_cast<int64_t>(x.size()), variant.degree, variant.margin_bits);
  EXPECT_GT(count_differences(reference_exp(x), y), 0) << "dropping the rounding test went unnoticed";
}

TEST_P(ExpF64Simd, HonestLowDegreeStaysCorrect) {
  const auto& x = dense_set();
  const Variant variant = k().low_degree_honest;
  std::vector<float> y(x.size());
  k().variant(x.data(), y.data(), static_cast<int64_t>(x.size()), variant.degree, variant.margin_bits);
  EXPECT_TRUE(bits_equal(dense_expected(), y,
                         std::string(k().name) + " degree " + std::to_string(variant.degree) +
                             ", margin 2^-" + std::to_string(variant.margin_bits)));
}

INSTANTIATE_TEST_SUITE_P(Isa, ExpF64Simd, ::testing::Values("table_avx2", "table_avx512"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(ExpF64SimdFallback, TableRoundingTestFiresRarelyAndOnHardInputs) {
  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA";
  const auto hard = exception_inputs();
  EXPECT_GT(exp_f64_table_avx2_fallback_count(hard.data(), static_cast<int64_t>(hard.size())), 0);
  // The window (2^10 of the 2^29 values of the low bits) passes about 2^-19 of in-range inputs.
  std::vector<float> x;
  for (float v : dense_set())
    if (v >= -87.0f && v <= 88.0f) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  EXPECT_LT(exp_f64_table_avx2_fallback_count(x.data(), n), n / 65536)
      << "the rounding test fires far more often than its window predicts";
}

// The math map (exp case) and softmax at 1, 2, 3 threads under the active ISA: same bits as the
// references, whichever kernel the ISA picks.
TEST(ExpF64SimdFallback, MathMapAndSoftmaxThreads) {
  const auto dense = dense_set();
  std::vector<float> x(3 * 65537);
  const size_t step = dense.size() / x.size();
  for (size_t i = 0; i < x.size(); ++i) x[i] = dense[i * step];
  std::vector<float> expected(x.size()), actual(x.size());
  math_map_reference(MathFn::exp, x.data(), nullptr, expected.data(), static_cast<int64_t>(x.size()));
  std::vector<float> soft_expected(x.size()), soft_actual(x.size());
  std::vector<float> rows_x(x.size());
  for (size_t i = 0; i < x.size(); ++i) rows_x[i] = x[i] / 4.0f;  // finite rows of moderate range
  for (auto& v : rows_x)
    if (!(v == v) || v > 1e30f || v < -1e30f) v = 0.5f;
  for (bool log_form : {false, true}) {
    softmax_reference(rows_x.data(), 3, 65537, soft_expected.data(), log_form);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      std::fill(actual.begin(), actual.end(), 7.0f);
      math_map_cpu(MathFn::exp, x.data(), actual.data(), static_cast<int64_t>(x.size()), pool);
      EXPECT_TRUE(bits_equal(expected, actual, "math map exp threads=" + std::to_string(threads)));
      softmax_cpu(rows_x.data(), 3, 65537, soft_actual.data(), log_form, pool);
      EXPECT_TRUE(bits_equal(soft_expected, soft_actual,
                             std::string(log_form ? "log_softmax" : "softmax") + " threads=" + std::to_string(threads)));
    }
  }
}

TEST(ExpF64SimdFallback, BadVariantIsAClearError) {
  float v = 1.0f;
  EXPECT_THROW(exp_f64_table_avx2_variant(&v, &v, -1, 6, 44), Error);
  EXPECT_THROW(exp_f64_table_avx2_variant(&v, &v, 1, 7, 44), Error);
  EXPECT_THROW(exp_f64_table_avx2_variant(&v, &v, 1, 6, 20), Error);
}

}  // namespace
}  // namespace bl::conformance
