// centered_gram.cpp: driver and portable leaf of centered_gram (see centered_gram.h).
//
// Leaves are computed in rounds of kRoundLeaves parallel tasks (one leaf each, its own partial
// slot), then folded into the output in leaf order on the calling thread; the task split depends
// on n only.
#include "ml/decomposition/centered_gram.h"

#include <algorithm>
#include <vector>

#include "contract/arith.h"
#include "contract/schedule.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {

constexpr int64_t kRoundLeaves = 64;

void leaf_portable(const float* x, int64_t kc, int64_t d, const float* mean, float* scratch,
                   float* partial) {
  const int64_t pitch = centered_gram_pitch(d);
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t j = 0; j < d; ++j) scratch[k * pitch + j] = bl::sub(x[k * d + j], mean[j]);
  for (int64_t i = 0; i < d; ++i) {
    for (int64_t j = i; j < d; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < kc; ++k)
        acc = bl::fma(scratch[k * pitch + i], scratch[k * pitch + j], acc);
      partial[i * pitch + j] = acc;
    }
  }
}

}  // namespace

void centered_gram_cpu(const float* x, int64_t n, int64_t d, const float* mean, float* out,
                       ThreadPool* pool, bool use_simd) {
  if (d <= 0) return;
  if (n <= 0) {
    std::fill(out, out + d * d, 0.0f);
    return;
  }
  ThreadPool& workers = pool ? *pool : default_pool();
  const bool simd = use_simd && cpu_has_avx2_fma();
  const int64_t pitch = centered_gram_pitch(d);
  const int64_t leaves = gemm_k_leaf_count(n);
  const int64_t slot = pitch * pitch;
  std::vector<float> partials(static_cast<size_t>(std::min(leaves, kRoundLeaves) * slot));
  for (int64_t first = 0; first < leaves; first += kRoundLeaves) {
    const int64_t count = std::min(kRoundLeaves, leaves - first);
    workers.parallel_for(count, [&](int64_t t) {
      const int64_t k0 = (first + t) * kGemmKLeaf;
      const int64_t kc = std::min(kGemmKLeaf, n - k0);
      std::vector<float> scratch(static_cast<size_t>(kc * pitch));
      float* partial = partials.data() + t * slot;
      if (simd)
        centered_gram_leaf_avx2(x + k0 * d, kc, d, mean, scratch.data(), partial);
      else
        leaf_portable(x + k0 * d, kc, d, mean, scratch.data(), partial);
    });
    for (int64_t t = 0; t < count; ++t) {
      const float* partial = partials.data() + t * slot;
      for (int64_t i = 0; i < d; ++i)
        for (int64_t j = i; j < d; ++j) {
          const float v = partial[i * pitch + j];
          out[i * d + j] = (first + t == 0) ? v : bl::add(out[i * d + j], v);
        }
    }
  }
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = i; j < d; ++j) {
      const float v = bl::canonicalize(out[i * d + j]);
      out[i * d + j] = v;
      out[j * d + i] = v;
    }
}

}  // namespace bl::ml
