// CPU bandwidth of the large reductions against memcpy of the same bytes.
//
// GB/s counts the bytes a kernel must move at least: sum reads n floats; softmax reads n floats
// twice (maximum, denominator) and reads + writes once more (output); memcpy reads and writes n
// floats and is counted as the bytes copied. The summary after the Google Benchmark table prints
// each kernel's GB/s (best of several runs) and its ratio to memcpy (target >= 0.7 for sum).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace {

constexpr int64_t kN = int64_t{1} << 24;  // 64 MiB of floats: well beyond the caches

std::vector<float>& input() {
  static std::vector<float> x = [] {
    std::vector<float> v(kN);
    for (int64_t i = 0; i < kN; ++i) v[i] = static_cast<float>((i * 2654435761u) % 1000) * 0.001f;
    return v;
  }();
  return x;
}

void BM_memcpy(benchmark::State& state) {
  auto& x = input();
  std::vector<float> y(kN);
  for (auto _ : state) {
    std::memcpy(y.data(), x.data(), kN * sizeof(float));
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * kN * int64_t{sizeof(float)});
}
BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);

void BM_sum(benchmark::State& state) {
  auto& x = input();
  float out = 0.0f;
  for (auto _ : state) {
    bl::reduce_cpu(bl::ReduceOp::sum, x.data(), bl::ReduceShape{1, kN, 1}, &out, 0, bl::default_pool());
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * kN * int64_t{sizeof(float)});
}
BENCHMARK(BM_sum)->Unit(benchmark::kMillisecond);

void BM_softmax_rows4096(benchmark::State& state) {
  auto& x = input();
  std::vector<float> y(kN);
  for (auto _ : state) {
    bl::softmax_cpu(x.data(), kN / 4096, 4096, y.data(), false, bl::default_pool());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * 4 * kN * int64_t{sizeof(float)});
}
BENCHMARK(BM_softmax_rows4096)->Unit(benchmark::kMillisecond);

template <class F>
double best_seconds(F f) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

void print_summary() {
  auto& x = input();
  std::vector<float> y(kN);
  float out = 0.0f;
  const double bytes = static_cast<double>(kN) * sizeof(float);
  double t_copy = best_seconds([&] { std::memcpy(y.data(), x.data(), kN * sizeof(float)); });
  double t_sum = best_seconds([&] {
    bl::reduce_cpu(bl::ReduceOp::sum, x.data(), bl::ReduceShape{1, kN, 1}, &out, 0, bl::default_pool());
  });
  double t_soft = best_seconds([&] { bl::softmax_cpu(x.data(), kN / 4096, 4096, y.data(), false, bl::default_pool()); });
  const double copy_gbs = bytes / t_copy * 1e-9;
  std::printf("threads=%d n=%lld\n", bl::num_threads(), static_cast<long long>(kN));
  std::printf("memcpy   %8.2f GB/s\n", copy_gbs);
  std::printf("sum      %8.2f GB/s  ratio %.2f\n", bytes / t_sum * 1e-9, bytes / t_sum * 1e-9 / copy_gbs);
  std::printf("softmax  %8.2f GB/s  ratio %.2f (4 passes of bytes)\n", 4 * bytes / t_soft * 1e-9,
              4 * bytes / t_soft * 1e-9 / copy_gbs);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary();
  return 0;
}
