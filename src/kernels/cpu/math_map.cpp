// The CPU math map: names table, argument checks, the threaded driver and the baseline chunk loop.
#include "kernels/math_map.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/exp_f64_cpu.h"
#include "kernels/cpu/math_map_loop.h"

namespace bl {

namespace {

// Indexed by MathFn.
const char* const kMathFnNames[kMathFnCount] = {
    "exp",  "expm1", "log", "log1p", "log2", "tanh", "sigmoid", "silu",
    "softplus", "gelu_tanh", "sin", "cos", "erf", "gelu", "pow", "rsqrt"};

std::string valid_names() {
  std::string s;
  for (int i = 0; i < kMathFnCount; ++i) {
    if (i) s += ", ";
    s += kMathFnNames[i];
  }
  return s;
}

void check_args(const char* op, MathFn fn, const float* x, const float* y, const float* out,
                int64_t n) {
  int id = static_cast<int>(fn);
  BL_CHECK(id >= 0 && id < kMathFnCount, op, ": function id ", id, " is not a MathFn");
  BL_CHECK(n >= 0, op, "(", kMathFnNames[id], "): n must be >= 0, got ", n);
  if (n == 0) return;
  BL_CHECK(x != nullptr, op, "(", kMathFnNames[id], "): input x is null with n = ", n);
  BL_CHECK(out != nullptr, op, "(", kMathFnNames[id], "): output is null with n = ", n);
  if (fn == MathFn::pow)
    BL_CHECK(y != nullptr, op, "(pow): pow takes two operands; pass the exponent array y");
  else
    BL_CHECK(y == nullptr, op, "(", kMathFnNames[id],
             "): a unary function takes one operand; call the overload without y");
}

void run_chunks(MathFn fn, const float* x, const float* y, float* out, int64_t n,
                ThreadPool& pool) {
  using ChunkFn = void (*)(MathFn, const float*, const float*, float*, int64_t);
  const ChunkFn chunk =
      select_isa<ChunkFn>(&math_map_chunk_baseline, &math_map_chunk_avx2, &math_map_chunk_avx512, nullptr);
  // exp outputs beyond the caches: non-temporal stores where the CPU has a kernel for them.
  const bool stream = fn == MathFn::exp && n * int64_t{sizeof(float)} >= exp_f64_stream_min_bytes();
  const int64_t n_tasks = (n + kMathMapChunk - 1) / kMathMapChunk;
  pool.parallel_for(n_tasks, [&](int64_t t) {
    const int64_t begin = t * kMathMapChunk;
    const int64_t len = n - begin < kMathMapChunk ? n - begin : kMathMapChunk;
    const float* yt = y ? y + begin : nullptr;
    if (stream && exp_f64_stream(x + begin, out + begin, len)) return;
    chunk(fn, x + begin, yt, out + begin, len);
  });
}

}  // namespace

const char* math_fn_name(MathFn fn) {
  int id = static_cast<int>(fn);
  BL_CHECK(id >= 0 && id < kMathFnCount, "math_fn_name: function id ", id, " is not a MathFn");
  return kMathFnNames[id];
}

MathFn math_fn_from_name(const std::string& name) {
  for (int i = 0; i < kMathFnCount; ++i)
    if (name == kMathFnNames[i]) return static_cast<MathFn>(i);
  throw Error("math: unknown function '" + name + "'; valid names: " + valid_names());
}

std::vector<MathFn> all_math_fns() {
  std::vector<MathFn> v;
  for (int i = 0; i < kMathFnCount; ++i) v.push_back(static_cast<MathFn>(i));
  return v;
}

void math_map_chunk_baseline(MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  math_map_chunk_loops(fn, x, y, out, n);
}

#if !(defined(__x86_64__) || defined(_M_X64))
// No AVX2 build off x86-64; active_isa() is never avx2 there, so this is never reached.
void math_map_chunk_avx2(MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  math_map_chunk_loops(fn, x, y, out, n);
}
#endif

#if !(defined(__x86_64__) || defined(_M_X64))
// No AVX-512 build off x86-64; active_isa() is never avx512 there, so this is never reached.
void math_map_chunk_avx512(MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  math_map_chunk_loops(fn, x, y, out, n);
}
#endif

void math_map_cpu(MathFn fn, const float* x, float* out, int64_t n, ThreadPool& pool) {
  check_args("math_map_cpu", fn, x, nullptr, out, n);
  run_chunks(fn, x, nullptr, out, n, pool);
}

void math_map_cpu(MathFn fn, const float* x, const float* y, float* out, int64_t n,
                  ThreadPool& pool) {
  check_args("math_map_cpu", fn, x, y, out, n);
  run_chunks(fn, x, y, out, n, pool);
}

}  // namespace bl
