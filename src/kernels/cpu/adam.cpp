// CPU Adam update (kernels/adam.h): the element function over fixed blocks of elements.
#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/adam.h"

namespace bl {

void adam_reference(const AdamScalars& s, const float* p, const float* m, const float* v, const float* g,
                    float* p_out, float* m_out, float* v_out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) adam_element(s, p[i], m[i], v[i], g[i], p_out + i, m_out + i, v_out + i);
}

void adam_cpu(const AdamScalars& s, const float* p, const float* m, const float* v, const float* g, float* p_out,
              float* m_out, float* v_out, int64_t n, ThreadPool& pool) {
  constexpr int64_t kBlock = int64_t(1) << 16;  // elements per task: fixed, so any thread count
  const int64_t tasks = (n + kBlock - 1) / kBlock;
  if (tasks <= 1) {
    adam_reference(s, p, m, v, g, p_out, m_out, v_out, n);
    return;
  }
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t b = t * kBlock, e = std::min(n, b + kBlock);
    adam_reference(s, p + b, m + b, v + b, g + b, p_out + b, m_out + b, v_out + b, e - b);
  });
}

}  // namespace bl
