// CPU softmax / log-softmax: row maximum and denominator through reduce_totals, then one pass.
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/softmax.h"

namespace bl {

void softmax_cpu(const float* x, int64_t rows, int64_t n, float* y, bool log_form, ThreadPool& pool) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  const ReduceShape shape{rows, n, 1};
  std::vector<float> m(static_cast<size_t>(rows)), s(static_cast<size_t>(rows));
  cpu::reduce_totals<StepMax>(x, shape, nullptr, m.data(), pool);
  cpu::reduce_totals<StepExpShift>(x, shape, m.data(), s.data(), pool);
  if (log_form)
    for (auto& v : s) v = log(v);
  cpu::for_each_row_segment(rows, n, pool, [&](int64_t r, int64_t i0, int64_t i1) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float mr = m[r], sr = s[r];
    if (log_form)
      for (int64_t i = i0; i < i1; ++i) yr[i] = log_softmax_element(xr[i], mr, sr);
    else
      for (int64_t i = i0; i < i1; ++i) yr[i] = softmax_element(xr[i], mr, sr);
  });
}

}  // namespace bl
