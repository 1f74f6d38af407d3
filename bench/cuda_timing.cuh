// cuda_timing.cuh: GPU timing shared by the CUDA benchmarks (bench/*_cuda.cu). Times are measured
// between two CUDA events on the default stream around the work, after one untimed warm-up run.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// Exits the benchmark program with "FAIL <call>: <CUDA error>" when a runtime call fails.
#define BL_BENCH_CUDA_CHECK(call)                                                 \
  do {                                                                            \
    cudaError_t bl_bench_status_ = (call);                                        \
    if (bl_bench_status_ != cudaSuccess) {                                        \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(bl_bench_status_));  \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

namespace bl::bench {

// Pair of CUDA events that time the work enqueued between start() and stop_ms().
struct GpuEventTimer {
  cudaEvent_t begin = nullptr, end = nullptr;
  GpuEventTimer() {
    BL_BENCH_CUDA_CHECK(cudaEventCreate(&begin));
    BL_BENCH_CUDA_CHECK(cudaEventCreate(&end));
  }
  ~GpuEventTimer() {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  }
  GpuEventTimer(const GpuEventTimer&) = delete;
  GpuEventTimer& operator=(const GpuEventTimer&) = delete;
  void start() { cudaEventRecord(begin); }
  // Waits for the work and returns its GPU time in milliseconds.
  float stop_ms() {
    cudaEventRecord(end);
    cudaEventSynchronize(end);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, begin, end);
    return ms;
  }
};

// The fastest of reps timed runs of work() (after one warm-up), in milliseconds; a CUDA error left
// by the work ends the program.
template <class Work>
float best_ms(Work work, int reps = 10) {
  GpuEventTimer timer;
  work();
  BL_BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    timer.start();
    work();
    const float ms = timer.stop_ms();
    if (ms < best) best = ms;
  }
  BL_BENCH_CUDA_CHECK(cudaGetLastError());
  return best;
}

// Bytes moved in ms milliseconds, as GB/s (10^9 bytes per second).
inline double gb_per_s(double bytes, float ms) { return bytes / (static_cast<double>(ms) * 1e-3) * 1e-9; }

// Google Benchmark loop with manual time: each iteration runs work() between CUDA events and
// reports its GPU time (one untimed warm-up first); a CUDA error marks the benchmark skipped.
template <class Work>
void time_gpu_iterations(benchmark::State& state, Work work) {
  GpuEventTimer timer;
  work();
  cudaDeviceSynchronize();
  for (auto _ : state) {
    timer.start();
    work();
    state.SetIterationTime(timer.stop_ms() * 1e-3);
  }
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) state.SkipWithError(cudaGetErrorString(err));
}

}  // namespace bl::bench
