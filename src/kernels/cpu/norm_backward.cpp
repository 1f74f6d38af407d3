// CPU norm backward (kernels/norm_backward.h): the reference row function, and the CPU path that
// runs the same row function with the vectorized sum-schedule leaves on whole rows per task.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/norm_backward.h"

namespace bl {
namespace {

// Scratch of one row: the values being summed and the leaf values.
struct RowScratch {
  std::vector<float> t, leaves;
  explicit RowScratch(int64_t n)
      : t(static_cast<size_t>(n)), leaves(static_cast<size_t>(std::max<int64_t>(1, reduce_leaf_count(n)))) {}
};

// The sum schedule over t[0..n) through leaf (a contiguous leaf function of the sum step).
float row_sum(cpu::ContiguousLeafFn leaf, RowScratch& s, int64_t n) {
  const int64_t leaves = reduce_leaf_count(n);
  for (int64_t l = 0; l < leaves; ++l) {
    const int64_t start = l * kReduceLeaf;
    s.leaves[static_cast<size_t>(l)] = leaf(s.t.data() + start, std::min<int64_t>(kReduceLeaf, n - start), 0.0f);
  }
  return leaf_tree<StepAdd>(s.leaves.data(), leaves);
}

void backward_row(const NormBackwardArgs& a, int64_t r, const float* x, const float* g, const float* w, float* dx,
                  float* gx, cpu::ContiguousLeafFn leaf, RowScratch& s) {
  const int64_t n = a.n;
  const float* xr = x + r * n;
  const float* gr = g + r * n;
  float* dxr = dx + r * n;
  float* gxr = gx + r * n;
  float mu = 0.0f;
  if (a.layer_norm) {
    std::copy(xr, xr + n, s.t.begin());
    mu = finish_mean(row_sum(leaf, s, n), n);
  }
  auto centered = [&](int64_t i) { return a.layer_norm ? canonicalize(sub(xr[i], mu)) : xr[i]; };
  for (int64_t i = 0; i < n; ++i) {
    const float c = centered(i);
    s.t[static_cast<size_t>(i)] = canonicalize(mul(c, c));
  }
  const float rs = norm_backward_rstd(finish_mean(row_sum(leaf, s, n), n), a.eps);
  // gx holds xhat and dx holds d until the last pass.
  for (int64_t i = 0; i < n; ++i) {
    gxr[i] = canonicalize(mul(centered(i), rs));
    dxr[i] = canonicalize(mul(gr[i], w[i]));
    s.t[static_cast<size_t>(i)] = canonicalize(mul(dxr[i], gxr[i]));
  }
  const float mp = finish_mean(row_sum(leaf, s, n), n);
  float md = 0.0f;
  if (a.layer_norm) {
    std::copy(dxr, dxr + n, s.t.begin());
    md = finish_mean(row_sum(leaf, s, n), n);
  }
  for (int64_t i = 0; i < n; ++i) {
    const float xhat = gxr[i];
    dxr[i] = norm_backward_dx(dxr[i], xhat, rs, mp, md, a.layer_norm);
    gxr[i] = canonicalize(mul(gr[i], xhat));
  }
}

}  // namespace

void norm_backward_check_args(const NormBackwardArgs& a) {
  BL_CHECK(a.rows >= 0 && a.n >= 0, "norm_backward: rows ", a.rows, " and width ", a.n, " must be >= 0");
  BL_CHECK(a.n <= kNormBackwardMaxWidth, "norm_backward: rows of ", a.n, " values exceed the limit of ",
           kNormBackwardMaxWidth);
}

void norm_backward_reference(const NormBackwardArgs& a, const float* x, const float* g, const float* w, float* dx,
                             float* gx) {
  norm_backward_check_args(a);
  if (a.n == 0) return;
  RowScratch s(a.n);
  for (int64_t r = 0; r < a.rows; ++r) backward_row(a, r, x, g, w, dx, gx, &cpu::scalar_contiguous_leaf<StepAdd>, s);
}

void norm_backward_cpu(const NormBackwardArgs& a, const float* x, const float* g, const float* w, float* dx,
                       float* gx, ThreadPool& pool) {
  norm_backward_check_args(a);
  if (a.rows == 0 || a.n == 0) return;
  const cpu::ContiguousLeafFn leaf = cpu::best_contiguous_leaf<StepAdd>();
  const int64_t rows_per_task = std::max<int64_t>(1, cpu::kTaskElements / a.n);
  const int64_t tasks = (a.rows + rows_per_task - 1) / rows_per_task;
  pool.parallel_for(tasks, [&](int64_t t) {
    RowScratch s(a.n);
    const int64_t end = std::min(a.rows, (t + 1) * rows_per_task);
    for (int64_t r = t * rows_per_task; r < end; ++r) backward_row(a, r, x, g, w, dx, gx, leaf, s);
  });
}

}  // namespace bl
