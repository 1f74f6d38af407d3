// Conformance of the selective scan (kernels/selective_scan.h): the CPU kernel equals the reference
// bit for bit at threads 1, 2 and 3 over many shapes (empty, one, primes, Mamba and Mamba-2
// layouts, mixed lengths, special values); sabotaged references (separate multiply and add in the
// state update, the C contraction summed from the other end) differ.
#include <string>
#include <vector>

#include "conformance/scan_cases.h"
#include "conformance/test_reduce_util.h"
#include "core/error.h"

namespace bl::conformance {
namespace {

TEST(SelectiveScanConformance, CpuEqualsReferenceAtEveryThreadCount) {
  uint64_t seed = 100;
  for (const ScanShape& s : scan_shapes()) {
    for (int special_every : {0, 13}) {
      for (bool with_d : {true, false}) {
        const ScanCase c = make_scan_case(s, seed += 10, special_every, with_d);
        for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
          std::vector<float> state = c.state0, y(c.y_ref.size(), 3.0f);
          selective_scan_cpu(c.args(state.data(), y.data()), pool);
          ASSERT_TRUE(bits_equal(c.y_ref, y, c.label + " y " + label));
          ASSERT_TRUE(bits_equal(c.state_ref, state, c.label + " state " + label));
        });
      }
    }
  }
}

TEST(SelectiveScanConformance, PrecomputedDecayGivesTheSameBits) {
  uint64_t seed = 900;
  for (const ScanShape& s : scan_shapes()) {
    const ScanCase c = make_scan_case(s, seed += 10, 13, true);
    const int64_t B = s.batch, T = s.steps, H = s.heads, N = s.state;
    std::vector<float> decay(static_cast<size_t>(B * T * H * N));
    for (int64_t r = 0; r < B * T; ++r)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < N; ++n) decay[(r * H + h) * N + n] = exp(mul(c.dt[r * H + h], c.A[h * N + n]));
    for (int threads : kThreadCounts) {
      std::vector<float> state = c.state0, y(c.y_ref.size(), 3.0f);
      ScanArgs a = c.args(state.data(), y.data());
      a.decay = decay.data();
      selective_scan_cpu(a, pool_with(threads));
      ASSERT_TRUE(bits_equal(c.y_ref, y, c.label + " y, decay given, threads " + std::to_string(threads)));
      ASSERT_TRUE(bits_equal(c.state_ref, state, c.label + " state, decay given"));
    }
  }
}

TEST(SelectiveScanConformance, SplitRunsEqualOneRun) {
  // Decode needs the state after t steps to continue exactly: 5 + 1 + 1 steps equal 7 steps.
  const ScanCase c = make_scan_case({2, 7, 3, 4, 6, 1}, 77, 0, true);
  std::vector<int64_t> full_lengths(2, 7);
  ScanCase whole = c;
  whole.lengths = full_lengths;
  std::vector<float> state = c.state0, y(c.y_ref.size());
  selective_scan_cpu(whole.args(state.data(), y.data()), pool_with(2));
  std::vector<float> state_split = c.state0;
  const int64_t H = 3, P = 4, N = 6;
  for (const auto& range : {std::pair<int64_t, int64_t>{0, 5}, {5, 6}, {6, 7}}) {
    // Named copies, not a structured binding: C++17 lambdas cannot capture bindings (clang).
    const int64_t start = range.first, stop = range.second;
    const int64_t T = stop - start;
    ScanCase part = c;
    part.shape.steps = T;
    part.lengths.assign(2, T);
    auto take = [&](const std::vector<float>& v, int64_t per_step) {
      std::vector<float> out;
      for (int64_t b = 0; b < 2; ++b)
        out.insert(out.end(), v.begin() + (b * 7 + start) * per_step, v.begin() + (b * 7 + stop) * per_step);
      return out;
    };
    part.x = take(c.x, H * P), part.dt = take(c.dt, H), part.Bm = take(c.Bm, N), part.Cm = take(c.Cm, N);
    std::vector<float> y_part(static_cast<size_t>(2 * T * H * P));
    selective_scan_cpu(part.args(state_split.data(), y_part.data()), pool_with(3));
    EXPECT_TRUE(bits_equal(take(y, H * P), y_part, "steps " + std::to_string(start) + ".." + std::to_string(stop)));
  }
  EXPECT_TRUE(bits_equal(state, state_split, "final state"));
}

TEST(SelectiveScanConformance, BadArgumentsAreNamed) {
  ScanCase c = make_scan_case({1, 3, 4, 1, 2, 1}, 5, 0, true);
  std::vector<float> state = c.state0, y(c.y_ref.size());
  ScanArgs a = c.args(state.data(), y.data());
  a.shape.groups = 3;
  EXPECT_THROW(selective_scan_cpu(a, pool_with(1)), Error);
  a.shape.groups = 1;
  a.shape.state = 0;
  EXPECT_THROW(selective_scan_cpu(a, pool_with(1)), Error);
  a.shape.state = 2;
  c.lengths[0] = 4;  // beyond steps
  a.lengths = c.lengths.data();
  EXPECT_THROW(selective_scan_cpu(a, pool_with(1)), Error);
}

// The reference with one step of the recurrence changed.
std::vector<float> sabotaged_scan(const ScanCase& c, bool split_fma, bool reverse_sum) {
  const ScanShape& s = c.shape;
  const int64_t T = s.steps, H = s.heads, P = s.head_dim, N = s.state;
  std::vector<float> state = c.state0, out(c.y_ref.size());
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t p = 0; p < P; ++p) {
      float* st = state.data() + (h * P + p) * N;
      for (int64_t t = 0; t < T; ++t) {
        const float dt = c.dt[t * H + h], x = c.x[(t * H + h) * P + p];
        const float* Bv = c.Bm.data() + t * N;
        const float* Cv = c.Cm.data() + t * N;
        const float u = mul(dt, x);
        for (int64_t n = 0; n < N; ++n) {
          const float decay = exp(mul(dt, c.A[h * N + n]));
          st[n] = split_fma ? add(mul(decay, st[n]), mul(u, Bv[n])) : fma(decay, st[n], mul(u, Bv[n]));
        }
        float acc = 0.0f;
        for (int64_t i = 0; i < N; ++i) {
          const int64_t n = reverse_sum ? N - 1 - i : i;
          acc = i == 0 ? mul(st[n], Cv[n]) : fma(st[n], Cv[n], acc);
        }
        out[(t * H + h) * P + p] = fma(c.D[h], x, acc);
      }
    }
  }
  return out;
}

TEST(SelectiveScanConformance, SabotagedRecurrenceDiffers) {
  const ScanCase c = make_scan_case({1, 64, 4, 8, 16, 1}, 31, 0, true);
  EXPECT_TRUE(bits_equal(c.y_ref, sabotaged_scan(c, false, false), "unsabotaged copy"));
  EXPECT_FALSE(bits_equal(c.y_ref, sabotaged_scan(c, true, false), "mul then add"));
  EXPECT_FALSE(bits_equal(c.y_ref, sabotaged_scan(c, false, true), "reversed C sum"));
}

}  // namespace
}  // namespace bl::conformance
