// gemm_tiles: the kernel lab for the CUDA contract GEMM. Every tile shape of the kernel templates
// (src/kernels/cuda/matmul_tile.cuh, matmul_wide.cuh), the ones matmul_cuda ships and the ones it
// does not, against the scalar reference bit for bit (the conformance shapes, special values,
// few-row and leaf-parallel products, a bias row for the small tiles) with the sabotage arm of
// the leaf size, then GFLOP/s of each tile on large, LM and prefill shapes. Without a GPU every
// test skips.
//
// Tiles are numbered as in the list below (1, 4, 6, 10, 11 and 14 are the shipped ones, with the
// numbers of launch.h).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "conformance/matmul_cuda_util.cuh"
#include "kernels/cuda/matmul_tile.cuh"
#include "kernels/cuda/matmul_wide.cuh"

namespace bl::dev {
namespace {

using conformance::bits_equal;
using conformance::have_cuda_device;
using conformance::MatmulCase;
using conformance::MatmulProblem;

// Warp-tiled shapes: WideConfig<BM, BN, BK, TM, TN, WM, WN, stages, blocks per multiprocessor>.
using Wide7 = WideConfig<128, 256, 16, 8, 16, 0, 0, 3, 1>;    // block layout, 8 x 16 per thread
using Wide8 = WideConfig<128, 128, 8, 8, 8, 64, 32, 4, 2>;    // BK 8, two blocks per SM
using Wide9 = WideConfig<128, 256, 16, 8, 16, 64, 64, 3, 1>;  // warp tiles 64 x 64
using Wide10 = WideConfig<128, 128, 32, 8, 8, 64, 32, 3, 1>;  // shipped: kMatmulTileWarp128
using Small11 = WideConfig<32, 64, 32, 4, 4, 32, 16, 3, 4>;   // shipped: kMatmulTileSmall
using Small12 = WideConfig<64, 64, 16, 4, 4, 32, 16, 4, 2>;
using Small13 = WideConfig<32, 32, 32, 4, 4, 32, 16, 3, 8>;

struct Tile {
  int number;
  const char* what;
};

const Tile kTiles[] = {
    {1, "64 x 64 register-staged, BK 8"},
    {2, "128 x 128 pipeline, BK 16, 4 stages, leaf sums in registers"},
    {3, "128 x 128 register-staged, BK 8, two blocks per multiprocessor"},
    {4, "128 x 64 pipeline, BK 16, 4 stages, three blocks"},
    {5, "128 x 128 pipeline, BK 32, 3 stages, leaf sums in registers"},
    {6, "128 x 128 pipeline, BK 32, 3 stages"},
    {7, "128 x 256 block layout, 8 x 16 per thread"},
    {8, "128 x 128 warp tiles 64 x 32, BK 8, two blocks"},
    {9, "128 x 256 warp tiles 64 x 64, 8 x 16 per thread"},
    {10, "128 x 128 warp tiles 64 x 32, BK 32"},
    {11, "32 x 64 small warp tiles, BK 32"},
    {12, "64 x 64 small warp tiles, BK 16, 4 stages"},
    {13, "32 x 32 small warp tiles, BK 32"},
    {14, "tile 11, k leaves in parallel"},
    {15, "tile 12, k leaves in parallel"},
    {16, "tile 13, k leaves in parallel"},
};

bool is_small(int tile) { return tile >= 11; }

// C = op(A) op(B) (+ bias for the small tiles) with tile `tile`, on the default stream.
void run_tile(int tile, const MatmulArgs& args, const float* a, const float* b, float* c, const float* bias,
              const LaunchConfig& config) {
  const cudaStream_t s = nullptr;
  const bool split = tile >= 14 && args.batch == 1 && gemm_k_leaf_count(args.k) >= 2;
  switch (tile) {
    case 7: launch_wide<Wide7, false>(args, a, b, c, nullptr, config, s); return;
    case 8: launch_wide<Wide8, false>(args, a, b, c, nullptr, config, s); return;
    case 9: launch_wide<Wide9, false>(args, a, b, c, nullptr, config, s); return;
    case 10: launch_wide<Wide10, false>(args, a, b, c, nullptr, config, s); return;
    case 11: case 14: launch_small<Small11>(args, a, b, c, bias, split, config, s); return;
    case 12: case 15: launch_small<Small12>(args, a, b, c, bias, split, config, s); return;
    case 13: case 16: launch_small<Small13>(args, a, b, c, bias, split, config, s); return;
    default: break;
  }
  MatmulDeviceArgs p;
  pipe_problem_sizes(args, p);
  p.trans_a = args.trans_a ? 1 : 0;
  p.trans_b = args.trans_b ? 1 : 0;
  p.tiles_m = p.tiles_n = 0;
  p.tiles_total = args.batch;
  switch (tile) {
    case 1: launch_matmul<64, 64, 8, 4, 4, 1>(p, a, b, c, config, s); break;
    case 2: launch_matmul_pipe<128, 128, 16, 4, 1, true>(p, args.batch, a, b, c, config, s); break;
    case 3: launch_matmul<128, 128, 8, 8, 8, 2>(p, a, b, c, config, s); break;
    case 4: launch_matmul_pipe<128, 64, 16, 4, 3, false>(p, args.batch, a, b, c, config, s); break;
    case 5: launch_matmul_pipe<128, 128, 32, 3, 1, true>(p, args.batch, a, b, c, config, s); break;
    case 6: launch_matmul_pipe<128, 128, 32, 3, 1, false>(p, args.batch, a, b, c, config, s); break;
    default: BL_CHECK(false, "gemm_tiles: no tile ", tile);
  }
}

// C of problem p after tile `tile` (with the bias row added by the small tiles when given).
std::vector<float> run_problem(int tile, const MatmulProblem& p, const LaunchConfig& config,
                               const std::vector<float>* bias = nullptr) {
  conformance::DeviceFloats a(p.a), b(p.b), c(p.c_init);
  if (bias != nullptr) {
    conformance::DeviceFloats d_bias(*bias);
    run_tile(tile, p.args, a.ptr, b.ptr, c.ptr, d_bias.ptr, config);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  } else {
    run_tile(tile, p.args, a.ptr, b.ptr, c.ptr, nullptr, config);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  return c.download(p.c_init.size());
}

const LaunchConfig kConfigs[] = {{256, 0, 0}, {128, 3, 0}};

void check_cases(const std::vector<MatmulCase>& cases, uint64_t seed) {
  for (const MatmulCase& mc : cases) {
    const MatmulProblem p = conformance::make_matmul_problem(mc, seed++);
    const std::vector<float> expected = conformance::run_matmul_reference(p);
    for (const Tile& t : kTiles)
      for (const LaunchConfig& config : kConfigs)
        EXPECT_TRUE(bits_equal(expected, run_problem(t.number, p, config),
                               "tile " + std::to_string(t.number) + " grid_cap=" + std::to_string(config.grid_cap) +
                                   " " + p.name));
  }
}

TEST(GemmTiles, MatchReferenceOnShapes) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  check_cases(conformance::matmul_conformance_cases(), 100);
  check_cases(conformance::matmul_special_cases(), 500);
}

TEST(GemmTiles, MatchReferenceOnLargerAndFewRowShapes) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  std::vector<MatmulCase> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    cases.push_back({1, 300, 260, 1100, ta, tb, 0, 0, 1.0f});
    cases.push_back({2, 129, 257, 520, ta, tb, 1, 301, 1.0f});
    cases.push_back({1, 257, 520, 777, ta, tb, 0, 0, 1.0f});
    cases.push_back({1, 128, 72, 3072, ta, tb, 0, 0, 1.0f});
    cases.push_back({1, 31, 67, 257, ta, tb, 3, 0, 1.0f});
  }
  check_cases(cases, 700);
  check_cases(conformance::matmul_leaf_parallel_cases(), 900);
}

// The small tiles add the bias row as they store: the reference product, then the add op's rule.
TEST(GemmTiles, SmallTilesAddTheBiasAsTheAddOp) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  uint64_t seed = 300;
  for (const MatmulCase& mc : {MatmulCase{1, 128, 200, 768, false, true, 0, 0, 1.0f},
                               MatmulCase{2, 65, 97, 600, true, false, 1, 0, 1.0f},
                               MatmulCase{1, 31, 67, 257, false, false, 0, 53, 1.0f}}) {
    const MatmulProblem p = conformance::make_matmul_problem(mc, seed++);
    const std::vector<float> bias = conformance::generate_floats(mc.n, seed++, 2.0f, 31);
    std::vector<float> expected = conformance::run_matmul_reference(p);
    for (int64_t bi = 0; bi < p.args.batch; ++bi)
      for (int64_t m = 0; m < p.args.m; ++m)
        for (int64_t n = 0; n < p.args.n; ++n) {
          float& v = expected[bi * p.args.stride_c + m * p.args.ldc + n];
          v = canonicalize(add(v, bias[n]));
        }
    for (const Tile& t : kTiles)
      if (is_small(t.number))
        EXPECT_TRUE(bits_equal(expected, run_problem(t.number, p, kConfigs[0], &bias),
                               "bias, tile " + std::to_string(t.number) + " " + p.name));
  }
}

// Sabotage arm: references with another leaf size (128, or one leaf over all of K) must differ from
// every tile, while the contract reference agrees.
TEST(GemmTiles, SabotageLeafSizesAreCaught) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const MatmulProblem p = conformance::make_matmul_problem(MatmulCase{1, 40, 50, 700, false, false, 0, 0, 1.0f}, 55);
  std::vector<std::vector<float>> sabotaged;
  for (int64_t leaf : {int64_t{128}, int64_t{0}}) {
    sabotaged.push_back(p.c_init);
    conformance::matmul_reference_with_leaf(p.args, p.a.data(), p.b.data(), sabotaged.back().data(), leaf);
  }
  for (const Tile& t : kTiles) {
    const std::vector<float> got = run_problem(t.number, p, kConfigs[0]);
    EXPECT_FALSE(bits_equal(sabotaged[0], got, "leaf=128 tile " + std::to_string(t.number)));
    EXPECT_FALSE(bits_equal(sabotaged[1], got, "leaf=K tile " + std::to_string(t.number)));
  }
}

// GFLOP/s of every tile (best of 5 launches after one warm-up) on square, LM and prefill shapes.
TEST(GemmTiles, Times) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t shapes[][3] = {{4096, 4096, 4096}, {8192, 768, 3072}, {8192, 3072, 768},
                               {128, 2304, 768},   {128, 768, 3072}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    float *a = nullptr, *b = nullptr, *c = nullptr;
    ASSERT_EQ(cudaMalloc(&a, m * k * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b, k * n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&c, m * n * sizeof(float)), cudaSuccess);
    cudaMemset(a, 0, m * k * sizeof(float));
    cudaMemset(b, 0, k * n * sizeof(float));
    const MatmulArgs args = matmul_dense_args(1, m, n, k);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (const Tile& t : kTiles) {
      const bool wide = t.number >= 7 && t.number <= 10;
      if ((wide && m < 2048) || (is_small(t.number) && m >= 2048)) continue;
      run_tile(t.number, args, a, b, c, nullptr, kConfigs[0]);
      float best = 1e30f;
      for (int r = 0; r < 5; ++r) {
        cudaEventRecord(e0);
        run_tile(t.number, args, a, b, c, nullptr, kConfigs[0]);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        best = ms < best ? ms : best;
      }
      std::printf("%5lldx%-5lldx%-5lld tile %-2d %8.1f GFLOP/s  (%s)\n", static_cast<long long>(m),
                  static_cast<long long>(n), static_cast<long long>(k), t.number, 2.0 * m * n * k / (best * 1e6),
                  t.what);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
}

}  // namespace
}  // namespace bl::dev
