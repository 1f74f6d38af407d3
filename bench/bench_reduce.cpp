// bench_reduce: CPU memory bandwidth of the large reductions, row ops and elementwise maps, each
// against a memcpy reference run the same way (same thread pool, same bytes, same repetitions).
//
// What is measured, and why it is fair:
// - memcpy reference: the copy is cut into fixed chunks of kCopyChunk floats and the chunks run on
//   the same ThreadPool as the ops, so at T threads the reference is T cores copying, not one.
// - Arrays are several times larger than the last-level cache (BITLEARN_BENCH_FLOATS, else 4x the
//   L3 size rounded up to a power of two, 2^24 .. 2^28 floats), so every pass streams from DRAM;
//   on a 300 MiB L3 a 64 MiB array would be read from the cache.
// - Every buffer is written before any timing (no first-touch page faults in a timed run) and every
//   op runs once untimed at each thread count.
// - Repetitions are interleaved (one pass over all ops per repetition), so a load change hits
//   every op alike; the figure is the median of the repetitions.
// - GB/s = the bytes the op must move to or from memory / time: each input read once, each output
//   written once (memcpy: read n + write n floats, the STREAM "copy" count). Row ops on rows of
//   4096 floats (16 KiB) make their later passes over a row from L1/L2, so they count 2n as well.
//   ratio = op GB/s / memcpy GB/s at the same thread count (issue target: >= 0.7).
//
// Environment: BITLEARN_BENCH_THREADS (comma list; default BITLEARN_THREADS when set, else "1,2"),
// BITLEARN_BENCH_FLOATS (array length; the default is capped at 2^28), BITLEARN_BENCH_REPS
// (default 3), BITLEARN_BENCH_OPS (comma list of op names to run besides memcpy; default all).
// Google Benchmark cases of the same ops run instead of the summary when
// --benchmark_filter matches one (default pool, BITLEARN_THREADS).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/math_map.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace {

constexpr int64_t kRow = 4096;               // row length of the row ops (softmax, norms, row sums)
constexpr int64_t kCopyChunk = int64_t{1} << 18;  // floats per memcpy task (1 MiB)

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  const long long parsed = std::atoll(v);
  return parsed > 0 ? parsed : fallback;
}

// Array length: BITLEARN_BENCH_FLOATS, else 4x the L3 in floats rounded up to a power of two.
int64_t array_floats() {
  int64_t n = env_int("BITLEARN_BENCH_FLOATS", 0);
  if (n == 0) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 <= 0) l3 = 32L << 20;
    n = int64_t{1} << 24;
    while (n * int64_t{sizeof(float)} < 4 * int64_t{l3} && n < (int64_t{1} << 28)) n *= 2;
  }
  return (n + kRow - 1) / kRow * kRow;  // whole rows
}

std::vector<int> thread_counts() {
  std::vector<int> counts;
  const char* env = std::getenv("BITLEARN_BENCH_THREADS");
  if (env && *env) {
    std::stringstream list(env);
    std::string item;
    while (std::getline(list, item, ','))
      if (std::atoi(item.c_str()) > 0) counts.push_back(std::atoi(item.c_str()));
  }
  if (counts.empty() && std::getenv("BITLEARN_THREADS")) counts.push_back(bl::num_threads());
  if (counts.empty()) counts = {1, 2};
  return counts;
}

std::string load_average() {
  char buf[128] = {};
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "?";
  if (!std::fgets(buf, sizeof buf, f)) buf[0] = '\0';
  std::fclose(f);
  std::string s(buf);
  int spaces = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == ' ' && ++spaces == 3) return s.substr(0, i);
  return s;
}

// The buffers every op reads and writes; written once at construction (pages are resident).
struct Buffers {
  int64_t n;
  std::vector<float> x, x2, y, gamma, beta, row_out, stats_a, stats_b;
  explicit Buffers(int64_t floats)
      : n(floats), x(floats), x2(floats), y(floats), gamma(kRow), beta(kRow),
        row_out(std::max(floats / kRow, kRow)), stats_a(floats / kRow), stats_b(floats / kRow) {
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 2654435761u) % 1000) * 0.001f - 0.5f;
      x2[i] = static_cast<float>((i * 40503u) % 997) * 0.002f;
    }
    for (int64_t i = 0; i < kRow; ++i) {
      gamma[i] = 1.0f + static_cast<float>(i % 7) * 0.125f;
      beta[i] = static_cast<float>(i % 5) * 0.25f;
    }
  }
};

bl::StridedView flat_view(int64_t n) {
  bl::StridedView v;
  v.ndim = 1;
  v.shape[0] = n;
  v.strides[0] = 1;
  return v;
}

// memcpy of n floats in fixed chunks on the pool (the reference).
void pool_memcpy(float* dst, const float* src, int64_t n, bl::ThreadPool& pool) {
  const int64_t tasks = (n + kCopyChunk - 1) / kCopyChunk;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t begin = t * kCopyChunk;
    const int64_t len = std::min(kCopyChunk, n - begin);
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(len) * sizeof(float));
  });
}

struct Op {
  const char* name;
  double floats_moved;  // per array element: reads + writes, in floats
  const char* note;
  std::function<void(Buffers&, bl::ThreadPool&)> run;
};

std::vector<Op> all_ops() {
  using bl::ReduceOp;
  using bl::ReduceShape;
  std::vector<Op> ops;
  ops.push_back({"memcpy", 2, "reference: read n + write n",
                 [](Buffers& b, bl::ThreadPool& p) { pool_memcpy(b.y.data(), b.x.data(), b.n, p); }});
  ops.push_back({"sum", 1, "one reduction over all n", [](Buffers& b, bl::ThreadPool& p) {
                   bl::reduce_cpu(ReduceOp::sum, b.x.data(), ReduceShape{1, b.n, 1}, b.row_out.data(), 0, p);
                 }});
  ops.push_back({"max", 1, "one reduction over all n", [](Buffers& b, bl::ThreadPool& p) {
                   bl::reduce_cpu(ReduceOp::max, b.x.data(), ReduceShape{1, b.n, 1}, b.row_out.data(), 0, p);
                 }});
  ops.push_back({"l2_norm", 1, "one reduction over all n", [](Buffers& b, bl::ThreadPool& p) {
                   bl::reduce_cpu(ReduceOp::l2, b.x.data(), ReduceShape{1, b.n, 1}, b.row_out.data(), 0, p);
                 }});
  ops.push_back({"var", 2, "two passes (mean, centered squares)", [](Buffers& b, bl::ThreadPool& p) {
                   bl::reduce_cpu(ReduceOp::var, b.x.data(), ReduceShape{1, b.n, 1}, b.row_out.data(), 0, p);
                 }});
  ops.push_back({"row_sums", 1, "rows of 4096", [](Buffers& b, bl::ThreadPool& p) {
                   bl::reduce_cpu(ReduceOp::sum, b.x.data(), ReduceShape{b.n / kRow, kRow, 1},
                                  b.row_out.data(), 0, p);
                 }});
  ops.push_back({"col_sums", 1, "sum over n/4096 rows, 4096 columns", [](Buffers& b, bl::ThreadPool& p) {
                   bl::reduce_cpu(ReduceOp::sum, b.x.data(), ReduceShape{1, b.n / kRow, kRow},
                                  b.row_out.data(), 0, p);
                 }});
  ops.push_back({"softmax", 2, "rows of 4096", [](Buffers& b, bl::ThreadPool& p) {
                   bl::softmax_cpu(b.x.data(), b.n / kRow, kRow, b.y.data(), false, p);
                 }});
  ops.push_back({"log_softmax", 2, "rows of 4096", [](Buffers& b, bl::ThreadPool& p) {
                   bl::softmax_cpu(b.x.data(), b.n / kRow, kRow, b.y.data(), true, p);
                 }});
  ops.push_back({"layer_norm", 2, "rows of 4096, gamma and beta", [](Buffers& b, bl::ThreadPool& p) {
                   bl::layer_norm_cpu(b.x.data(), b.n / kRow, kRow, b.gamma.data(), b.beta.data(), 1e-5f,
                                      b.y.data(), b.stats_a.data(), b.stats_b.data(), p);
                 }});
  ops.push_back({"rms_norm", 2, "rows of 4096, gamma", [](Buffers& b, bl::ThreadPool& p) {
                   bl::rms_norm_cpu(b.x.data(), b.n / kRow, kRow, b.gamma.data(), 1e-5f, b.y.data(),
                                    b.stats_a.data(), p);
                 }});
  ops.push_back({"add", 3, "y = x + x2", [](Buffers& b, bl::ThreadPool& p) {
                   const bl::StridedView v = flat_view(b.n);
                   bl::binary_cpu(bl::BinaryOp::add, bl::DType::f32, b.x.data(), v, b.x2.data(), v,
                                   b.y.data(), b.n, p);
                 }});
  ops.push_back({"relu", 2, "y = max(x, 0)", [](Buffers& b, bl::ThreadPool& p) {
                   bl::unary_cpu(bl::UnaryOp::relu, bl::DType::f32, b.x.data(), flat_view(b.n), b.y.data(),
                                  b.n, p);
                 }});
  ops.push_back({"exp", 2, "contract exp map", [](Buffers& b, bl::ThreadPool& p) {
                   bl::math_map_cpu(bl::MathFn::exp, b.x.data(), b.y.data(), b.n, p);
                 }});
  return ops;
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

void print_table(Buffers& buf, const std::vector<Op>& ops, int threads, int reps) {
  bl::ThreadPool pool(threads);
  for (const Op& op : ops) op.run(buf, pool);  // untimed warm-up
  std::vector<std::vector<double>> times(ops.size());
  const std::string load_before = load_average();
  for (int rep = 0; rep < reps; ++rep)
    for (size_t i = 0; i < ops.size(); ++i)
      times[i].push_back(seconds_of([&] { ops[i].run(buf, pool); }));
  const std::string load_after = load_average();
  const double element_bytes = static_cast<double>(buf.n) * sizeof(float);
  double copy_gbs = 0.0;
  std::printf("threads=%d n=%lld floats (%.0f MiB per array) isa=%s reps=%d (median, interleaved) "
              "load before %s, after %s\n",
              threads, static_cast<long long>(buf.n), element_bytes / (1 << 20),
              bl::isa_name(bl::active_isa()), reps, load_before.c_str(), load_after.c_str());
  std::printf("  %-12s %9s %9s %7s %10s  %s\n", "op", "ms", "GB/s", "ratio", "best GB/s", "bytes counted");
  for (size_t i = 0; i < ops.size(); ++i) {
    const double t = median(times[i]);
    const double best = *std::min_element(times[i].begin(), times[i].end());
    const double bytes = ops[i].floats_moved * element_bytes;
    const double gbs = bytes / t * 1e-9;
    if (i == 0) copy_gbs = gbs;
    std::printf("  %-12s %9.2f %9.2f %7.2f %10.2f  %gn floats; %s\n", ops[i].name, t * 1e3, gbs,
                gbs / copy_gbs, bytes / best * 1e-9, ops[i].floats_moved, ops[i].note);
  }
  std::fflush(stdout);
}

// Google Benchmark cases (opt-in through --benchmark_filter): the same ops on the default pool.
void register_benchmarks(Buffers& buf, const std::vector<Op>& ops) {
  for (const Op& op : ops) {
    const double bytes = op.floats_moved * static_cast<double>(buf.n) * sizeof(float);
    benchmark::RegisterBenchmark(op.name, [&buf, op, bytes](benchmark::State& state) {
      for (auto _ : state) op.run(buf, bl::default_pool());
      state.SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<double>(state.iterations())));
    })->Unit(benchmark::kMillisecond)->UseRealTime();
  }
}

// The ops named in BITLEARN_BENCH_OPS (comma list) plus memcpy, in table order; all when unset.
std::vector<Op> selected_ops() {
  std::vector<Op> ops = all_ops();
  const char* env = std::getenv("BITLEARN_BENCH_OPS");
  if (env == nullptr || *env == '\0') return ops;
  const std::string list = std::string(",") + env + ",";
  std::vector<Op> kept;
  for (const Op& op : ops)
    if (std::strcmp(op.name, "memcpy") == 0 || list.find(std::string(",") + op.name + ",") != std::string::npos)
      kept.push_back(op);
  return kept;
}

}  // namespace

int main(int argc, char** argv) {
  bool gbench = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_filter", 18) == 0) gbench = true;
  benchmark::Initialize(&argc, argv);
  Buffers buf(array_floats());
  const std::vector<Op> ops = selected_ops();
  if (gbench) {  // a filter that matches nothing (e.g. '^$') falls through to the summary
    register_benchmarks(buf, ops);
    const size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (ran > 0) return 0;
  }
  const int reps = static_cast<int>(env_int("BITLEARN_BENCH_REPS", 3));
  std::printf("bench_reduce: CPU bandwidth vs memcpy on the same pool; L3 %ld KiB\n",
              sysconf(_SC_LEVEL3_CACHE_SIZE) / 1024);
  for (int threads : thread_counts()) print_table(buf, ops, threads, reps);
  return 0;
}
