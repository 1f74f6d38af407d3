// Conformance of the CUDA contract GEMM (src/kernels/cuda/matmul.cu) with the scalar reference, by
// memcmp, under every LaunchConfig of kConformanceLaunchConfigs and every tile matmul_cuda ships
// (LaunchConfig::variant, launch.h): shapes, transposes, batches, special values, batch
// invariance, the leaf-parallel path (batch 1, many leaves, few tiles), and the leaf-size and
// leaf-fold sabotage arms through the same comparison.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bitlearn/ops_matmul.h"
#include "bitlearn/tensor.h"
#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "conformance/matmul_cuda_util.cuh"
#include "core/error.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace {

using bl::MatmulArgs;
using bl::conformance::bits_equal;
using bl::conformance::have_cuda_device;
using bl::conformance::MatmulCase;
using bl::conformance::MatmulProblem;
using bl::conformance::run_matmul_cuda;
using bl::conformance::run_matmul_reference;

// Every launch config under test: the conformance shapes and every tile matmul_cuda ships
// (launch.h), each with the whole grid and a capped grid. With BITLEARN_TEST_MATMUL_VARIANT=<n> in
// the environment only the configs of variant n run (the GPU script uses it to report each tile
// alone, so that one broken tile cannot hide the results of the others).
std::vector<bl::LaunchConfig> all_configs() {
  std::vector<bl::LaunchConfig> v(std::begin(bl::kConformanceLaunchConfigs),
                                  std::end(bl::kConformanceLaunchConfigs));
  v.push_back({256, 5, bl::kMatmulTileRegister64});
  v.push_back({256, 0, bl::kMatmulTilePipe128x64});
  v.push_back({128, 2, bl::kMatmulTilePipe128x64});  // a grid of two blocks walking all tiles
  v.push_back({256, 0, bl::kMatmulTilePipe128});
  v.push_back({256, 9, bl::kMatmulTilePipe128});
  v.push_back({256, 0, bl::kMatmulTileWarp128});
  v.push_back({256, 3, bl::kMatmulTileWarp128});
  for (int tile : {bl::kMatmulTileSmall, bl::kMatmulTileSmallSplit}) {
    v.push_back({256, 0, tile});
    v.push_back({128, 5, tile});
  }
  if (const char* only = std::getenv("BITLEARN_TEST_MATMUL_VARIANT")) {
    const int want = std::atoi(only);
    std::vector<bl::LaunchConfig> kept;
    for (const bl::LaunchConfig& c : v)
      if (c.variant == want) kept.push_back(c);
    return kept;
  }
  return v;
}

std::string config_name(const bl::LaunchConfig& c) {
  return "block=" + std::to_string(c.block) + " grid_cap=" + std::to_string(c.grid_cap) +
         " variant=" + std::to_string(c.variant);
}

void check_cases(const std::vector<MatmulCase>& cases, uint64_t seed) {
  for (const MatmulCase& mc : cases) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    std::vector<float> expected = run_matmul_reference(p);
    for (const bl::LaunchConfig& config : all_configs())
      EXPECT_TRUE(bits_equal(expected, run_matmul_cuda(p, config),
                             "matmul_cuda " + config_name(config) + " " + p.name));
  }
}

TEST(MatmulCudaConformance, MatchesReferenceOnShapes) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  check_cases(bl::conformance::matmul_conformance_cases(), 100);
}

TEST(MatmulCudaConformance, MatchesReferenceOnSpecialValues) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  check_cases(bl::conformance::matmul_special_cases(), 500);
}

TEST(MatmulCudaConformance, MatchesReferenceOnLargerShapes) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  // Several full 128 x 128 tiles with partial edges, K with several leaves and a short last one.
  std::vector<MatmulCase> cases;
  for (int t = 0; t < 4; ++t) {
    cases.push_back({1, 300, 260, 1100, (t & 1) != 0, (t & 2) != 0, 0, 0, 1.0f});
    cases.push_back({2, 129, 257, 520, (t & 1) != 0, (t & 2) != 0, 1, 301, 1.0f});
    // Pitches that are multiples of 4 with K that is not: 16-byte copies up to a partial chunk.
    cases.push_back({1, 260, 300, 1030, (t & 1) != 0, (t & 2) != 0, 2, 0, 1.0f});
    // Several 128 x 256 regions, a partial last tile in both directions.
    cases.push_back({1, 257, 520, 777, (t & 1) != 0, (t & 2) != 0, 0, 0, 1.0f});
  }
  check_cases(cases, 700);
}

// Products with few rows (the GPT-2 124M prefill shapes at 128 tokens, shortened in N so that the
// scalar reference stays quick), odd and prime sizes, K of 1..12 leaves with and without a short
// last leaf: the small tiles (whole K and leaf-parallel) and the choice by shape for them.
TEST(MatmulCudaConformance, MatchesReferenceOnFewRowShapes) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  std::vector<MatmulCase> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    cases.push_back({1, 128, 200, 768, ta, tb, 0, 0, 1.0f});   // qkv / attention / fc: 3 leaves
    cases.push_back({1, 128, 72, 3072, ta, tb, 0, 0, 1.0f});   // mlp projection: 12 leaves
    cases.push_back({1, 127, 131, 777, ta, tb, 1, 0, 1.0f});   // odd sizes, a 9-long last leaf
    cases.push_back({1, 31, 67, 257, ta, tb, 3, 0, 1.0f});     // one full leaf and one of 1
    cases.push_back({2, 65, 97, 600, ta, tb, 0, 0, 1.0f});     // batched: never split
  }
  check_cases(cases, 800);
}

TEST(MatmulCudaConformance, RowAloneEqualsRowInsideLargeM) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  MatmulCase mc{1, 301, 37, 777, false, true, 2, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 1234);
  std::vector<float> big = run_matmul_cuda(p, bl::LaunchConfig{});
  for (int64_t row : {int64_t{0}, int64_t{127}, int64_t{128}, int64_t{300}}) {
    MatmulProblem one = p;
    one.args.m = 1;
    one.args.ldc = one.args.n;
    one.a.assign(p.a.begin() + row * p.args.lda, p.a.end());
    one.c_init.assign(static_cast<size_t>(one.args.n), 0.0f);
    for (const bl::LaunchConfig& config : all_configs()) {
      std::vector<float> c = run_matmul_cuda(one, config);
      EXPECT_TRUE(bits_equal(big.data() + row * p.args.ldc, c.data(), c.size(), sizeof(float),
                             "row " + std::to_string(row) + " alone, " + config_name(config)));
    }
  }
}

TEST(MatmulCudaConformance, BatchEntryAloneEqualsEntryInsideBatch) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  MatmulCase mc{5, 23, 29, 300, true, false, 1, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 4321);
  std::vector<float> all = run_matmul_cuda(p, bl::LaunchConfig{});
  MatmulProblem one = p;
  one.args.batch = 1;
  one.a.assign(p.a.begin() + 3 * p.args.stride_a, p.a.end());
  one.b.assign(p.b.begin() + 3 * p.args.stride_b, p.b.end());
  one.c_init.assign(static_cast<size_t>(p.args.stride_c), 0.0f);
  std::vector<float> c = run_matmul_cuda(one, bl::LaunchConfig{64, 7, 1});
  for (int64_t m = 0; m < mc.m; ++m)
    EXPECT_TRUE(bits_equal(all.data() + 3 * p.args.stride_c + m * p.args.ldc,
                           c.data() + m * p.args.ldc, static_cast<size_t>(mc.n), sizeof(float),
                           "batch entry 3 row " + std::to_string(m)));
}

TEST(MatmulCudaConformance, SabotageLeafSizesAreCaught) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  // The CUDA result is compared with leaf-128 and leaf-less references by the same memcmp: both
  // must differ, while the reference must agree.
  MatmulCase mc{1, 40, 50, 700, false, false, 0, 0, 1.0f};
  MatmulProblem p = bl::conformance::make_matmul_problem(mc, 55);
  std::vector<std::vector<float>> sabotaged;
  for (int64_t leaf : {int64_t{128}, int64_t{0}}) {
    sabotaged.push_back(p.c_init);
    bl::conformance::matmul_reference_with_leaf(p.args, p.a.data(), p.b.data(),
                                                sabotaged.back().data(), leaf);
  }
  const std::vector<float> expected = run_matmul_reference(p);
  for (const bl::LaunchConfig& config : all_configs()) {
    std::vector<float> got = run_matmul_cuda(p, config);
    EXPECT_FALSE(bits_equal(sabotaged[0], got, "leaf=128 " + config_name(config)));
    EXPECT_FALSE(bits_equal(sabotaged[1], got, "leaf=K " + config_name(config)));
    EXPECT_TRUE(bits_equal(expected, got, "contract leaf " + config_name(config)));
  }
}

// The leaf-parallel path of the choice by shape (batch 1, >= 2 leaves, fewer 128 x 64 tiles than
// the device has multiprocessors) under every config, and its sabotage arm: the same leaves folded
// right to left or pairwise must differ from its result by the same memcmp, while the contract's
// left-to-right fold and a tile that never splits K (kMatmulTileRegister64, one launch over all of
// K) must agree with it.
int multiprocessor_count() {
  int dev = 0, sms = 0;
  EXPECT_EQ(cudaGetDevice(&dev), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  return sms;
}

TEST(MatmulCudaConformance, LeafParallelPathMatchesReference) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  for (const MatmulCase& mc : bl::conformance::matmul_leaf_parallel_cases()) {
    ASSERT_LT(((mc.m + 63) / 64) * ((mc.n + 63) / 64), multiprocessor_count()) << "not leaf-parallel";
    ASSERT_GE(bl::gemm_k_leaf_count(mc.k), 4) << "not leaf-parallel";
  }
  check_cases(bl::conformance::matmul_leaf_parallel_cases(), 900);
  std::vector<MatmulCase> special;
  for (MatmulCase mc : bl::conformance::matmul_leaf_parallel_cases()) {
    mc.special_every = 97;
    special.push_back(mc);
  }
  check_cases(special, 950);
}

TEST(MatmulCudaConformance, SabotageLeafParallelFoldOrderIsCaught) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  using bl::conformance::LeafFold;
  uint64_t seed = 900;
  for (const MatmulCase& mc : bl::conformance::matmul_leaf_parallel_cases()) {
    MatmulProblem p = bl::conformance::make_matmul_problem(mc, seed++);
    std::vector<float> split = run_matmul_cuda(p, bl::LaunchConfig{});  // by shape: leaf-parallel here
    std::vector<float> whole = run_matmul_cuda(p, bl::LaunchConfig{64, 7, bl::kMatmulTileRegister64});
    EXPECT_TRUE(bits_equal(run_matmul_reference(p), split, "leaf-parallel vs reference " + p.name));
    EXPECT_TRUE(bits_equal(whole, split, "leaf-parallel vs one launch over K " + p.name));
    for (LeafFold fold : {LeafFold::left_to_right, LeafFold::right_to_left, LeafFold::pairwise}) {
      std::vector<float> folded = p.c_init;
      bl::conformance::matmul_reference_with_fold(p.args, p.a.data(), p.b.data(), folded.data(), fold);
      const std::string what = "leaf-parallel vs fold " + std::to_string(static_cast<int>(fold)) + " " + p.name;
      if (fold == LeafFold::left_to_right) EXPECT_TRUE(bits_equal(folded, split, what));
      else EXPECT_FALSE(bits_equal(folded, split, what));
    }
  }
}

TEST(MatmulCudaConformance, BadInputThrows) {
  MatmulArgs args = bl::matmul_dense_args(1, 4, 4, 4);
  args.ldb = 2;
  EXPECT_THROW(bl::matmul_cuda(args, nullptr, nullptr, nullptr, bl::LaunchConfig{}), bl::Error);
}

TEST(MatmulCudaOps, TensorMatmulAndBmmOnCudaEqualCpu) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const bl::Device gpu = bl::Device::cuda(0);
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    const int64_t m = 131, n = 77, k = 515;
    bl::Tensor a = bl::Tensor::from_vector(bl::conformance::generate_floats(m * k, 40 + t, 1.0f, 101),
                                           ta ? bl::Shape{k, m} : bl::Shape{m, k});
    bl::Tensor b = bl::Tensor::from_vector(bl::conformance::generate_floats(k * n, 50 + t, 1.0f, 0),
                                           tb ? bl::Shape{n, k} : bl::Shape{k, n});
    std::vector<float> cpu = bl::matmul(a, b, ta, tb).to_vector<float>();
    std::vector<float> cuda = bl::matmul(a.to(gpu), b.to(gpu), ta, tb).to(bl::Device::cpu()).to_vector<float>();
    EXPECT_TRUE(bits_equal(cpu, cuda, "Tensor matmul cpu vs cuda, flags " + std::to_string(t)));
  }
  bl::Tensor a3 = bl::Tensor::from_vector(bl::conformance::generate_floats(4 * 33 * 300, 60), {4, 33, 300});
  bl::Tensor b3 = bl::Tensor::from_vector(bl::conformance::generate_floats(300 * 21, 61), {1, 300, 21});
  EXPECT_TRUE(bits_equal(bl::bmm(a3, b3).to_vector<float>(),
                         bl::bmm(a3.to(gpu), b3.to(gpu)).to(bl::Device::cpu()).to_vector<float>(),
                         "Tensor bmm cpu vs cuda"));
}

}  // namespace
