// Conformance of bl::matmul_bias_cuda (the CUDA product with the bias row added as it stores, for
// the small tiles, or by a separate kernel after the others) with the scalar reference followed
// by the add op's rule c = canonicalize(add(c, bias[n])), by memcmp, under the default launch, the
// small tiles (whole K and leaf-parallel) and the other shipped tiles (launch.h); special
// values in the bias. Sabotage arm: the bias taken as the start of the first leaf's fma chain (a
// fused add that is not the separate add) must be caught by the same comparison.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "conformance/matmul_cuda_util.cuh"
#include "contract/arith.h"
#include "core/error.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace {

using bl::conformance::bits_equal;
using bl::conformance::have_cuda_device;
using bl::conformance::MatmulCase;
using bl::conformance::MatmulProblem;
using bl::conformance::run_matmul_cuda;

// The configs under test: the choice by shape, the small tiles over all of K and leaf-parallel,
// whole and capped grids, and tiles that add the bias in a second kernel.
std::vector<bl::LaunchConfig> bias_configs() {
  std::vector<bl::LaunchConfig> v = {{256, 0, 0},
                                     {128, 1, 0},
                                     {64, 7, bl::kMatmulTileRegister64},
                                     {256, 0, bl::kMatmulTilePipe128x64},
                                     {256, 0, bl::kMatmulTilePipe128},
                                     {256, 0, bl::kMatmulTileWarp128}};
  for (int tile : {bl::kMatmulTileSmall, bl::kMatmulTileSmallSplit}) {
    v.push_back({256, 0, tile});
    v.push_back({128, 3, tile});
  }
  return v;
}

// The reference product, then the add op's rule on every output of every batch entry.
std::vector<float> reference_then_add(const MatmulProblem& p, const std::vector<float>& bias) {
  std::vector<float> c = bl::conformance::run_matmul_reference(p);
  for (int64_t bi = 0; bi < p.args.batch; ++bi)
    for (int64_t m = 0; m < p.args.m; ++m)
      for (int64_t n = 0; n < p.args.n; ++n) {
        float& x = c[bi * p.args.stride_c + m * p.args.ldc + n];
        x = bl::canonicalize(bl::add(x, bias[n]));
      }
  return c;
}

std::vector<MatmulCase> bias_cases() {
  std::vector<MatmulCase> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    cases.push_back({1, 128, 136, 768, ta, tb, 0, 0, 1.0f});  // 3 leaves
    cases.push_back({1, 37, 71, 1030, ta, tb, 1, 0, 1.0f});   // 5 leaves, the last one 6 long
    cases.push_back({1, 16, 40, 200, ta, tb, 0, 0, 1.0f});    // one short leaf
    cases.push_back({2, 33, 65, 520, ta, tb, 2, 0, 1.0f});    // batched: one bias row for both
    cases.push_back({1, 29, 33, 600, ta, tb, 0, 41, 1.0f});   // special values in A and B
  }
  return cases;
}

TEST(MatmulBiasCuda, EqualsProductThenAdd) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  uint64_t seed = 1500;
  for (const MatmulCase& mc : bias_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed);
    // Special values (NaN, infinities, signed zeros, subnormals) every 7th bias element.
    const std::vector<float> bias = bl::conformance::generate_floats(mc.n, seed + 7, 1.0f, 7);
    ++seed;
    const std::vector<float> expected = reference_then_add(p, bias);
    for (const bl::LaunchConfig& config : bias_configs())
      EXPECT_TRUE(bits_equal(expected, run_matmul_cuda(p, config, &bias),
                             "matmul_bias_cuda variant=" + std::to_string(config.variant) + " grid_cap=" +
                                 std::to_string(config.grid_cap) + " " + p.name));
  }
}

TEST(MatmulBiasCuda, SabotageBiasInsideTheFirstLeafIsCaught) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  MatmulCase mc{1, 64, 96, 700, false, false, 0, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 1600);
  const std::vector<float> bias = bl::conformance::generate_floats(mc.n, 1601, 1.0f, 0);
  // The sabotaged rule: bias[n] is the start of leaf 0's fma chain instead of +0.0.
  std::vector<float> sabotaged = p.c_init;
  const bl::MatmulArgs& g = p.args;
  for (int64_t m = 0; m < g.m; ++m)
    for (int64_t n = 0; n < g.n; ++n) {
      float c = 0.0f;
      for (int64_t k0 = 0; k0 < g.k; k0 += bl::kGemmKLeaf) {
        float acc = k0 == 0 ? bias[n] : 0.0f;
        for (int64_t k = k0; k < g.k && k < k0 + bl::kGemmKLeaf; ++k)
          acc = bl::fma(bl::matmul_load_a(p.a.data(), g.lda, false, m, k),
                        bl::matmul_load_b(p.b.data(), g.ldb, false, k, n), acc);
        c = k0 == 0 ? acc : bl::add(c, acc);
      }
      sabotaged[m * g.ldc + n] = bl::canonicalize(c);
    }
  const std::vector<float> expected = reference_then_add(p, bias);
  for (const bl::LaunchConfig& config : bias_configs()) {
    const std::vector<float> got = run_matmul_cuda(p, config, &bias);
    const std::string what = "variant=" + std::to_string(config.variant);
    EXPECT_TRUE(bits_equal(expected, got, "product then add, " + what));
    EXPECT_FALSE(bits_equal(sabotaged, got, "bias as the first leaf's start, " + what));
  }
}

TEST(MatmulBiasCuda, NullBiasThrows) {
  bl::MatmulArgs args = bl::matmul_dense_args(1, 4, 4, 4);
  float* dummy = reinterpret_cast<float*>(16);
  EXPECT_THROW(bl::matmul_bias_cuda(args, dummy, dummy, nullptr, dummy, bl::LaunchConfig{}), bl::Error);
}

}  // namespace
