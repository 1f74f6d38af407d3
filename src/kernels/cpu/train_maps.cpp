// CPU training maps (kernels/train_maps.h): the element functions over blocks of elements (or
// rows) fixed by the size, so the thread count never changes which function computes a value.
#include <algorithm>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/train_maps.h"

namespace bl {
namespace {

void rope_rows(const RopeArgs& a, int64_t r0, int64_t r1, const float* x, const float* cos, const float* sin,
               float* y) {
  const int64_t D = a.head_dim, width = a.heads * D;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t h = 0; h < a.heads; ++h)
      for (int64_t i = 0; i < D; ++i)
        y[r * width + h * D + i] = rope_element(x + r * width, cos + r * D, sin + r * D, h, i, D, a.backward);
}

// Calls body(begin, end) over [0, count) in blocks of about kTaskElements / per_item items.
template <class Body>
void for_blocks(int64_t count, int64_t per_item, ThreadPool& pool, const Body& body) {
  const int64_t per_task = std::max<int64_t>(1, cpu::kTaskElements / std::max<int64_t>(1, per_item));
  const int64_t tasks = (count + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t t) { body(t * per_task, std::min(count, (t + 1) * per_task)); });
}

}  // namespace

void rope_check_args(const RopeArgs& a) {
  BL_CHECK(a.rows >= 0 && a.heads >= 0 && a.head_dim >= 0, "rope: rows ", a.rows, ", heads ", a.heads,
           " and head_dim ", a.head_dim, " must be >= 0");
  BL_CHECK(a.head_dim % 2 == 0, "rope: head_dim ", a.head_dim, " must be even");
}

void rope_reference(const RopeArgs& a, const float* x, const float* cos, const float* sin, float* y) {
  rope_check_args(a);
  rope_rows(a, 0, a.rows, x, cos, sin, y);
}

void rope_cpu(const RopeArgs& a, const float* x, const float* cos, const float* sin, float* y, ThreadPool& pool) {
  rope_check_args(a);
  if (a.rows == 0 || a.heads == 0 || a.head_dim == 0) return;
  for_blocks(a.rows, a.heads * a.head_dim, pool,
             [&](int64_t r0, int64_t r1) { rope_rows(a, r0, r1, x, cos, sin, y); });
}

void train_map_reference(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                         float* out1) {
  BL_CHECK(n >= 0, "train_map: ", n, " elements");
  for (int64_t e = 0; e < n; ++e) train_map_element(op, e, in0, in1, in2, out0, out1);
}

void train_map_cpu(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                   float* out1, ThreadPool& pool) {
  BL_CHECK(n >= 0, "train_map: ", n, " elements");
  for_blocks(n, 1, pool, [&](int64_t e0, int64_t e1) {
    for (int64_t e = e0; e < e1; ++e) train_map_element(op, e, in0, in1, in2, out0, out1);
  });
}

}  // namespace bl
