// CPU attention backward (kernels/attention_backward.h): the reference row function, and the CPU
// path made of the vectorized softmax and sum kernels, whose bits are the reference's at every
// thread count and ISA.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/attention_backward.h"

namespace bl {
namespace {

// One row; x and t are n floats of scratch each. p may alias s and ds may alias dp.
void backward_row(const AttentionBackwardArgs& a, int64_t r, const float* s, const float* dp, float* p, float* ds,
                  std::vector<float>& x, std::vector<float>& t) {
  const int64_t n = a.n, pos = a.offset + r % a.period;
  const float* sr = s + r * n;
  const float* dr = dp + r * n;
  float* pr = p + r * n;
  float* gr = ds + r * n;
  for (int64_t j = 0; j < n; ++j) x[j] = attention_backward_logit(sr[j], a.scale, attention_backward_masked(pos, j, a.window));
  const float m = reference_reduce_one<StepMax>(x.data(), n, 1, 0.0f);
  const float sum = reference_reduce_one<StepExpShift>(x.data(), n, 1, m);
  for (int64_t j = 0; j < n; ++j) {
    const float pj = softmax_element(x[j], m, sum);
    x[j] = pj;
    t[j] = canonicalize(mul(dr[j], pj));
  }
  const float c = canonicalize(reference_reduce_one<StepAdd>(t.data(), n, 1, 0.0f));
  for (int64_t j = 0; j < n; ++j) {
    const float dpj = dr[j];
    pr[j] = x[j];
    gr[j] = attention_backward_grad(x[j], dpj, c, a.scale);
  }
}

}  // namespace

void attention_backward_check_args(const AttentionBackwardArgs& a) {
  BL_CHECK(a.rows >= 0 && a.n >= 0, "attention_backward: rows ", a.rows, " and keys ", a.n, " must be >= 0");
  BL_CHECK(a.n <= kAttentionBackwardMaxKeys, "attention_backward: ", a.n, " keys per row exceed the limit of ",
           kAttentionBackwardMaxKeys);
  BL_CHECK(a.period >= 1 && a.offset >= 0, "attention_backward: period ", a.period, " must be >= 1 and offset ",
           a.offset, " >= 0");
  BL_CHECK(a.window >= 0, "attention_backward: window ", a.window, " must be >= 0");
}

void attention_backward_reference(const AttentionBackwardArgs& a, const float* s, const float* dp, float* p,
                                  float* ds) {
  attention_backward_check_args(a);
  std::vector<float> x(static_cast<size_t>(a.n)), t(static_cast<size_t>(a.n));
  for (int64_t r = 0; r < a.rows; ++r) backward_row(a, r, s, dp, p, ds, x, t);
}

void attention_backward_cpu(const AttentionBackwardArgs& a, const float* s, const float* dp, float* p, float* ds,
                            ThreadPool& pool) {
  attention_backward_check_args(a);
  if (a.rows == 0 || a.n == 0) return;
  // The steps of the definition, each over all rows, with the vectorized softmax and sum kernels
  // for the two reductions (their bits are the reference's). Tasks of rows fixed by the row length.
  const int64_t n = a.n;
  const int64_t per_task = std::max<int64_t>(1, (int64_t(1) << 14) / n);
  const int64_t tasks = (a.rows + per_task - 1) / per_task;
  auto over_rows = [&](auto body) {
    pool.parallel_for(tasks, [&](int64_t task) {
      const int64_t end = std::min(a.rows, (task + 1) * per_task);
      for (int64_t r = task * per_task; r < end; ++r) body(r);
    });
  };
  over_rows([&](int64_t r) {
    const int64_t pos = a.offset + r % a.period;
    for (int64_t j = 0; j < n; ++j)
      p[r * n + j] = attention_backward_logit(s[r * n + j], a.scale, attention_backward_masked(pos, j, a.window));
  });
  softmax_cpu(p, a.rows, n, p, false, pool);
  std::vector<float> t(static_cast<size_t>(a.rows * n)), c(static_cast<size_t>(a.rows));
  over_rows([&](int64_t r) {
    for (int64_t j = 0; j < n; ++j) t[r * n + j] = canonicalize(mul(dp[r * n + j], p[r * n + j]));
  });
  reduce_cpu(ReduceOp::sum, t.data(), ReduceShape{a.rows, n, 1}, c.data(), 0, pool);
  over_rows([&](int64_t r) {
    for (int64_t j = 0; j < n; ++j) ds[r * n + j] = attention_backward_grad(p[r * n + j], dp[r * n + j], c[r], a.scale);
  });
}

}  // namespace bl
