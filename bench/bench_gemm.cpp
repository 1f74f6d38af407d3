// bench_gemm: the contract GEMM on the CPU (bl::matmul_cpu) and the exact-integer GEMM
// (bl::exact_matmul_cpu, profile bitlearn.exact_gemm.v1) side by side with OpenBLAS
// cblas_sgemm, same shapes, same thread counts (1 and 2, or the comma-separated list in the
// environment variable BITLEARN_BENCH_THREADS, e.g. 16), in one process.
//
// Shapes are M x N x K: square 256..4096, the LM shapes 8192x768x3072, 8192x3072x768,
// 8192x768x768, and 2048x768x3072, 2048x3072x768 (the LM shapes with 4x fewer rows, a proxy that
// runs in reasonable time on a small machine). Counter GFLOP/s = 2*M*N*K / time. Filter with
// --benchmark_filter, e.g. --benchmark_filter='M:2048/N:2048/K:2048/'; bench/gemm_ratio.py runs
// both sides interleaved with repetitions and prints the ratio.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/exact_gemm.h"
#include "kernels/matmul.h"

#if defined(BITLEARN_HAVE_BLAS)
#include <cblas.h>
#endif

namespace {

struct GemmData {
  std::vector<float> a, b, c;
  GemmData(int64_t m, int64_t n, int64_t k)
      : a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n)) {
    // Small exact values; the figures do not depend on them.
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.125f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f;
  }
};

void set_flops(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * 1e-9 * state.iterations(),
                                                 benchmark::Counter::kIsRate);
}

void BM_bitlearn_matmul(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  GemmData d(m, n, k);
  bl::ThreadPool pool(threads);
  bl::MatmulArgs args = bl::matmul_dense_args(1, m, n, k);
  for (auto _ : state) {
    bl::matmul_cpu(args, d.a.data(), d.b.data(), d.c.data(), &pool);
    benchmark::DoNotOptimize(d.c.data());
  }
  set_flops(state, m, n, k);
}

void BM_exact_matmul(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  GemmData d(m, n, k);
  bl::ThreadPool pool(threads);
  const bl::MatmulArgs args = bl::matmul_dense_args(1, m, n, k);
  for (auto _ : state) {
    bl::exact_matmul_cpu(args, d.a.data(), d.b.data(), d.c.data(), &pool);
    benchmark::DoNotOptimize(d.c.data());
  }
  set_flops(state, m, n, k);
}

#if defined(BITLEARN_HAVE_BLAS)
void BM_openblas_sgemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  GemmData d(m, n, k);
  openblas_set_num_threads(threads);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, d.a.data(), static_cast<int>(k), d.b.data(),
                static_cast<int>(n), 0.0f, d.c.data(), static_cast<int>(n));
    benchmark::DoNotOptimize(d.c.data());
  }
  set_flops(state, m, n, k);
}
#endif

// Thread counts to measure: BITLEARN_BENCH_THREADS ("16", "1,4,16") or 1 and 2.
std::vector<int64_t> bench_thread_counts() {
  std::vector<int64_t> counts;
  const char* env = std::getenv("BITLEARN_BENCH_THREADS");
  if (env && *env) {
    std::stringstream list(env);
    std::string item;
    while (std::getline(list, item, ','))
      if (!item.empty() && std::atoi(item.c_str()) > 0) counts.push_back(std::atoi(item.c_str()));
  }
  if (counts.empty()) counts = {1, 2};
  return counts;
}

void gemm_shapes(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][3] = {{256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024},
                               {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 768, 3072},
                               {8192, 3072, 768},  {8192, 768, 768},   {2048, 768, 3072},
                               {2048, 3072, 768}};
  for (const auto& s : shapes)
    for (int64_t threads : bench_thread_counts()) b->Args({s[0], s[1], s[2], threads});
  b->ArgNames({"M", "N", "K", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_bitlearn_matmul)->Apply(gemm_shapes);
BENCHMARK(BM_exact_matmul)->Apply(gemm_shapes);
#if defined(BITLEARN_HAVE_BLAS)
BENCHMARK(BM_openblas_sgemm)->Apply(gemm_shapes);
#endif

}  // namespace

BENCHMARK_MAIN();
