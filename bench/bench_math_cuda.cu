// Throughput of the CUDA math map (contract functions) against kernels calling CUDA's own
// expf/expm1f/logf/log1pf/log2f/tanhf/erff/sinf/cosf/powf (the accurate libdevice versions; the
// build has no fast-math), with the same grid-stride launch. Reports GB/s (bytes read + written)
// and, after the console output, the ratio ours/CUDA.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cuda_timing.cuh"
#include "kernels/launch.h"
#include "kernels/math_map.h"

namespace {

using bl::MathFn;

constexpr int64_t kN = int64_t{1} << 26;
std::map<std::string, double> g_gbps;

struct Buffers {
  float *x = nullptr, *y = nullptr, *out = nullptr;
  Buffers() {
    cudaMalloc(&x, kN * 4);
    cudaMalloc(&y, kN * 4);
    cudaMalloc(&out, kN * 4);
    std::vector<float> h(kN);
    uint64_t s = 7;
    for (auto& v : h) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      v = 0.01f + 20.0f * static_cast<float>(s >> 40) * 0x1p-24f;  // (0.01, 20): valid for all
    }
    cudaMemcpy(x, h.data(), kN * 4, cudaMemcpyHostToDevice);
    for (auto& v : h) v = v * 0.25f - 2.0f;
    cudaMemcpy(y, h.data(), kN * 4, cudaMemcpyHostToDevice);
  }
};
Buffers& buffers() {
  static Buffers b;
  return b;
}

// CUDA's functions, one kernel each, same grid-stride shape as math_map_cuda.
#define BL_CUDA_PEER(name, expr)                                                          \
  __global__ void peer_##name(const float* x, const float* y, float* out, int64_t n) {    \
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {                            \
      const float a = x[i];                                                               \
      const float b = y[i];                                                               \
      (void)b;                                                                            \
      out[i] = expr;                                                                      \
    }                                                                                     \
  }
BL_CUDA_PEER(exp, expf(a))
BL_CUDA_PEER(expm1, expm1f(a))
BL_CUDA_PEER(log, logf(a))
BL_CUDA_PEER(log1p, log1pf(a))
BL_CUDA_PEER(log2, log2f(a))
BL_CUDA_PEER(tanh, tanhf(a))
BL_CUDA_PEER(erf, erff(a))
BL_CUDA_PEER(sin, sinf(a))
BL_CUDA_PEER(cos, cosf(a))
BL_CUDA_PEER(pow, powf(a, b))
BL_CUDA_PEER(rsqrt, 1.0f / sqrtf(a))
#undef BL_CUDA_PEER

using PeerKernel = void (*)(const float*, const float*, float*, int64_t);

double bytes_per_element(MathFn fn) { return fn == MathFn::pow ? 12.0 : 8.0; }

void bm_ours(benchmark::State& state, MathFn fn) {
  Buffers& b = buffers();
  bl::LaunchConfig config;
  bl::bench::time_gpu_iterations(state, [&] {
    if (fn == MathFn::pow)
      bl::math_map_cuda(fn, b.x, b.y, b.out, kN, config);
    else
      bl::math_map_cuda(fn, b.x, b.out, kN, config);
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kN * bytes_per_element(fn)));
  state.SetItemsProcessed(state.iterations() * kN);
}

void bm_peer(benchmark::State& state, MathFn fn, PeerKernel k) {
  Buffers& b = buffers();
  const int block = 256;
  const int64_t blocks = (kN + block - 1) / block;
  bl::bench::time_gpu_iterations(state, [&] {
    k<<<static_cast<unsigned>(blocks), block>>>(b.x, b.y, b.out, kN);
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kN * bytes_per_element(fn)));
  state.SetItemsProcessed(state.iterations() * kN);
}

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      auto it = r.counters.find("bytes_per_second");
      if (it != r.counters.end()) g_gbps[r.run_name.function_name] = it->second.value / 1e9;  // name without "/manual_time"
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("bench_math_cuda: no CUDA device\n");
    return 0;
  }
  struct Peer {
    MathFn fn;
    PeerKernel k;
  };
  const Peer peers[] = {{MathFn::exp, peer_exp},     {MathFn::expm1, peer_expm1},
                        {MathFn::log, peer_log},     {MathFn::log1p, peer_log1p},
                        {MathFn::log2, peer_log2},   {MathFn::tanh, peer_tanh},
                        {MathFn::sigmoid, nullptr},  {MathFn::silu, nullptr},
                        {MathFn::softplus, nullptr}, {MathFn::gelu_tanh, nullptr},
                        {MathFn::sin, peer_sin},     {MathFn::cos, peer_cos},
                        {MathFn::erf, peer_erf},     {MathFn::gelu, nullptr},
                        {MathFn::pow, peer_pow},     {MathFn::rsqrt, peer_rsqrt}};
  for (const Peer& p : peers) {
    const std::string name = bl::math_fn_name(p.fn);
    benchmark::RegisterBenchmark(("bl/" + name).c_str(), bm_ours, p.fn)->UseManualTime();
    if (p.k) benchmark::RegisterBenchmark(("cuda/" + name).c_str(), bm_peer, p.fn, p.k)->UseManualTime();
  }
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nfunction       bl GB/s   cuda GB/s   bl/cuda\n");
  for (const Peer& p : peers) {
    const std::string name = bl::math_fn_name(p.fn);
    const double ours = g_gbps.count("bl/" + name) ? g_gbps["bl/" + name] : 0.0;
    const double peer = g_gbps.count("cuda/" + name) ? g_gbps["cuda/" + name] : 0.0;
    std::printf("%-10s %11.1f %11.1f %9.2f\n", name.c_str(), ours, peer, peer > 0 ? ours / peer : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
