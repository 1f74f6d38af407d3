// softmax.h: softmax and log-softmax along the last axis of a contiguous (rows, n) array.
//
// For each row x[0..n) (the scalar reference below is the specification):
//   m    = the maximum of the row by bl::max (NaN propagates; any order gives the same value)
//   s    = the sum of e_i = bl::exp(x_i - m) on the sum schedule of schedule.h (lane = lane + e_i)
//   softmax:      y_i = e_i / s                          (one division)
//   log-softmax:  y_i = (x_i - m) - bl::log(s)           (two subtractions)
// Every stored NaN is canonical. A row holding NaN, or +inf, or only -inf gives NaN everywhere (as
// x - m is then NaN). Rows are independent, so a row gives the same bits alone or inside any batch.
// y may alias x.
#pragma once

#include <cstdint>

#include "contract/math.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl {

class ThreadPool;

// Lane step of the softmax denominator: lane = lane + exp(x - c), c the row maximum.
struct StepExpShift {
  BL_HD static float init() { return 0.0f; }
  BL_HD static float apply(float lane, float x, float c) { return add(lane, exp(sub(x, c))); }
  BL_HD static float combine(float a, float b) { return add(a, b); }
};

// The output element of softmax / log-softmax from x_i and the row's m and s (or log s).
BL_HD float softmax_element(float x, float m, float s) { return canonicalize(div(exp(sub(x, m)), s)); }
BL_HD float log_softmax_element(float x, float m, float log_s) {
  return canonicalize(sub(sub(x, m), log_s));
}

// Reference: softmax (log_form false) or log-softmax (true) of every row.
inline void softmax_reference(const float* x, int64_t rows, int64_t n, float* y, bool log_form) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    if (n == 0) continue;
    float m = reference_reduce_one<StepMax>(xr, n, 1, 0.0f);
    float s = reference_reduce_one<StepExpShift>(xr, n, 1, m);
    float log_s = log(s);
    for (int64_t i = 0; i < n; ++i)
      yr[i] = log_form ? log_softmax_element(xr[i], m, log_s) : softmax_element(xr[i], m, s);
  }
}

// CPU: threaded over rows and, for long rows, over leaves (tasks depend on the shape only).
void softmax_cpu(const float* x, int64_t rows, int64_t n, float* y, bool log_form, ThreadPool& pool);

// CUDA: x and y are device pointers; default stream, returns when done.
void softmax_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                  const LaunchConfig& config = LaunchConfig());
// CUDA, rows of at most 8192 elements kept on chip: one kernel reads each row once and writes it
// once. Same bits as softmax_cuda, which uses it for such rows.
void softmax_rows_on_chip_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                               const LaunchConfig& config = LaunchConfig());

}  // namespace bl
