// Throughput of the contract math functions on the CPU (math_map_cpu, one thread) against glibc's
// scalar functions and, where glibc has one, its AVX2 vector variant in libmvec (loaded with
// dlopen, so the benchmark builds without it). Prints values/s and the ratio ours/peer at the end.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "kernels/math_map.h"

namespace {

using bl::MathFn;

constexpr int64_t kN = 1 << 16;

// Inputs in the range where each function does real work.
std::vector<float> inputs_for(MathFn fn, uint64_t seed) {
  float lo = -10.0f, hi = 10.0f;
  switch (fn) {
    case MathFn::log: case MathFn::log2: case MathFn::rsqrt: lo = 1e-3f; hi = 1e4f; break;
    case MathFn::log1p: lo = -0.9f; hi = 100.0f; break;
    case MathFn::exp: case MathFn::expm1: lo = -80.0f; hi = 80.0f; break;
    case MathFn::sin: case MathFn::cos: lo = -100.0f; hi = 100.0f; break;
    case MathFn::pow: lo = 0.01f; hi = 10.0f; break;
    default: break;
  }
  std::vector<float> v(kN);
  uint64_t s = seed;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * static_cast<float>(s >> 40) * 0x1p-24f;
  }
  return v;
}

std::map<std::string, double> g_rates;  // benchmark name -> values per second

void record(benchmark::State& state, const std::string& name) {
  state.SetItemsProcessed(state.iterations() * kN);
  (void)name;
}

void bm_ours(benchmark::State& state, MathFn fn) {
  bl::ThreadPool pool(1);
  std::vector<float> x = inputs_for(fn, 1), y = inputs_for(fn, 2), out(kN);
  for (auto _ : state) {
    if (fn == MathFn::pow)
      bl::math_map_cpu(fn, x.data(), y.data(), out.data(), kN, pool);
    else
      bl::math_map_cpu(fn, x.data(), out.data(), kN, pool);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, "");
}

using ScalarFn = float (*)(float);
float glibc_rsqrt(float x) { return 1.0f / sqrtf(x); }

void bm_glibc(benchmark::State& state, MathFn fn, ScalarFn f) {
  std::vector<float> x = inputs_for(fn, 1), out(kN);
  for (auto _ : state) {
    for (int64_t i = 0; i < kN; ++i) out[i] = f(x[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, "");
}

void bm_glibc_pow(benchmark::State& state) {
  std::vector<float> x = inputs_for(MathFn::pow, 1), y = inputs_for(MathFn::pow, 2), out(kN);
  for (auto _ : state) {
    for (int64_t i = 0; i < kN; ++i) out[i] = powf(x[i], y[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, "");
}

#if defined(__x86_64__)
using Vec1 = __m256 (*)(__m256);
using Vec2 = __m256 (*)(__m256, __m256);

__attribute__((target("avx2,fma"))) void mvec_loop1(Vec1 f, const float* x, float* out) {
  for (int64_t i = 0; i < kN; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(x + i)));
}
__attribute__((target("avx2,fma"))) void mvec_loop2(Vec2 f, const float* x, const float* y,
                                                    float* out) {
  for (int64_t i = 0; i < kN; i += 8)
    _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
}

void bm_mvec(benchmark::State& state, MathFn fn, void* sym) {
  std::vector<float> x = inputs_for(fn, 1), y = inputs_for(fn, 2), out(kN);
  for (auto _ : state) {
    if (fn == MathFn::pow)
      mvec_loop2(reinterpret_cast<Vec2>(sym), x.data(), y.data(), out.data());
    else
      mvec_loop1(reinterpret_cast<Vec1>(sym), x.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  record(state, "");
}
#endif

// Collects items/s of every run to print the ratio table after the console output.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      auto it = r.counters.find("items_per_second");
      if (it != r.counters.end()) g_rates[r.benchmark_name()] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  struct Peer {
    MathFn fn;
    ScalarFn scalar;   // null for pow (separate) and functions glibc lacks
    const char* mvec;  // libmvec AVX2 symbol or null
  };
  const Peer peers[] = {
      {MathFn::exp, expf, "_ZGVdN8v_expf"},     {MathFn::expm1, expm1f, "_ZGVdN8v_expm1f"},
      {MathFn::log, logf, "_ZGVdN8v_logf"},     {MathFn::log1p, log1pf, "_ZGVdN8v_log1pf"},
      {MathFn::log2, log2f, "_ZGVdN8v_log2f"},  {MathFn::tanh, tanhf, "_ZGVdN8v_tanhf"},
      {MathFn::sigmoid, nullptr, nullptr},      {MathFn::silu, nullptr, nullptr},
      {MathFn::softplus, nullptr, nullptr},     {MathFn::gelu_tanh, nullptr, nullptr},
      {MathFn::sin, sinf, "_ZGVdN8v_sinf"},     {MathFn::cos, cosf, "_ZGVdN8v_cosf"},
      {MathFn::erf, erff, "_ZGVdN8v_erff"},     {MathFn::gelu, nullptr, nullptr},
      {MathFn::pow, nullptr, "_ZGVdN8vv_powf"}, {MathFn::rsqrt, glibc_rsqrt, nullptr},
  };
  void* mvec = dlopen("libmvec.so.1", RTLD_NOW);
  const bool avx2 = bl::cpu_has_avx2_fma();
  for (const Peer& p : peers) {
    const std::string name = bl::math_fn_name(p.fn);
    benchmark::RegisterBenchmark(("bl/" + name).c_str(), bm_ours, p.fn);
    if (p.scalar) benchmark::RegisterBenchmark(("glibc/" + name).c_str(), bm_glibc, p.fn, p.scalar);
    if (p.fn == MathFn::pow) benchmark::RegisterBenchmark("glibc/pow", bm_glibc_pow);
#if defined(__x86_64__)
    void* sym = (mvec && avx2 && p.mvec) ? dlsym(mvec, p.mvec) : nullptr;
    if (sym) benchmark::RegisterBenchmark(("libmvec/" + name).c_str(), bm_mvec, p.fn, sym);
#endif
  }
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\n%-10s %14s %14s %14s %12s %12s\n", "function", "bl values/s", "glibc", "libmvec",
              "bl/glibc", "bl/libmvec");
  for (const Peer& p : peers) {
    const std::string name = bl::math_fn_name(p.fn);
    auto get = [&](const std::string& k) { auto it = g_rates.find(k); return it == g_rates.end() ? 0.0 : it->second; };
    const double ours = get("bl/" + name), g = get("glibc/" + name), m = get("libmvec/" + name);
    if (ours == 0) continue;
    std::printf("%-10s %14.3e %14.3e %14.3e %12.2f %12.2f\n", name.c_str(), ours, g, m,
                g > 0 ? ours / g : 0.0, m > 0 ? ours / m : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
