// The exact-integer GEMM profile (bitlearn.exact_gemm.v1, src/kernels/exact_gemm.h): the scalar
// reference against an independent oracle (integer data in binary64, where every sum is exact),
// the CPU kernel against the reference by memcmp (shapes, transposes, batches, special values,
// threads 1, 2, 3), the absence of an order (a permuted k gives the same bits; the contract GEMM's
// does not), a sabotage arm (a float fold of the same integers must differ), accuracy against
// binary64 beside the contract GEMM's, and the process-wide profile switch of the Tensor ops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "bitlearn/ops_matmul.h"
#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/exact_gemm.h"
#include "kernels/matmul.h"

namespace {

using bl::MatmulArgs;
using bl::conformance::bits_equal;
using bl::conformance::MatmulCase;
using bl::conformance::MatmulProblem;

bl::ThreadPool& pool_of(int threads) {
  static std::unique_ptr<bl::ThreadPool> pools[4];
  if (!pools[threads]) pools[threads].reset(new bl::ThreadPool(threads));
  return *pools[threads];
}

std::vector<float> exact_reference(const MatmulProblem& p) {
  std::vector<float> c = p.c_init;
  bl::exact_matmul_reference(p.args, p.a.data(), p.b.data(), c.data());
  return c;
}

std::vector<float> exact_cpu(const MatmulProblem& p, int threads) {
  std::vector<float> c = p.c_init;
  bl::exact_matmul_cpu(p.args, p.a.data(), p.b.data(), c.data(), &pool_of(threads));
  return c;
}

// A conformance shape and how its data is made beyond make_matmul_problem's.
struct ExactCase {
  MatmulCase shape;
  bool wide = false;      // magnitudes spread over 2^-60 .. 2^60 inside rows (widen)
  bool shared_b = false;  // one B for the whole batch (stride 0)
};

std::vector<ExactCase> all_cases() {
  std::vector<ExactCase> cases;
  for (const MatmulCase& c : bl::conformance::matmul_conformance_cases()) cases.push_back({c});
  for (const MatmulCase& c : bl::conformance::matmul_special_cases()) cases.push_back({c});
  cases.push_back({MatmulCase{1, 23, 29, 77, false, true}, true, false});
  cases.push_back({MatmulCase{3, 9, 11, 40, false, false}, false, true});
  return cases;
}

// Spreads the magnitudes of a problem's values over 2^-60 .. 2^60 (deterministically).
void widen(std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (std::isfinite(v[i])) v[i] = std::ldexp(v[i], int(i * 7919 % 121) - 60);
}

MatmulProblem make_problem(const ExactCase& ec, uint64_t seed) {
  MatmulProblem p = bl::conformance::make_matmul_problem(ec.shape, seed);
  if (ec.wide) {
    widen(p.a);
    widen(p.b);
  }
  if (ec.shared_b) p.args.stride_b = 0;
  return p;
}

TEST(ExactGemmConformance, CpuMatchesReferenceAtThreads123AndEveryTile) {
  uint64_t seed = 1;
  for (const ExactCase& ec : all_cases()) {
    const MatmulProblem p = make_problem(ec, seed++);
    const std::vector<float> ref = exact_reference(p);
    for (int threads : {1, 2, 3}) EXPECT_TRUE(bits_equal(ref, exact_cpu(p, threads), "threads=" +
                                                         std::to_string(threads) + " " + p.name));
    // The scalar micro-tile (the SIMD variants off).
    bl::cpu::simd_enabled() = false;
    EXPECT_TRUE(bits_equal(ref, exact_cpu(p, 2), "scalar tile " + p.name));
    bl::cpu::simd_enabled() = true;
  }
}

// Integer data (|x| < 2^12) scaled by a power of two per row and per column: every dot product is
// exact in binary64, and one conversion to binary32 is the profile's single rounding. Covers
// results that are subnormal, that overflow, and sums that cancel.
TEST(ExactGemm, ReferenceEqualsBinary64OracleOnIntegerData) {
  bl::test_rng::SplitMix64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t M = 1 + int64_t(rng.next() % 9), N = 1 + int64_t(rng.next() % 9), K = 1 + int64_t(rng.next() % 300);
    std::vector<int> row_scale(M), col_scale(N);
    for (auto& s : row_scale) s = int(rng.next() % 200) - 150;  // down to 2^-150: subnormal results
    for (auto& s : col_scale) s = int(rng.next() % 160) - 40;   // up to 2^120 + 2^12...: overflow
    std::vector<double> xi(size_t(M * K)), yi(size_t(K * N));
    for (auto& v : xi) v = double(int64_t(rng.next() % 8191) - 4095);
    for (auto& v : yi) v = double(int64_t(rng.next() % 8191) - 4095);
    if (trial % 5 == 0)  // cancellation: the last column of A repeats the first, negated
      for (int64_t m = 0; m < M && K > 2; ++m) xi[size_t(m * K + K - 1)] = -xi[size_t(m * K)];
    std::vector<float> a(xi.size()), b(yi.size()), c(size_t(M * N));
    bool representable = true;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        const double v = std::ldexp(xi[size_t(m * K + k)], row_scale[size_t(m)]);
        a[size_t(m * K + k)] = float(v);
        representable &= double(float(v)) == v;
      }
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) {
        const double v = std::ldexp(yi[size_t(k * N + n)], col_scale[size_t(n)]);
        b[size_t(k * N + n)] = float(v);
        representable &= double(float(v)) == v && std::isfinite(float(v));
      }
    if (!representable) continue;  // an input itself would round: not an exact-oracle case
    bl::exact_matmul_reference(bl::matmul_dense_args(1, M, N, K), a.data(), b.data(), c.data());
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0.0;
        for (int64_t k = 0; k < K; ++k) s += xi[size_t(m * K + k)] * yi[size_t(k * N + n)];
        const float want = float(std::ldexp(s, row_scale[size_t(m)] + col_scale[size_t(n)]));
        const float got = c[size_t(m * N + n)];
        EXPECT_EQ(bl::bits_of(s == 0.0 ? 0.0f : want), bl::bits_of(got))
            << "trial " << trial << " (" << m << ", " << n << ") sum " << s << " want " << want << " got " << got;
      }
  }
}

TEST(ExactGemm, SpecialValuesFollowTheRule) {
  const float inf = INFINITY, nan = NAN;
  auto one = [](std::vector<float> a, std::vector<float> b) {
    float c = 0.0f;
    bl::exact_matmul_reference(bl::matmul_dense_args(1, 1, 1, int64_t(a.size())), a.data(), b.data(), &c);
    return bl::bits_of(c);
  };
  EXPECT_EQ(one({1.0f, inf}, {2.0f, 3.0f}), 0x7F800000u);
  EXPECT_EQ(one({1.0f, inf}, {2.0f, -3.0f}), 0xFF800000u);
  EXPECT_EQ(one({inf, inf}, {1.0f, -1.0f}), 0x7FC00000u);  // +inf and -inf
  EXPECT_EQ(one({inf, 1.0f}, {0.0f, 1.0f}), 0x7FC00000u);  // inf * 0
  EXPECT_EQ(one({nan, 1.0f}, {1.0f, 1.0f}), 0x7FC00000u);
  EXPECT_EQ(one({-0.0f, -0.0f}, {1.0f, 1.0f}), 0x00000000u);  // an exact zero is +0
  EXPECT_EQ(one({16777216.0f, 1.0f, -16777216.0f}, {1.0f, 1.0f, 1.0f}), bl::bits_of(1.0f));  // no rounding on the way
  EXPECT_EQ(one({3e38f, 3e38f}, {1.0f, 1.0f}), 0x7F800000u);  // overflow at the one rounding
  EXPECT_EQ(one({1e-30f, 1e-30f}, {1e-15f, 1e-15f}), bl::bits_of(float(2e-45)));  // subnormal result
}

// The k order does not exist for the exact profile: reversing k gives the same bits. The contract
// GEMM fixes an order, so the same permutation moves its bits (the arm that shows the check bites).
TEST(ExactGemm, PermutingKGivesTheSameBitsUnlikeTheContractGemm) {
  const int64_t M = 17, N = 13, K = 700;
  std::vector<float> a = bl::conformance::generate_floats(M * K, 11), b = bl::conformance::generate_floats(K * N, 12);
  widen(a);
  std::vector<float> ar(a.size()), br(b.size());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) ar[size_t(m * K + k)] = a[size_t(m * K + (K - 1 - k))];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) br[size_t(k * N + n)] = b[size_t((K - 1 - k) * N + n)];
  const MatmulArgs args = bl::matmul_dense_args(1, M, N, K);
  std::vector<float> c1(size_t(M * N)), c2(c1.size()), d1(c1.size()), d2(c1.size());
  bl::exact_matmul_cpu(args, a.data(), b.data(), c1.data(), &pool_of(2));
  bl::exact_matmul_cpu(args, ar.data(), br.data(), c2.data(), &pool_of(3));
  EXPECT_TRUE(bits_equal(c1, c2, "exact, k reversed"));
  bl::matmul_reference(args, a.data(), b.data(), d1.data());
  bl::matmul_reference(args, ar.data(), br.data(), d2.data());
  EXPECT_FALSE(bits_equal(d1, d2, "contract, k reversed"));
}

// Sabotage: the same integers folded in binary32 (ascending k) instead of exactly.
void exact_with_float_fold(const MatmulArgs& args, const float* a, const float* b, float* c) {
  for (int64_t m = 0; m < args.m; ++m)
    for (int64_t n = 0; n < args.n; ++n) {
      int ea = -1000, eb = -1000;  // the row's and column's exponents, as the reference takes them
      for (int64_t k = 0; k < args.k; ++k) {
        const float x = bl::matmul_load_a(a, args.lda, args.trans_a, m, k);
        const float y = bl::matmul_load_b(b, args.ldb, args.trans_b, k, n);
        if (x != 0.0f) ea = std::max(ea, bl::exact_gemm_exponent(x));
        if (y != 0.0f) eb = std::max(eb, bl::exact_gemm_exponent(y));
      }
      if (ea == -1000) ea = 0;
      if (eb == -1000) eb = 0;
      float s = 0.0f;
      for (int64_t k = 0; k < args.k; ++k)
        s = bl::add(s, bl::mul(float(bl::exact_gemm_integer(bl::matmul_load_a(a, args.lda, args.trans_a, m, k), ea)),
                               float(bl::exact_gemm_integer(bl::matmul_load_b(b, args.ldb, args.trans_b, k, n), eb))));
      c[m * args.ldc + n] = std::ldexp(s, ea + eb - 2 * bl::kExactGemmBits);
    }
}

TEST(ExactGemmSabotage, FloatFoldOfTheIntegersIsRejected) {
  // Control: where the binary32 fold is exact (few small integers) the arm equals the reference, so
  // the difference below comes from the fold alone.
  {
    const float a[3] = {3.0f, -5.0f, 7.0f}, b[3] = {2.0f, 4.0f, -1.0f};
    float want = 0.0f, got = 0.0f;
    bl::exact_matmul_reference(bl::matmul_dense_args(1, 1, 1, 3), a, b, &want);
    exact_with_float_fold(bl::matmul_dense_args(1, 1, 1, 3), a, b, &got);
    EXPECT_EQ(bl::bits_of(want), bl::bits_of(got));
  }
  const MatmulProblem p = bl::conformance::make_matmul_problem(MatmulCase{1, 31, 127, 1000, false, false}, 3);
  std::vector<float> c = p.c_init;
  exact_with_float_fold(p.args, p.a.data(), p.b.data(), c.data());
  EXPECT_FALSE(bits_equal(exact_reference(p), c, "float fold"));
}

// Accuracy against binary64 of the unrounded inputs: on uniform and normal-like data the exact
// profile's largest error, relative to sum |a||b|, is below 2^-24 and below the contract GEMM's; on
// rows with a wide dynamic range small entries lose bits (the documented worst case), so there the
// error is bounded by 2^-27 of max|a| * sum|b| + max|b| * sum|a| instead.
TEST(ExactGemmAccuracy, AgainstBinary64BesideTheContractGemm) {
  const int64_t M = 24, N = 24, K = 4096;
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<float> a = bl::conformance::generate_floats(M * K, 100 + kind);
    std::vector<float> b = bl::conformance::generate_floats(K * N, 200 + kind);
    if (kind == 1)  // normal-like: sums of uniforms
      for (size_t i = 0; i + 3 < a.size(); ++i) a[i] = a[i] + a[i + 1] + a[i + 2];
    if (kind == 2) widen(a);
    const MatmulArgs args = bl::matmul_dense_args(1, M, N, K);
    std::vector<float> ce(size_t(M * N)), cc(ce.size());
    bl::exact_matmul_cpu(args, a.data(), b.data(), ce.data(), &pool_of(2));
    bl::matmul_cpu(args, a.data(), b.data(), cc.data(), &pool_of(2));
    double worst_exact = 0.0, worst_contract = 0.0, worst_bound_ratio = 0.0;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0.0, abs_sum = 0.0, amax = 0.0, bmax = 0.0, asum = 0.0, bsum = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          const double x = a[size_t(m * K + k)], y = b[size_t(k * N + n)];
          s += x * y;
          abs_sum += std::fabs(x * y);
        }
        for (int64_t k = 0; k < K; ++k) {
          amax = std::max(amax, std::fabs(double(a[size_t(m * K + k)])));
          bmax = std::max(bmax, std::fabs(double(b[size_t(k * N + n)])));
          asum += std::fabs(double(a[size_t(m * K + k)]));
          bsum += std::fabs(double(b[size_t(k * N + n)]));
        }
        const double ee = std::fabs(double(ce[size_t(m * N + n)]) - s), ec = std::fabs(double(cc[size_t(m * N + n)]) - s);
        worst_exact = std::max(worst_exact, ee / abs_sum);
        worst_contract = std::max(worst_contract, ec / abs_sum);
        // One rounding of the result plus half a unit of 2^-28 of the row's and column's largest entry per term.
        const double bound = std::ldexp(1.0, -24) * std::fabs(s) + std::ldexp(1.0, -28) * (amax * bsum + bmax * asum);
        worst_bound_ratio = std::max(worst_bound_ratio, ee / bound);
      }
    std::printf("[accuracy] data %s: max error / sum|ab|: exact %.3g, contract fp32 %.3g; exact error / bound %.3g\n",
                kind == 0 ? "uniform" : kind == 1 ? "normal-like" : "wide-exponent", worst_exact, worst_contract,
                worst_bound_ratio);
    EXPECT_LE(worst_bound_ratio, 1.0);
    if (kind < 2) {
      EXPECT_LT(worst_exact, std::ldexp(1.0, -24));
      EXPECT_LE(worst_exact, worst_contract);
    }
  }
}

TEST(ExactGemmProfile, TensorOpsFollowTheProcessProfile) {
  const int64_t M = 19, N = 23, K = 300;
  const std::vector<float> a = bl::conformance::generate_floats(2 * M * K, 8);
  const std::vector<float> b = bl::conformance::generate_floats(2 * N * K, 9);
  bl::Tensor ta = bl::Tensor::from_vector(a, {2, M, K}), tb = bl::Tensor::from_vector(b, {2, N, K});
  std::vector<float> want(size_t(2 * M * N)), want_contract(want.size());
  const MatmulArgs args = bl::matmul_dense_args(2, M, N, K, false, true);
  bl::exact_matmul_reference(args, a.data(), b.data(), want.data());
  bl::matmul_reference(args, a.data(), b.data(), want_contract.data());
  EXPECT_EQ(bl::gemm_profile(), bl::GemmProfile::contract);
  {
    bl::ScopedGemmProfile exact(bl::GemmProfile::exact);
    EXPECT_STREQ(bl::gemm_profile_name(bl::gemm_profile()), "bitlearn.exact_gemm.v1");
    bl::Tensor c = bl::bmm(ta, tb, false, true);
    EXPECT_TRUE(bits_equal(want.data(), c.data<float>(), want.size(), 4, "bmm under the exact profile"));
    bl::Tensor c0 = bl::matmul(ta.slice(0, 0, 1).reshape({M, K}), tb.slice(0, 0, 1).reshape({N, K}), false, true);
    EXPECT_TRUE(bits_equal(want.data(), c0.contiguous().data<float>(), size_t(M * N), 4, "matmul under the exact profile"));
  }
  EXPECT_EQ(bl::gemm_profile(), bl::GemmProfile::contract);
  bl::Tensor c = bl::bmm(ta, tb, false, true);
  EXPECT_TRUE(bits_equal(want_contract.data(), c.data<float>(), want.size(), 4, "bmm under the contract profile"));
  EXPECT_EQ(bl::parse_gemm_profile("exact", "test"), bl::GemmProfile::exact);
  EXPECT_THROW(bl::parse_gemm_profile("fast", "test"), bl::Error);
}

TEST(ExactGemm, BadArgumentsAreNamedErrors) {
  MatmulArgs args = bl::matmul_dense_args(1, 2, 2, 2);
  args.lda = 1;  // < K
  float a[4] = {}, b[4] = {}, c[4] = {};
  EXPECT_THROW(bl::exact_matmul_cpu(args, a, b, c, &pool_of(1)), bl::Error);
}

}  // namespace
