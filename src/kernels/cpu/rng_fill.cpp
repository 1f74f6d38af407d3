// rng_fill.cpp: the CPU fill of kernels/rng_fill.h, chunks of kRngFillChunk elements per task.
#include "kernels/rng_fill.h"

#include "core/thread_pool.h"

namespace bl {

void rng_fill_cpu(RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out, int64_t n,
                  ThreadPool& pool) {
  if (n <= 0) return;
  const int64_t tasks = (n + kRngFillChunk - 1) / kRngFillChunk;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t end = (t + 1) * kRngFillChunk < n ? (t + 1) * kRngFillChunk : n;
    for (int64_t i = t * kRngFillChunk; i < end; ++i)
      out[i] = rng_fill_element(kind, seed, stream, static_cast<uint64_t>(i), a, b);
  });
}

}  // namespace bl
