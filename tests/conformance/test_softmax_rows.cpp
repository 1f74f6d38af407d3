// Conformance of the CPU softmax's two paths (kernels/cpu/softmax.cpp): rows of at most 16384
// floats run in one pass per row (whole rows per task), longer rows take the leaf-job path. Both
// equal softmax_reference by memcmp at 1, 2 and 3 threads, SIMD on and off, around the limit,
// with special values, whole special rows, large magnitudes and in place. Sabotage arm: the
// division replaced by a multiplication with 1/s (a tempting shortcut for the vector pass) must be
// caught by the same comparison.
#include <string>
#include <vector>

#include "conformance/test_reduce_util.h"
#include "core/fp_probe.h"
#include "core/isa.h"
#include "kernels/cpu/exp_f64_cpu.h"
#include "kernels/math_map.h"
#include "kernels/softmax.h"

namespace bl::conformance {
namespace {

constexpr int64_t kOnePassRowMax = 16384;  // softmax.cpp's limit, 4 leaves

void check_rows(int64_t rows, int64_t n, const std::vector<float>& x, const std::string& what) {
  for (bool log_form : {false, true}) {
    std::vector<float> expected(x.size()), actual(x.size());
    softmax_reference(x.data(), rows, n, expected.data(), log_form);
    for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
      std::fill(actual.begin(), actual.end(), 7.0f);
      softmax_cpu(x.data(), rows, n, actual.data(), log_form, pool);
      ASSERT_TRUE(bits_equal(expected, actual,
                             std::string(log_form ? "log_softmax " : "softmax ") + what + " rows=" +
                                 std::to_string(rows) + " n=" + std::to_string(n) + " " + label));
    });
  }
}

TEST(SoftmaxRows, OnePassAndLeafJobPathsAroundTheLimit) {
  const int64_t lengths[] = {1, 2, 3, 7, 31, 32, 33, 4095, 4096, 4097, 8191, 12289,
                             kOnePassRowMax - 1, kOnePassRowMax, kOnePassRowMax + 1, 20011};
  for (int64_t n : lengths) {
    const int64_t rows = n <= 64 ? 37 : 3;  // several tasks for short rows
    for (const auto& x : data_variants(rows * n, 900 + n)) check_rows(rows, n, x, "mixed");
  }
}

TEST(SoftmaxRows, ManyShortRowsSpanSeveralTasks) {
  // 65536 / 100 = 655 rows per task: 2000 rows are 4 tasks, the last one short.
  auto x = generate_floats(2000 * 100, 61, 30.0f, 53);
  check_rows(2000, 100, x, "many rows");
}

TEST(SoftmaxRows, SpecialRows) {
  const float inf = float_of(0x7F800000u), nan = float_of(0x7FC00123u);
  for (int64_t n : {int64_t{5}, int64_t{1000}, kOnePassRowMax + 3}) {
    const int64_t rows = 7;
    auto x = generate_floats(rows * n, 71 + n, 5.0f);
    for (int64_t i = 0; i < n; ++i) {
      x[0 * n + i] = -inf;                        // all -inf: NaN everywhere
      if (i % 3 == 0) x[1 * n + i] = -inf;        // some -inf: zeros there
      if (i == n / 2) x[2 * n + i] = nan;          // one NaN (payload): NaN everywhere
      if (i == n - 1) x[3 * n + i] = inf;          // one +inf: NaN everywhere
      x[4 * n + i] = i % 2 ? 80.0f : -80.0f;       // exp underflows to 0 for half the row
      x[5 * n + i] = 3.0e38f;                       // equal huge values: uniform row
    }
    check_rows(rows, n, x, "special rows");
  }
}

TEST(SoftmaxRows, InPlaceBothPaths) {
  for (int64_t n : {int64_t{4096}, int64_t{kOnePassRowMax + 1}}) {
    for (bool log_form : {false, true}) {
      auto x = generate_floats(3 * n, 15 + n, 20.0f, 41);
      std::vector<float> expected(x.size());
      softmax_reference(x.data(), 3, n, expected.data(), log_form);
      softmax_cpu(x.data(), 3, n, x.data(), log_form, pool_with(3));
      EXPECT_TRUE(bits_equal(expected, x, "in place n=" + std::to_string(n) + (log_form ? " log" : "")));
    }
  }
}

// The fused shift + exp + leaf-sum kernels (used by the one-pass rows on AVX2 and AVX-512 CPUs):
// e and the leaf value equal canonicalize(exp(sub(x, m))) and
// leaf_reduce<StepAdd> by memcmp at every tail length, with specials, in place.
TEST(SoftmaxRows, FusedShiftLeafMatchesReference) {
  struct Fused {
    const char* name;
    float (*fn)(const float*, float, float*, int64_t, const float*);
    bool available;
  };
  const Fused kernels[] = {{"avx2", &exp_f64_table_shift_leaf_avx2, cpu_has_avx2_fma()},
                           {"avx512", &exp_f64_table_shift_leaf_avx512, isa_supported(Isa::avx512)}};
  int ran = 0;
  for (const Fused& k : kernels) {
    if (!k.available) continue;
    ++ran;
    for (int64_t len : {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 100, 1000, 4095, 4096}) {
      for (uint64_t seed : {1u, 2u}) {
        auto x = generate_floats(len, 500 + seed * 7 + len, seed == 1 ? 3.0f : 60.0f, seed == 1 ? 0 : 13);
        const float m = seed == 1 ? reference_reduce_one<StepMax>(x.data(), len, 1, 0.0f) : 1.5f;
        std::vector<float> e_ref(len), e(len + 1, 7.0f);
        for (int64_t i = 0; i < len; ++i) e_ref[i] = canonicalize(exp(sub(x[i], m)));
        const float leaf_ref = leaf_reduce<StepAdd>(e_ref.data(), len, 1, 0.0f);
        const float leaf = k.fn(x.data(), m, e.data(), len, seed == 1 ? nullptr : e_ref.data());
        const std::string ctx = std::string(k.name) + " len=" + std::to_string(len) + " seed=" + std::to_string(seed);
        ASSERT_TRUE(bits_equal(e_ref.data(), e.data(), static_cast<size_t>(len), 4, ctx));
        ASSERT_EQ(bits_of(e[len]), bits_of(7.0f)) << ctx << ": wrote past len";
        ASSERT_EQ(bits_of(canonicalize(leaf)), bits_of(canonicalize(leaf_ref))) << ctx;
        const float leaf_in_place = k.fn(x.data(), m, x.data(), len, nullptr);
        ASSERT_TRUE(bits_equal(e_ref.data(), x.data(), static_cast<size_t>(len), 4, ctx + " in place"));
        ASSERT_EQ(bits_of(canonicalize(leaf_in_place)), bits_of(canonicalize(leaf_ref))) << ctx;
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "no AVX2+FMA";
}

// Non-temporal output stores (used for outputs beyond the caches), forced on small arrays: softmax,
// log-softmax and the exp map equal their references, y aligned and not, threads 1/2/3.
TEST(SoftmaxRows, StreamedOutputsMatchReference) {
  set_exp_f64_stream_min_bytes(0);
  for (int64_t n : {int64_t{1}, int64_t{9}, int64_t{100}, int64_t{4096}, int64_t{5000}})
    for (const auto& x : data_variants(5 * n, 40 + n)) check_rows(5, n, x, "streamed");
  for (int64_t offset : {0, 1, 3}) {
    const int64_t rows = 4, n = 1000;
    auto x = generate_floats(rows * n, 77 + offset, 10.0f, 29);
    for (bool log_form : {false, true}) {
      std::vector<float> expected(x.size()), buffer(x.size() + 8, 7.0f);
      softmax_reference(x.data(), rows, n, expected.data(), log_form);
      softmax_cpu(x.data(), rows, n, buffer.data() + offset, log_form, pool_with(3));
      EXPECT_TRUE(bits_equal(expected.data(), buffer.data() + offset, expected.size(), 4,
                             "streamed, y offset " + std::to_string(offset)));
    }
    std::vector<float> exp_expected(x.size()), exp_buffer(x.size() + 8, 7.0f);
    math_map_reference(MathFn::exp, x.data(), nullptr, exp_expected.data(), rows * n);
    for (int threads : {1, 2, 3}) {
      math_map_cpu(MathFn::exp, x.data(), exp_buffer.data() + offset, rows * n, pool_with(threads));
      EXPECT_TRUE(bits_equal(exp_expected.data(), exp_buffer.data() + offset, exp_expected.size(), 4,
                             "exp map streamed, out offset " + std::to_string(offset)));
    }
    if (cpu_has_avx2_fma()) {  // the kernel directly
      std::vector<float> direct(x.size() + 8, 7.0f);
      ASSERT_TRUE(exp_f64_stream(x.data(), direct.data() + offset, rows * n));
      EXPECT_TRUE(bits_equal(exp_expected.data(), direct.data() + offset, exp_expected.size(), 4,
                             "exp_f64_stream, out offset " + std::to_string(offset)));
    }
  }
  set_exp_f64_stream_min_bytes(-1);
}

// Sabotage arm: y_i = e_i * (1/s) instead of e_i / s differs from the reference on ordinary rows.
TEST(SoftmaxRows, SabotageReciprocalMultiplyIsCaught) {
  const int64_t rows = 8, n = 4096;
  auto x = generate_floats(rows * n, 5, 4.0f);
  std::vector<float> expected(x.size()), sabotaged(x.size());
  softmax_reference(x.data(), rows, n, expected.data(), false);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    const float m = reference_reduce_one<StepMax>(xr, n, 1, 0.0f);
    const float s = reference_reduce_one<StepExpShift>(xr, n, 1, m);
    const float inv = div(1.0f, s);
    for (int64_t i = 0; i < n; ++i) sabotaged[r * n + i] = canonicalize(mul(exp(sub(xr[i], m)), inv));
  }
  EXPECT_FALSE(bits_equal(expected, sabotaged, "reciprocal multiply"));
}

}  // namespace
}  // namespace bl::conformance
