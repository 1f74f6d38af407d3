// CPU softmax / log-softmax. Row maximum through reduce_totals; then, per (row, leaf) job, the
// shifted values x - m go to a task buffer, the exponentials are computed by the contract math map
// (AVX2 where the CPU has it; same bits as bl::exp) and summed by the leaf function of the sum
// schedule. Softmax keeps the exponentials in y and divides them in place afterwards, so each
// exponential is computed once. Results equal softmax_reference bit for bit.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/math_map.h"
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

  const bool avx2 = cpu::use_avx2();
  const auto exp_chunk = cpu::use_avx512() ? &math_map_chunk_avx512
                         : avx2           ? &math_map_chunk_avx2
                                          : &math_map_chunk_baseline;
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

}  // namespace bl
