// CPU softmax / log-softmax. Results equal softmax_reference bit for bit on either path.
//
// Rows of at most kOnePassRowMax floats run in one pass: a task takes whole rows and makes every
// step over a row while it is in L1/L2 (row maximum, shifted values, exponentials by the contract
// math map, their sum, then the division or the log-softmax subtraction), so memory sees one read
// and one write per element; on AVX2 and AVX-512 CPUs the shift, exp and leaf sums are one loop
// (exp_f64_table_shift_leaf_*). Outputs beyond the caches are written with non-temporal
// stores (exp_f64_stream_min_bytes; AVX2 CPUs). Longer rows (and empty ones) take the three-pass path: row maximum
// through reduce_totals; per (row, leaf) job the shifted values go to a task buffer, their
// exponentials to y (softmax) and their leaf sums to a table; then the leaf tree and an in-place
// division pass. Both paths use the same leaf functions (leaf_max / leaf_sum of reduce_rows.h) and
// the same leaf tree, and every output is the reference's element operation, so the path, the
// partition and the thread count change no bit.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/exp_f64_cpu.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/cpu/softmax_rows.h"
#include "kernels/math_map.h"
#include "kernels/softmax.h"

namespace bl {

namespace cpu {

void softmax_shift_baseline(const float* x, int64_t n, float m, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = sub(x[i], m);
}

void softmax_divide_baseline(float* y, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) y[i] = canonicalize(div(y[i], s));
}

void log_softmax_finish_baseline(const float* x, int64_t n, float m, float log_s, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = log_softmax_element(x[i], m, log_s);
}

}  // namespace cpu

namespace {

// Longest row that runs in one pass (64 KiB of floats: stays in L2 between its steps).
constexpr int64_t kOnePassRowMax = 4 * kReduceLeaf;

using MathChunkFn = void (*)(MathFn, const float*, const float*, float*, int64_t);

MathChunkFn exp_chunk_fn() {
  return select_isa<MathChunkFn>(cpu::kernel_isa(), &math_map_chunk_baseline, &math_map_chunk_avx2,
                                 &math_map_chunk_avx512, nullptr);
}

// One leaf of the denominator: e = exp(x - m) and the leaf's value on the sum schedule.
using ShiftLeafFn = float (*)(const float* x, float m, float* e, int64_t len, const float* next);

// The fused shift + exp + leaf-sum kernel for this CPU, or null where there is none (x86-64 with
// AVX2+FMA only).
ShiftLeafFn fused_shift_leaf() {
  return select_isa<ShiftLeafFn>(cpu::kernel_isa(), nullptr, &exp_f64_table_shift_leaf_avx2,
                                 &exp_f64_table_shift_leaf_avx512, nullptr);
}

// The one-pass path: rows of 1..kOnePassRowMax floats, whole rows per task.
void softmax_one_pass(const float* x, int64_t rows, int64_t n, float* y, bool log_form, ThreadPool& pool) {
  const Isa isa = cpu::kernel_isa();
  const auto shift = select_isa(isa, &cpu::softmax_shift_baseline, &cpu::softmax_shift_avx2, nullptr, nullptr);
  const auto divide = select_isa(isa, &cpu::softmax_divide_baseline, &cpu::softmax_divide_avx2, nullptr, nullptr);
  const auto log_finish =
      select_isa(isa, &cpu::log_softmax_finish_baseline, &cpu::log_softmax_finish_avx2, nullptr, nullptr);
  const MathChunkFn exp_chunk = exp_chunk_fn();
  const cpu::ContiguousLeafFn max_leaf = cpu::best_contiguous_leaf<StepMax>();
  const cpu::ContiguousLeafFn sum_leaf = cpu::best_contiguous_leaf<StepAdd>();
  const ShiftLeafFn fused = fused_shift_leaf();
  const int64_t leaf_count = reduce_leaf_count(n);
  // Outputs beyond the caches: y is written once, at the end, with non-temporal stores (the
  // exponentials stay in the task buffer), so its lines are never read for ownership.
  // The streamed last pass exists in the AVX2 build only (AVX-512 CPUs run it too).
  const bool stream = select_isa(isa, false, true, true, false) &&
                      rows * n * int64_t{sizeof(float)} >= exp_f64_stream_min_bytes();
  const int64_t rows_per_task = std::max<int64_t>(1, cpu::kTaskElements / n);
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  pool.parallel_for(tasks, [&](int64_t t) {
    std::vector<float> e_buffer(log_form || stream ? static_cast<size_t>(n) : 0);
    float leaves[kOnePassRowMax / kReduceLeaf];
    const int64_t end = std::min(rows, (t + 1) * rows_per_task);
    for (int64_t r = t * rows_per_task; r < end; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      const float m = cpu::row_total<StepMax>(max_leaf, xr, n, 0.0f, leaves);
      // Softmax keeps the exponentials in y (x is no longer read once m is known, so y may alias
      // x) unless it streams; log-softmax needs x again and keeps them in a task buffer.
      float* e = log_form || stream ? e_buffer.data() : yr;
      // lane = lane + e_i with e_i = exp(x_i - m): the StepExpShift sum (combine = add).
      float s;
      if (fused) {
        for (int64_t l = 0; l < leaf_count; ++l) {
          const int64_t start = l * kReduceLeaf;
          // The same leaf of the task's next row is prefetched meanwhile: its first read (the
          // row maximum) then finds it in cache instead of waiting on memory.
          const float* next = r + 1 < end ? xr + n + start : nullptr;
          leaves[l] = fused(xr + start, m, e + start, std::min<int64_t>(kReduceLeaf, n - start), next);
        }
        s = leaf_tree<StepAdd>(leaves, leaf_count);
      } else {
        shift(xr, n, m, e);
        exp_chunk(MathFn::exp, e, nullptr, e, n);
        s = cpu::row_total<StepAdd>(sum_leaf, e, n, 0.0f, leaves);
      }
      if (log_form && stream)
        cpu::log_softmax_finish_stream_avx2(xr, n, m, log(s), yr);
      else if (log_form)
        log_finish(xr, n, m, log(s), yr);
      else if (stream)
        cpu::softmax_divide_stream_avx2(e, n, s, yr);
      else
        divide(yr, n, s);
    }
  });
}

// The three-pass path for long rows.
void softmax_leaf_jobs(const float* x, int64_t rows, int64_t n, float* y, bool log_form, ThreadPool& pool) {
  const ReduceShape shape{rows, n, 1};
  std::vector<float> m(static_cast<size_t>(rows)), s(static_cast<size_t>(rows));
  cpu::reduce_totals<StepMax>(x, shape, nullptr, m.data(), pool);

  const MathChunkFn exp_chunk = exp_chunk_fn();
  const cpu::ContiguousLeafFn leaf_fn = cpu::best_contiguous_leaf<StepAdd>();
  const int64_t leaves = reduce_leaf_count(n);
  const int64_t jobs = rows * leaves;
  const int64_t per_task = std::max<int64_t>(1, cpu::kTaskElements / std::min<int64_t>(n, kReduceLeaf));
  const int64_t tasks = (jobs + per_task - 1) / per_task;
  std::vector<float> p(static_cast<size_t>(jobs));
  pool.parallel_for(tasks, [&](int64_t t) {
    std::vector<float> shifted(kReduceLeaf), e_buffer(kReduceLeaf);
    const int64_t end = std::min(jobs, (t + 1) * per_task);
    for (int64_t g = t * per_task; g < end; ++g) {
      const int64_t r = g / leaves, l = g % leaves;
      const int64_t start = l * kReduceLeaf;
      const int64_t len = std::min<int64_t>(kReduceLeaf, n - start);
      const float* xs = x + r * n + start;
      const float mr = m[r];
      for (int64_t i = 0; i < len; ++i) shifted[i] = sub(xs[i], mr);
      float* e = log_form ? e_buffer.data() : y + r * n + start;
      exp_chunk(MathFn::exp, shifted.data(), nullptr, e, len);
      p[g] = leaf_fn(e, len, 0.0f);  // lane = lane + e_i: the StepExpShift leaf
    }
  });
  for (int64_t r = 0; r < rows; ++r) s[r] = leaf_tree<StepExpShift>(p.data() + r * leaves, leaves);
  if (log_form)
    for (auto& v : s) v = log(v);
  cpu::for_each_row_segment(rows, n, pool, [&](int64_t r, int64_t i0, int64_t i1) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float mr = m[r], sr = s[r];
    if (log_form)
      for (int64_t i = i0; i < i1; ++i) yr[i] = log_softmax_element(xr[i], mr, sr);
    else
      for (int64_t i = i0; i < i1; ++i) yr[i] = canonicalize(div(yr[i], sr));  // y holds e_i
  });
}

}  // namespace

void softmax_cpu(const float* x, int64_t rows, int64_t n, float* y, bool log_form, ThreadPool& pool) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  if (n <= kOnePassRowMax)
    softmax_one_pass(x, rows, n, y, log_form, pool);
  else
    softmax_leaf_jobs(x, rows, n, y, log_form, pool);
}

}  // namespace bl
