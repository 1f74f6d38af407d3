// logistic_gradients.cpp: the logistic loss's gradient pass (see logistic_gradients.h).
#include "ml/boosting/logistic_gradients.h"

#include <algorithm>

#include "contract/arith.h"
#include "contract/math.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {
constexpr int64_t kChunk = 4096;  // rows per pool task (fixed; elementwise work, any cut is the same)

}  // namespace

void sigmoid_bits(const float* x, float* out, int64_t n) {
  if (cpu_has_avx2_fma()) {
    sigmoid_f64_avx2(x, out, n, 44);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = canonicalize(sigmoid(x[i]));
}

void logistic_gradients(const float* raw, const int32_t* y_class, int64_t n, float min_hessian, float* grad,
                        float* hess, ThreadPool& pool) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const bool avx2 = cpu_has_avx2_fma();
  pool.parallel_for(chunks, [&](int64_t c) {
    const int64_t begin = c * kChunk, len = std::min(n, begin + kChunk) - begin;
    if (avx2) {
      logistic_gradients_avx2(raw + begin, y_class + begin, len, min_hessian, grad + begin, hess + begin);
      return;
    }
    for (int64_t i = begin; i < begin + len; ++i) {
      const float q = canonicalize(sigmoid(raw[i]));
      grad[i] = sub(q, y_class[i] == 1 ? 1.0f : 0.0f);
      hess[i] = max(mul(q, sub(1.0f, q)), min_hessian);
    }
  });
}

}  // namespace bl::ml
