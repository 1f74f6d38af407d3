// The scratch of the leaf-parallel CUDA GEMM (kMatmulTileSmallSplit, the few-row choice by shape):
// its blocks come from the caching allocator (bytes_in_use while held), cuda_empty_cache() gives
// them back to CUDA, the next product takes new ones and still gives the reference's bits; many
// host threads running leaf-parallel products of different sizes at once (the scratch grows under
// them) while another empties the cache all get the reference's bits. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "bitlearn/cuda_memory.h"
#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "conformance/matmul_cuda_util.cuh"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace {

namespace bc = bl::conformance;

TEST(MatmulCudaScratch, EmptyCacheReleasesTheLeafParallelScratch) {
  if (!bc::have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  // 96 x 640 x 2048: 8 leaves, so the partials take 8 * 96 * 640 * 4 = 1966080 bytes.
  const bc::MatmulCase mc{1, 96, 640, 2048, false, true, 0, 0, 1.0f};
  const bc::MatmulProblem p = bc::make_matmul_problem(mc, 4100);
  const std::vector<float> expected = bc::run_matmul_reference(p);
  const size_t partial_bytes = size_t{8} * 96 * 640 * sizeof(float);
  bl::cuda_empty_cache();  // no scratch held from earlier tests
  const size_t in_use_before = bl::cuda_memory_stats(0).bytes_in_use;

  EXPECT_TRUE(bc::bits_equal(expected, bc::run_matmul_cuda(p, bl::LaunchConfig{256, 0, bl::kMatmulTileSmallSplit}),
                             "small tiles, leaf-parallel"));
  const size_t in_use_held = bl::cuda_memory_stats(0).bytes_in_use;
  EXPECT_GE(in_use_held, in_use_before + partial_bytes) << "the partials come from the pool";

  const size_t released = bl::cuda_empty_cache();
  const bl::CudaMemoryStats after = bl::cuda_memory_stats(0);
  EXPECT_EQ(after.bytes_in_use, in_use_before) << "the scratch went back to the pool";
  EXPECT_EQ(after.bytes_cached, 0u);
  if (after.caching) EXPECT_GE(released, partial_bytes) << "and from the pool to CUDA";

  // The next products take new scratch (fresh counters) and give the same bits again.
  for (int variant : {bl::kMatmulTileSmallSplit, 0})
    EXPECT_TRUE(bc::bits_equal(expected, bc::run_matmul_cuda(p, bl::LaunchConfig{256, 0, variant}),
                           "after cuda_empty_cache, variant " + std::to_string(variant)));
  EXPECT_GE(bl::cuda_memory_stats(0).bytes_in_use, in_use_before + partial_bytes);
}

TEST(MatmulCudaScratch, ManyHostThreadsShareTheScratchWhileTheCacheIsEmptied) {
  if (!bc::have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  // Growing sizes, so that the scratch is reallocated while other threads' products use it.
  const bc::MatmulCase cases[] = {{1, 40, 50, 1100, false, false, 0, 0, 1.0f},
                              {1, 128, 768, 3072, false, true, 0, 0, 1.0f},
                              {1, 33, 300, 2053, true, false, 1, 0, 1.0f},
                              {1, 64, 1536, 1024, false, false, 0, 0, 1.0f},
                              {1, 7, 61, 1024, true, true, 3, 0, 1.0f},
                              {1, 128, 2304, 768, false, true, 0, 0, 1.0f}};
  constexpr int kThreads = 6, kRounds = 4;
  std::vector<bc::MatmulProblem> problems;
  std::vector<std::vector<float>> expected;
  for (int i = 0; i < kThreads; ++i) {
    problems.push_back(bc::make_matmul_problem(cases[i], 4200 + i));
    expected.push_back(bc::run_matmul_reference(problems.back()));
  }
  bl::cuda_empty_cache();
  std::vector<std::vector<std::vector<float>>> got(kThreads);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r)
        got[i].push_back(
            bc::run_matmul_cuda(problems[i], bl::LaunchConfig{256, 0, (i + r) % 2 == 0 ? bl::kMatmulTileSmallSplit : 0}));
      --running;
    });
  int empties = 0;
  while (running.load() > 0) {  // cuda_empty_cache from this thread meanwhile
    bl::cuda_empty_cache();
    ++empties;
    std::this_thread::yield();
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_EQ(got[i].size(), static_cast<size_t>(kRounds));
    for (int r = 0; r < kRounds; ++r)
      EXPECT_TRUE(bc::bits_equal(expected[i], got[i][r],
                             "thread " + std::to_string(i) + " round " + std::to_string(r) + " " +
                                 problems[i].name));
  }
  EXPECT_GT(empties, 0);
}

}  // namespace
