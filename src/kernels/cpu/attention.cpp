// CPU attention: the reference row function run over (batch, head, query) rows, a fixed number of
// rows per task (a function of the shape only), each task with its own scratch. Equal to
// attention_reference bit for bit at any thread count.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"

namespace bl {

void attention_check_args(const AttentionArgs& a) {
  BL_CHECK(a.batch >= 0 && a.q_len >= 0 && a.head_dim >= 0 && a.kv_capacity >= 0, "attention: sizes ",
           "(batch ", a.batch, ", q_len ", a.q_len, ", head_dim ", a.head_dim, ", kv_capacity ",
           a.kv_capacity, ") must be non-negative");
  BL_CHECK(a.n_heads >= 1 && a.n_kv_heads >= 1 && a.n_heads % a.n_kv_heads == 0, "attention: n_heads ",
           a.n_heads, " must be a positive multiple of n_kv_heads ", a.n_kv_heads);
  BL_CHECK(a.window >= 0, "attention: window ", a.window, " must be >= 0");
}

void attention_reference(const AttentionArgs& a, const float* q, const float* k, const float* v,
                         const int64_t* q_pos, const int64_t* kv_len, float* out) {
  attention_check_args(a);
  std::vector<float> scratch(static_cast<size_t>(attention_row_scratch(a.kv_capacity)));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t t = 0; t < a.q_len; ++t)
      for (int64_t h = 0; h < a.n_heads; ++h)
        attention_row(a, q, k, v, q_pos, kv_len, out, b, t, h, scratch.data());
}

void attention_cpu(const AttentionArgs& a, const float* q, const float* k, const float* v,
                   const int64_t* q_pos, const int64_t* kv_len, float* out, ThreadPool& pool) {
  attention_check_args(a);
  const int64_t rows = a.batch * a.q_len * a.n_heads;
  if (rows == 0) return;
  // Rows per task from the work per row only (keys * head_dim), never from the thread count.
  const int64_t work = std::max<int64_t>(1, a.kv_capacity * std::max<int64_t>(1, a.head_dim));
  const int64_t per_task = std::max<int64_t>(1, (int64_t(1) << 15) / work);
  const int64_t tasks = (rows + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t task) {
    std::vector<float> scratch(static_cast<size_t>(attention_row_scratch(a.kv_capacity)));
    const int64_t end = std::min(rows, (task + 1) * per_task);
    for (int64_t r = task * per_task; r < end; ++r) {
      const int64_t h = r % a.n_heads;
      const int64_t t = (r / a.n_heads) % a.q_len;
      const int64_t b = r / (a.n_heads * a.q_len);
      attention_row(a, q, k, v, q_pos, kv_len, out, b, t, h, scratch.data());
    }
  });
}

}  // namespace bl
