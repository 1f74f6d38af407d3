// CPU layer norm and RMS norm: row statistics through reduce_totals, then one elementwise pass.
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/norm.h"

namespace bl {
namespace {
void check_norm_args(const char* name, const float* x, int64_t rows, int64_t n, const float* y) {
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(rows * n == 0 || (x != nullptr && y != nullptr), name, ": input or output pointer is null");
}
}  // namespace

void layer_norm_cpu(const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta,
                    float eps, float* y, float* mean_out, float* rstd_out, ThreadPool& pool) {
  check_norm_args("layer_norm", x, rows, n, y);
  if (rows == 0) return;
  const ReduceShape shape{rows, n, 1};
  std::vector<float> mean(static_cast<size_t>(rows)), den(static_cast<size_t>(rows));
  cpu::reduce_totals<StepAdd>(x, shape, nullptr, mean.data(), pool);
  for (auto& v : mean) v = finish_mean(v, n);
  cpu::reduce_totals<StepCenteredSquare>(x, shape, mean.data(), den.data(), pool);
  for (auto& v : den) v = norm_denominator(finish_var(v, n, 0), eps);
  const bool has_gamma = gamma != nullptr, has_beta = beta != nullptr;
  cpu::for_each_row_segment(rows, n, pool, [&](int64_t r, int64_t i0, int64_t i1) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float mr = mean[r], dr = den[r];
    for (int64_t i = i0; i < i1; ++i)
      yr[i] = layer_norm_element(xr[i], mr, dr, has_gamma ? gamma[i] : 1.0f, has_beta ? beta[i] : 0.0f,
                                 has_gamma, has_beta);
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
  const ReduceShape shape{rows, n, 1};
  std::vector<float> den(static_cast<size_t>(rows));
  cpu::reduce_totals<StepSquare>(x, shape, nullptr, den.data(), pool);
  for (auto& v : den) v = norm_denominator(finish_mean(v, n), eps);
  const bool has_gamma = gamma != nullptr;
  cpu::for_each_row_segment(rows, n, pool, [&](int64_t r, int64_t i0, int64_t i1) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float dr = den[r];
    for (int64_t i = i0; i < i1; ++i) yr[i] = rms_norm_element(xr[i], dr, has_gamma ? gamma[i] : 1.0f, has_gamma);
  });
  if (rstd_out)
    for (int64_t r = 0; r < rows; ++r) rstd_out[r] = canonicalize(div(1.0f, den[r]));
}

}  // namespace bl
