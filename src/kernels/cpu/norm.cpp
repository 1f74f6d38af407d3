// CPU layer norm and RMS norm: row statistics on the sum schedule, then one elementwise pass.
//
// Rows of at most kFusedRowMax floats run fused: one task takes whole rows and makes every pass
// over a row (mean, centered squares, output) while the row is in L1/L2, so memory sees one read
// and one write per element instead of three reads and a write. Longer rows (and empty ones) take
// the three-pass path through reduce_totals. The row statistics are the same leaf values and leaf
// tree either way (row_total in reduce_rows.h), and every output is its own element function, so
// the path and the partition change no bit.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/norm_rows.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/norm.h"

namespace bl {

namespace cpu {

void layer_norm_run_baseline(const float* x, int64_t n, float mean, float den, const float* gamma,
                             const float* beta, float* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = layer_norm_element(x[i], mean, den, gamma ? gamma[i] : 1.0f, beta ? beta[i] : 0.0f,
                              gamma != nullptr, beta != nullptr);
}

void rms_norm_run_baseline(const float* x, int64_t n, float den, const float* gamma, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = rms_norm_element(x[i], den, gamma ? gamma[i] : 1.0f, gamma != nullptr);
}

}  // namespace cpu

namespace {

// Longest row that runs fused (64 KiB of floats: stays in L2 between its passes).
constexpr int64_t kFusedRowMax = 4 * kReduceLeaf;

void check_norm_args(const char* name, const float* x, int64_t rows, int64_t n, const float* y) {
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(rows * n == 0 || (x != nullptr && y != nullptr), name, ": input or output pointer is null");
}

using LayerNormRunFn = void (*)(const float*, int64_t, float, float, const float*, const float*, float*);
using RmsNormRunFn = void (*)(const float*, int64_t, float, const float*, float*);

LayerNormRunFn layer_norm_run() {
  return select_isa<LayerNormRunFn>(cpu::kernel_isa(), &cpu::layer_norm_run_baseline, &cpu::layer_norm_run_avx2,
                                    nullptr, nullptr);
}
RmsNormRunFn rms_norm_run() {
  return select_isa<RmsNormRunFn>(cpu::kernel_isa(), &cpu::rms_norm_run_baseline, &cpu::rms_norm_run_avx2,
                                  nullptr, nullptr);
}

// Calls body(r) for every row, whole rows per task, about kTaskElements elements per task.
template <class Body>
void for_each_row(int64_t rows, int64_t n, ThreadPool& pool, const Body& body) {
  const int64_t rows_per_task = std::max<int64_t>(1, cpu::kTaskElements / n);
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t end = std::min(rows, (t + 1) * rows_per_task);
    for (int64_t r = t * rows_per_task; r < end; ++r) body(r);
  });
}

}  // namespace

void layer_norm_cpu(const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta,
                    float eps, float* y, float* mean_out, float* rstd_out, ThreadPool& pool) {
  check_norm_args("layer_norm", x, rows, n, y);
  if (rows == 0) return;
  const LayerNormRunFn run = layer_norm_run();
  if (n >= 1 && n <= kFusedRowMax) {
    const cpu::ContiguousLeafFn sum_leaf = cpu::best_contiguous_leaf<StepAdd>();
    const cpu::ContiguousLeafFn square_leaf = cpu::best_contiguous_leaf<StepCenteredSquare>();
    for_each_row(rows, n, pool, [&](int64_t r) {
      float leaves[kFusedRowMax / kReduceLeaf];
      const float* xr = x + r * n;
      const float mean = finish_mean(cpu::row_total<StepAdd>(sum_leaf, xr, n, 0.0f, leaves), n);
      const float var = finish_var(cpu::row_total<StepCenteredSquare>(square_leaf, xr, n, mean, leaves), n, 0);
      const float den = norm_denominator(var, eps);
      run(xr, n, mean, den, gamma, beta, y + r * n);
      if (mean_out) mean_out[r] = mean;
      if (rstd_out) rstd_out[r] = canonicalize(div(1.0f, den));
    });
    return;
  }
  const ReduceShape shape{rows, n, 1};
  std::vector<float> mean(static_cast<size_t>(rows)), den(static_cast<size_t>(rows));
  cpu::reduce_totals<StepAdd>(x, shape, nullptr, mean.data(), pool);
  for (auto& v : mean) v = finish_mean(v, n);
  cpu::reduce_totals<StepCenteredSquare>(x, shape, mean.data(), den.data(), pool);
  for (auto& v : den) v = norm_denominator(finish_var(v, n, 0), eps);
  cpu::for_each_row_segment(rows, n, pool, [&](int64_t r, int64_t i0, int64_t i1) {
    run(x + r * n + i0, i1 - i0, mean[r], den[r], gamma ? gamma + i0 : nullptr, beta ? beta + i0 : nullptr,
        y + r * n + i0);
  });
  for (int64_t r = 0; r < rows; ++r) {
    if (mean_out) mean_out[r] = mean[r];
    if (rstd_out) rstd_out[r] = canonicalize(div(1.0f, den[r]));
  }
}

void rms_norm_cpu(const float* x, int64_t rows, int64_t n, const float* gamma, float eps, float* y,
                  float* rstd_out, ThreadPool& pool) {
  check_norm_args("rms_norm", x, rows, n, y);
  if (rows == 0) return;
  const RmsNormRunFn run = rms_norm_run();
  if (n >= 1 && n <= kFusedRowMax) {
    const cpu::ContiguousLeafFn square_leaf = cpu::best_contiguous_leaf<StepSquare>();
    for_each_row(rows, n, pool, [&](int64_t r) {
      float leaves[kFusedRowMax / kReduceLeaf];
      const float* xr = x + r * n;
      const float den = norm_denominator(finish_mean(cpu::row_total<StepSquare>(square_leaf, xr, n, 0.0f, leaves), n), eps);
      run(xr, n, den, gamma, y + r * n);
      if (rstd_out) rstd_out[r] = canonicalize(div(1.0f, den));
    });
    return;
  }
  const ReduceShape shape{rows, n, 1};
  std::vector<float> den(static_cast<size_t>(rows));
  cpu::reduce_totals<StepSquare>(x, shape, nullptr, den.data(), pool);
  for (auto& v : den) v = norm_denominator(finish_mean(v, n), eps);
  cpu::for_each_row_segment(rows, n, pool, [&](int64_t r, int64_t i0, int64_t i1) {
    run(x + r * n + i0, i1 - i0, den[r], gamma ? gamma + i0 : nullptr, y + r * n + i0);
  });
  if (rstd_out)
    for (int64_t r = 0; r < rows; ++r) rstd_out[r] = canonicalize(div(1.0f, den[r]));
}

}  // namespace bl
