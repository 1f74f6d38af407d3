// Conformance of the weight-stationary CPU GEMM (kernels/matmul_packed.h): op(B) packed once with
// matmul_pack_b_cpu, then matmul_cpu_packed_b, equal to matmul_reference by memcmp over the GEMM
// conformance shapes (plain A, B and B^T, padded pitches, C pre-filled with a sentinel), the
// special-value cases and model-like shapes, at threads 1, 2, 3; one packed B reused by products
// of several row counts; sabotage arms (other leaf sizes) that must differ; bad input.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/matmul_packed.h"

namespace bl {
namespace {

using conformance::bits_equal;
using conformance::MatmulCase;
using conformance::MatmulProblem;

ThreadPool& pool_of(int threads) {
  static std::unique_ptr<ThreadPool> pools[4];
  if (!pools[threads]) pools[threads].reset(new ThreadPool(threads));
  return *pools[threads];
}

// The cases this entry point takes: one batch entry, A not transposed.
std::vector<MatmulCase> packed_cases() {
  std::vector<MatmulCase> cases;
  for (const auto& list : {conformance::matmul_conformance_cases(), conformance::matmul_special_cases()})
    for (const MatmulCase& c : list)
      if (c.batch == 1 && !c.trans_a) cases.push_back(c);
  // Row and column counts around the task blocks (72 rows, 96 columns) and a prefill-like shape.
  for (bool tb : {false, true}) {
    cases.push_back({1, 73, 97, 257, false, tb});
    cases.push_back({1, 128, 200, 300, false, tb, 2});
    cases.push_back({1, 17, 1000, 64, false, tb, 0, 7});
    cases.push_back({1, 145, 33, 513, false, tb, 1});
  }
  return cases;
}

std::vector<float> run_packed(const MatmulProblem& p, int threads) {
  const MatmulArgs& a = p.args;
  const PackedMatrix packed = matmul_pack_b_cpu(p.b.data(), a.k, a.n, a.ldb, a.trans_b, &pool_of(threads));
  std::vector<float> c = p.c_init;
  matmul_cpu_packed_b(p.a.data(), a.m, a.lda, packed, c.data(), a.ldc, &pool_of(threads));
  return c;
}

std::vector<float> run_reference(const MatmulProblem& p) {
  std::vector<float> c = p.c_init;
  matmul_reference(p.args, p.a.data(), p.b.data(), c.data());
  return c;
}

TEST(MatmulPackedConformance, EqualsReferenceAtAnyThreadCount) {
  uint64_t seed = 500;
  for (const MatmulCase& mc : packed_cases()) {
    const MatmulProblem p = conformance::make_matmul_problem(mc, seed += 2);
    const std::vector<float> expected = run_reference(p);
    for (int threads : conformance::kThreadCounts)
      ASSERT_TRUE(bits_equal(expected, run_packed(p, threads), "packed threads " + std::to_string(threads) + " " + p.name));
  }
}

TEST(MatmulPackedConformance, OnePackedWeightServesEveryRowCount) {
  // The same packed B multiplied by the first m rows of one A: each row's bits never depend on M.
  const int64_t k = 769, n = 131;
  const auto a = conformance::generate_floats(150 * k, 1, 1.0f, 101);
  const auto b = conformance::generate_floats(k * n, 2, 1.0f, 97);
  const PackedMatrix packed = matmul_pack_b_cpu(b.data(), k, n, n, false, &pool_of(2));
  std::vector<float> full(static_cast<size_t>(150 * n));
  matmul_reference(matmul_dense_args(1, 150, n, k), a.data(), b.data(), full.data());
  for (int64_t m : {1, 5, 6, 7, 71, 72, 73, 128, 150}) {
    std::vector<float> c(static_cast<size_t>(m * n));
    matmul_cpu_packed_b(a.data(), m, k, packed, c.data(), n, &pool_of(3));
    const std::vector<float> expected(full.begin(), full.begin() + m * n);
    ASSERT_TRUE(bits_equal(expected, c, "rows " + std::to_string(m)));
  }
}

TEST(MatmulPackedConformance, SabotagedLeavesAreCaught) {
  // Another leaf size, or one fma chain over all of k: the comparison must reject both.
  for (int64_t leaf : {int64_t{128}, int64_t{0}}) {
    const MatmulProblem p = conformance::make_matmul_problem({1, 31, 45, 600, false, false}, 77);
    std::vector<float> sabotaged = p.c_init;
    conformance::matmul_reference_with_leaf(p.args, p.a.data(), p.b.data(), sabotaged.data(), leaf);
    EXPECT_FALSE(bits_equal(sabotaged, run_packed(p, 2), "sabotage leaf " + std::to_string(leaf)));
  }
}

TEST(MatmulPackedConformance, BadInputThrows) {
  std::vector<float> b(12, 1.0f), a(12, 1.0f), c(12, 0.0f);
  EXPECT_THROW(matmul_pack_b_cpu(b.data(), -1, 3, 3, false), Error);
  EXPECT_THROW(matmul_pack_b_cpu(b.data(), 4, 3, 2, false), Error);
  EXPECT_THROW(matmul_pack_b_cpu(nullptr, 4, 3, 3, false), Error);
  const PackedMatrix packed = matmul_pack_b_cpu(b.data(), 4, 3, 3, false);
  EXPECT_THROW(matmul_cpu_packed_b(a.data(), 2, 3, packed, c.data(), 3), Error);  // lda < K
  EXPECT_THROW(matmul_cpu_packed_b(a.data(), 2, 4, packed, c.data(), 2), Error);  // ldc < N
  EXPECT_THROW(matmul_cpu_packed_b(nullptr, 2, 4, packed, c.data(), 3), Error);
  EXPECT_THROW(matmul_cpu_packed_b(a.data(), -1, 4, packed, c.data(), 3), Error);
}

}  // namespace
}  // namespace bl
