// Conformance of the CPU contract GEMM (src/kernels/cpu/matmul*.cpp) with the scalar reference
// (src/kernels/matmul.h), by memcmp, over shapes, transposes, batches, special values and thread
// counts 1, 2, 3; batch invariance; sabotage arms (other leaf sizes, other leaf folds); bad input.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "core/error.h"
#include "core/fp_probe.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"

namespace {

using bl::MatmulArgs;
using bl::conformance::bits_equal;
using bl::conformance::MatmulCase;
using bl::conformance::MatmulProblem;

using MatmulImpl = std::function<void(const MatmulArgs&, const float*, const float*, float*)>;

bl::ThreadPool& pool_of(int threads) {
  static std::unique_ptr<bl::ThreadPool> pools[4];
  if (!pools[threads]) pools[threads].reset(new bl::ThreadPool(threads));
  return *pools[threads];
}

std::vector<float> run_impl(const MatmulProblem& p, const MatmulImpl& impl) {
  std::vector<float> c = p.c_init;
  impl(p.args, p.a.data(), p.b.data(), c.data());
  return c;
}

std::vector<float> run_reference(const MatmulProblem& p) {
  return run_impl(p, [](const MatmulArgs& args, const float* a, const float* b, float* c) {
    bl::matmul_reference(args, a, b, c);
  });
}

// The comparison every backend (and every sabotage arm) goes through.
::testing::AssertionResult matches_reference(const MatmulProblem& p, const MatmulImpl& impl,
                                             const std::string& backend) {
  return bits_equal(run_reference(p), run_impl(p, impl), backend + " " + p.name);
}

MatmulImpl cpu_impl(int threads) {
  return [threads](const MatmulArgs& args, const float* a, const float* b, float* c) {
    bl::matmul_cpu(args, a, b, c, &pool_of(threads));
  };
}

MatmulImpl portable_impl(int threads) {
  return [threads](const MatmulArgs& args, const float* a, const float* b, float* c) {
    bl::matmul_cpu_portable(args, a, b, c, &pool_of(threads));
  };
}

MatmulImpl leaf_sabotage_impl(int64_t leaf) {
  return [leaf](const MatmulArgs& args, const float* a, const float* b, float* c) {
    bl::conformance::matmul_reference_with_leaf(args, a, b, c, leaf);
  };
}

TEST(MatmulConformance, CpuMatchesReferenceOnShapes) {
  uint64_t seed = 100;
  for (const MatmulCase& mc : bl::conformance::matmul_conformance_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    std::vector<float> expected = run_reference(p);
    for (int threads : bl::conformance::kThreadCounts)
      EXPECT_TRUE(bits_equal(expected, run_impl(p, cpu_impl(threads)),
                             "matmul_cpu threads=" + std::to_string(threads) + " " + p.name));
  }
}

TEST(MatmulConformance, CpuMatchesReferenceOnSpecialValues) {
  uint64_t seed = 500;
  for (const MatmulCase& mc : bl::conformance::matmul_special_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    std::vector<float> expected = run_reference(p);
    for (int threads : bl::conformance::kThreadCounts)
      EXPECT_TRUE(bits_equal(expected, run_impl(p, cpu_impl(threads)),
                             "matmul_cpu threads=" + std::to_string(threads) + " " + p.name));
  }
}

TEST(MatmulConformance, SpecialCasesReallyContainSpecialResults) {
  // The special-value cases must produce NaN, inf, signed zeros and subnormals in the output, or
  // they test nothing about them.
  bool nan = false, inf = false, neg_zero = false, subnormal = false;
  uint64_t seed = 500;
  for (const MatmulCase& mc : bl::conformance::matmul_special_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    for (float v : run_reference(p)) {
      uint32_t u = bl::bits_of(v);
      if (u == bl::conformance::kMatmulSentinelBits) continue;
      nan |= bl::is_nan(v);
      inf |= bl::is_inf(v);
      neg_zero |= (u == 0x80000000u);
      subnormal |= ((u & 0x7F800000u) == 0 && (u & 0x007FFFFFu) != 0);
    }
  }
  EXPECT_TRUE(nan);
  EXPECT_TRUE(inf);
  EXPECT_TRUE(neg_zero);
  EXPECT_TRUE(subnormal);
}

TEST(MatmulConformance, StoredNansAreCanonical) {
  MatmulCase mc{1, 19, 23, 70, false, false, 0, 5, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 77);
  std::vector<float> c = run_impl(p, cpu_impl(2));
  int nans = 0;
  for (int64_t m = 0; m < mc.m; ++m)
    for (int64_t n = 0; n < mc.n; ++n) {
      float v = c[m * p.args.ldc + n];
      if (bl::is_nan(v)) {
        ++nans;
        EXPECT_EQ(bl::bits_of(v), bl::kCanonicalNanBits);
      }
    }
  EXPECT_GT(nans, 0);
}

TEST(MatmulConformance, PortableKernelMatchesReference) {
  uint64_t seed = 900;
  const MatmulCase cases[] = {{1, 13, 31, 257, false, false, 0, 0, 1.0f},
                              {1, 150, 70, 300, true, false, 3, 0, 1.0f},
                              {2, 17, 19, 513, false, true, 1, 0, 1.0f},
                              {1, 37, 45, 600, true, true, 1, 97, 1.0f},
                              {1, 29, 33, 520, false, false, 0, 0, 1e-19f}};
  for (const MatmulCase& mc : cases) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    for (int threads : bl::conformance::kThreadCounts)
      EXPECT_TRUE(matches_reference(p, portable_impl(threads),
                                    "matmul_cpu_portable threads=" + std::to_string(threads)));
  }
}

TEST(MatmulConformance, RowAloneEqualsRowInsideLargeM) {
  for (int t = 0; t < 4; ++t) {
    MatmulCase mc{1, 301, 37, 777, (t & 1) != 0, (t & 2) != 0, 2, 0, 1.0f};
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, 1234 + t);
    std::vector<float> big = run_impl(p, cpu_impl(3));
    for (int64_t row : {int64_t{0}, int64_t{5}, int64_t{143}, int64_t{144}, int64_t{300}}) {
      MatmulArgs one = p.args;
      one.m = 1;
      const float* a_row = one.trans_a ? p.a.data() + row : p.a.data() + row * one.lda;
      std::vector<float> c(static_cast<size_t>(one.n));
      one.ldc = one.n;
      bl::matmul_cpu(one, a_row, p.b.data(), c.data(), &pool_of(1));
      EXPECT_TRUE(bits_equal(big.data() + row * p.args.ldc, c.data(), c.size(), sizeof(float),
                             "row " + std::to_string(row) + " alone vs in " + p.name));
    }
  }
}

TEST(MatmulConformance, BatchEntryAloneEqualsEntryInsideBatch) {
  MatmulCase mc{5, 23, 29, 300, false, true, 1, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 4321);
  std::vector<float> all = run_impl(p, cpu_impl(2));
  for (int64_t entry = 0; entry < mc.batch; ++entry) {
    MatmulArgs one = p.args;
    one.batch = 1;
    std::vector<float> c(static_cast<size_t>(one.stride_c));
    bl::matmul_cpu(one, p.a.data() + entry * one.stride_a, p.b.data() + entry * one.stride_b,
                   c.data(), &pool_of(3));
    for (int64_t m = 0; m < one.m; ++m)
      EXPECT_TRUE(bits_equal(all.data() + entry * one.stride_c + m * one.ldc, c.data() + m * one.ldc,
                             static_cast<size_t>(one.n), sizeof(float),
                             "batch entry " + std::to_string(entry) + " row " + std::to_string(m)));
  }
}

TEST(MatmulConformance, BroadcastOperandWithZeroBatchStride) {
  MatmulCase mc{4, 21, 18, 270, false, false, 0, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 99);
  p.args.stride_b = 0;  // one B shared by every batch entry
  for (int threads : bl::conformance::kThreadCounts)
    EXPECT_TRUE(matches_reference(p, cpu_impl(threads), "matmul_cpu stride_b=0"));
}

// Every ISA variant this CPU can run (BITLEARN_ISA values: scalar, avx2, avx512, neon), forced in
// turn, gives the reference's bits; on AArch64 the NEON tile is what runs by default.
TEST(MatmulConformance, EveryIsaVariantMatchesReference) {
#if defined(__aarch64__)
  EXPECT_EQ(bl::detected_isa(), bl::Isa::neon);
#endif
  const MatmulCase cases[] = {{1, 13, 31, 257, false, false, 0, 0, 1.0f},
                              {1, 150, 70, 300, true, false, 3, 0, 1.0f},
                              {2, 17, 19, 513, false, true, 1, 0, 1.0f},
                              {1, 37, 45, 600, true, true, 1, 97, 1.0f},
                              {1, 29, 33, 520, false, false, 0, 7, 1e-19f},
                              // 2 x 3 task blocks for the 256-column SIMD partition, 2 leaves
                              {1, 150, 600, 300, false, false, 0, 0, 1.0f}};
  const bl::Isa before = bl::active_isa();
  int variants = 0;
  for (bl::Isa isa : {bl::Isa::scalar, bl::Isa::avx2, bl::Isa::avx512, bl::Isa::neon}) {
    if (!bl::isa_supported(isa)) continue;
    ++variants;
    bl::set_active_isa(isa);
    uint64_t seed = 950;
    for (const MatmulCase& mc : cases) {
      MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
      for (int threads : {1, 3})
        EXPECT_TRUE(matches_reference(p, cpu_impl(threads),
                                      std::string("matmul_cpu isa=") + bl::isa_name(isa) +
                                          " threads=" + std::to_string(threads)));
    }
  }
  bl::set_active_isa(before);
  // The scalar kernels and, where the CPU has one, a SIMD variant.
  EXPECT_GE(variants, bl::detected_isa() == bl::Isa::scalar ? 1 : 2);
}

// Sabotage arms: the same comparison must reject a schedule with leaf 128 and one with no leaves.
TEST(MatmulConformance, SabotageLeaf128IsCaught) {
  MatmulCase mc{1, 9, 11, 513, false, false, 0, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 31);
  EXPECT_FALSE(matches_reference(p, leaf_sabotage_impl(128), "reference leaf=128"));
  // The sabotage harness itself agrees with the reference at the contract leaf size.
  EXPECT_TRUE(matches_reference(p, leaf_sabotage_impl(bl::kGemmKLeaf), "reference leaf=256"));
}

TEST(MatmulConformance, SabotageNoLeavesIsCaught) {
  MatmulCase mc{1, 9, 11, 513, true, false, 0, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 32);
  EXPECT_FALSE(matches_reference(p, leaf_sabotage_impl(0), "reference without leaves"));
}

TEST(MatmulConformance, SabotageCaughtAcrossTheShapeSet) {
  // Over the whole conformance shape set, each sabotage variant must fail somewhere with K > 256
  // and never where K <= 128 (there all variants coincide), so the shapes do exercise the leaves.
  int caught_128 = 0, caught_none = 0;
  uint64_t seed = 100;
  for (const MatmulCase& mc : bl::conformance::matmul_conformance_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    bool f128 = !matches_reference(p, leaf_sabotage_impl(128), "leaf=128");
    bool fnone = !matches_reference(p, leaf_sabotage_impl(0), "no leaves");
    if (mc.k <= 128) {
      EXPECT_FALSE(f128) << p.name;
      EXPECT_FALSE(fnone) << p.name;
    }
    caught_128 += f128;
    caught_none += fnone;
  }
  EXPECT_GT(caught_128, 10);
  EXPECT_GT(caught_none, 10);
}

// Sabotage arms for the fold of the leaf sums (the order the CUDA leaf-parallel path reproduces):
// folding the same leaves right to left or pairwise must be rejected on the leaf-parallel shapes,
// while the left-to-right fold agrees with the reference and with matmul_cpu at 1, 2, 3 threads.
TEST(MatmulConformance, SabotageLeafFoldOrderIsCaught) {
  using bl::conformance::LeafFold;
  auto fold_impl = [](LeafFold fold) -> MatmulImpl {
    return [fold](const MatmulArgs& args, const float* a, const float* b, float* c) {
      bl::conformance::matmul_reference_with_fold(args, a, b, c, fold);
    };
  };
  uint64_t seed = 900;
  for (const MatmulCase& mc : bl::conformance::matmul_leaf_parallel_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    EXPECT_TRUE(matches_reference(p, fold_impl(LeafFold::left_to_right), "fold left to right"));
    EXPECT_FALSE(matches_reference(p, fold_impl(LeafFold::right_to_left), "fold right to left"));
    EXPECT_FALSE(matches_reference(p, fold_impl(LeafFold::pairwise), "fold pairwise"));
    for (int threads : bl::conformance::kThreadCounts)
      EXPECT_TRUE(matches_reference(p, cpu_impl(threads), "matmul_cpu threads=" + std::to_string(threads)));
  }
}

// ---- bad input ----

void expect_error_mentions(const std::function<void()>& call, const std::string& word) {
  try {
    call();
    ADD_FAILURE() << "expected bl::Error mentioning '" << word << "'";
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(MatmulConformance, BadInputThrowsNamedErrors) {
  std::vector<float> a(64), b(64), c(64);
  MatmulArgs args = bl::matmul_dense_args(1, 4, 4, 4);
  auto call = [&](MatmulArgs x) { return [&, x] { bl::matmul_cpu(x, a.data(), b.data(), c.data()); }; };

  MatmulArgs bad = args;
  bad.lda = 3;  // plain A is M x K: needs lda >= K = 4
  expect_error_mentions(call(bad), "lda");
  bad = args;
  bad.trans_a = true;
  bad.lda = 3;  // transposed A is K x M: needs lda >= M = 4
  expect_error_mentions(call(bad), "lda");
  bad = args;
  bad.ldb = 2;
  expect_error_mentions(call(bad), "ldb");
  bad = args;
  bad.ldc = 1;
  expect_error_mentions(call(bad), "ldc");
  bad = args;
  bad.m = -1;
  expect_error_mentions(call(bad), "sizes");
  bad = args;
  bad.batch = 2;
  bad.stride_c = 5;  // entries of C would overlap
  expect_error_mentions(call(bad), "stride_c");
  expect_error_mentions([&] { bl::matmul_cpu(args, nullptr, b.data(), c.data()); }, "A is null");
  expect_error_mentions([&] { bl::matmul_cpu(args, a.data(), nullptr, c.data()); }, "B is null");
  expect_error_mentions([&] { bl::matmul_cpu(args, a.data(), b.data(), nullptr); }, "C is null");
  expect_error_mentions(call(bad), "matmul_cpu");
}

}  // namespace

// ---- Tensor-level matmul / bmm (include/bitlearn/ops_matmul.h) ----

#include "bitlearn/ops_matmul.h"
#include "bitlearn/tensor.h"

namespace {

std::vector<float> reference_product(const std::vector<float>& a, const std::vector<float>& b,
                                     int64_t batch, int64_t m, int64_t n, int64_t k, bool ta,
                                     bool tb, bool broadcast_b = false) {
  bl::MatmulArgs args = bl::matmul_dense_args(batch, m, n, k, ta, tb);
  if (broadcast_b) args.stride_b = 0;
  std::vector<float> c(static_cast<size_t>(batch * m * n));
  bl::matmul_reference(args, a.data(), b.data(), c.data());
  return c;
}

TEST(MatmulOps, MatmulMatchesReferenceForEveryTransposeFlag) {
  const int64_t m = 37, n = 29, k = 300;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    std::vector<float> a = bl::conformance::generate_floats(m * k, 10 + t, 1.0f, 97);
    std::vector<float> b = bl::conformance::generate_floats(k * n, 20 + t, 1.0f, 89);
    bl::Tensor ta_t = bl::Tensor::from_vector(a, ta ? bl::Shape{k, m} : bl::Shape{m, k});
    bl::Tensor tb_t = bl::Tensor::from_vector(b, tb ? bl::Shape{n, k} : bl::Shape{k, n});
    bl::Tensor c = bl::matmul(ta_t, tb_t, ta, tb);
    ASSERT_EQ(c.shape(), (bl::Shape{m, n}));
    EXPECT_TRUE(bits_equal(reference_product(a, b, 1, m, n, k, ta, tb), c.to_vector<float>(),
                           "matmul flags " + std::to_string(t)));
  }
}

TEST(MatmulOps, TransposedAndSlicedViewsGiveTheSameBits) {
  const int64_t m = 20, n = 18, k = 260;
  std::vector<float> a = bl::conformance::generate_floats(m * k, 1, 1.0f, 0);
  std::vector<float> b = bl::conformance::generate_floats(k * n, 2, 1.0f, 0);
  bl::Tensor a_t = bl::Tensor::from_vector(a, {m, k});
  bl::Tensor b_t = bl::Tensor::from_vector(b, {k, n});
  std::vector<float> expected = bl::matmul(a_t, b_t).to_vector<float>();
  // a stored transposed, viewed back: used in place with the flag flipped.
  bl::Tensor a_tt = a_t.transpose(0, 1).contiguous().transpose(0, 1);
  EXPECT_TRUE(bits_equal(expected, bl::matmul(a_tt, b_t).to_vector<float>(), "transposed view of a"));
  // b^T given with trans_b: the same product.
  bl::Tensor b_T = b_t.transpose(0, 1).contiguous();
  EXPECT_TRUE(bits_equal(expected, bl::matmul(a_t, b_T, false, true).to_vector<float>(), "trans_b"));
  // A strided slice of the columns of b (neither axis unit-stride after a step) is copied first.
  bl::Tensor wide = bl::Tensor::from_vector(bl::conformance::generate_floats(k * 2 * n, 3), {k, 2 * n});
  bl::Tensor every_other = wide.slice(1, 0, 2 * n, 2);
  std::vector<float> every_other_host = every_other.contiguous().to_vector<float>();
  EXPECT_TRUE(bits_equal(reference_product(a, every_other_host, 1, m, n, k, false, false),
                         bl::matmul(a_t, every_other).to_vector<float>(), "strided slice of b"));
  // A row slice of a (row pitch larger than the width) is used in place.
  bl::Tensor a_rows = bl::Tensor::from_vector(a, {m, k}).slice(1, 0, 100);
  std::vector<float> a_rows_host = a_rows.contiguous().to_vector<float>();
  bl::Tensor b_short = bl::Tensor::from_vector(std::vector<float>(b.begin(), b.begin() + 100 * n), {100, n});
  EXPECT_TRUE(bits_equal(reference_product(a_rows_host, std::vector<float>(b.begin(), b.begin() + 100 * n),
                                           1, m, n, 100, false, false),
                         bl::matmul(a_rows, b_short).to_vector<float>(), "column slice of a"));
}

TEST(MatmulOps, BmmMatchesReferenceAndBroadcastsBatchOne) {
  const int64_t batch = 3, m = 11, n = 13, k = 270;
  std::vector<float> a = bl::conformance::generate_floats(batch * m * k, 5, 1.0f, 53);
  std::vector<float> b = bl::conformance::generate_floats(batch * k * n, 6, 1.0f, 0);
  bl::Tensor c = bl::bmm(bl::Tensor::from_vector(a, {batch, m, k}),
                         bl::Tensor::from_vector(b, {batch, k, n}));
  ASSERT_EQ(c.shape(), (bl::Shape{batch, m, n}));
  EXPECT_TRUE(bits_equal(reference_product(a, b, batch, m, n, k, false, false), c.to_vector<float>(), "bmm"));
  std::vector<float> b1(b.begin(), b.begin() + k * n);
  bl::Tensor cb = bl::bmm(bl::Tensor::from_vector(a, {batch, m, k}), bl::Tensor::from_vector(b1, {1, k, n}));
  EXPECT_TRUE(bits_equal(reference_product(a, b1, batch, m, n, k, false, false, true),
                         cb.to_vector<float>(), "bmm with b broadcast"));
}

TEST(MatmulOps, BadOperandsThrowNamedErrors) {
  bl::Tensor a = bl::Tensor::zeros({4, 5});
  bl::Tensor b = bl::Tensor::zeros({6, 3});
  expect_error_mentions([&] { bl::matmul(a, b); }, "inner sizes differ");
  expect_error_mentions([&] { bl::matmul(a, bl::Tensor::zeros({5, 3}, bl::DType::i32)); }, "operand b has dtype i32");
  expect_error_mentions([&] { bl::matmul(bl::Tensor::zeros({2, 4, 5}), b); }, "operand a must be 2-d");
  expect_error_mentions([&] { bl::bmm(bl::Tensor::zeros({2, 4, 5}), bl::Tensor::zeros({3, 5, 2})); },
                        "batch sizes differ");
  expect_error_mentions([&] { bl::matmul(bl::Tensor(), b); }, "matmul");
  EXPECT_EQ(bl::matmul(bl::Tensor::zeros({0, 5}), bl::Tensor::zeros({5, 3})).shape(), (bl::Shape{0, 3}));
  std::vector<float> zeros = bl::matmul(bl::Tensor::zeros({2, 0}), bl::Tensor::zeros({0, 3})).to_vector<float>();
  ASSERT_EQ(zeros.size(), 6u);
  for (float v : zeros) EXPECT_EQ(bl::bits_of(v), 0u);  // the empty sum is +0.0
}

}  // namespace
