// CPU cumsum on the block schedule of cumsum.h: blocks in parallel, the offset chain per sequence.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/cumsum.h"
#include "kernels/cumsum_check.h"

namespace bl {

void cumsum_cpu(const float* x, ReduceShape shape, float* y, ThreadPool& pool) {
  const int64_t outer = shape.outer, n = shape.n, inner = shape.inner;
  if (!cumsum_check_args(x, shape, y)) return;
  const int64_t blocks = cumsum_block_count(n);
  const int64_t jobs = outer * blocks;
  const int64_t per_task =
      std::max<int64_t>(1, cpu::kTaskElements / (std::min(n, kCumsumBlock) * inner));
  const int64_t tasks = (jobs + per_task - 1) / per_task;
  // totals[(o * blocks + b) * inner + j]: block totals, then (in place) block offsets.
  std::vector<float> totals(static_cast<size_t>(jobs * inner));

  // Pass 1: local prefixes of every block, written to y; the block totals.
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t end = std::min(jobs, (t + 1) * per_task);
    for (int64_t g = t * per_task; g < end; ++g) {
      const int64_t o = g / blocks, b = g % blocks;
      const int64_t start = b * kCumsumBlock, stop = std::min(n, start + kCumsumBlock);
      const float* xs = x + (o * n + start) * inner;
      float* ys = y + (o * n + start) * inner;
      for (int64_t j = 0; j < inner; ++j) ys[j] = xs[j];
      for (int64_t i = 1; i < stop - start; ++i)
        for (int64_t j = 0; j < inner; ++j) ys[i * inner + j] = add(ys[(i - 1) * inner + j], xs[i * inner + j]);
      for (int64_t j = 0; j < inner; ++j) totals[g * inner + j] = ys[(stop - start - 1) * inner + j];
    }
  });

  // Pass 2: the offset chain O_1 = T_0, O_b = O_{b-1} + T_{b-1}, stored at block b's slot.
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      float offset = 0.0f;
      float previous_total = totals[(o * blocks) * inner + j];
      for (int64_t b = 1; b < blocks; ++b) {
        const size_t slot = static_cast<size_t>((o * blocks + b) * inner + j);
        offset = b == 1 ? previous_total : add(offset, previous_total);
        previous_total = totals[slot];
        totals[slot] = offset;
      }
    }
  }

  // Pass 3: y = O_b + local for blocks b >= 1; canonical NaN everywhere.
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t end = std::min(jobs, (t + 1) * per_task);
    for (int64_t g = t * per_task; g < end; ++g) {
      const int64_t o = g / blocks, b = g % blocks;
      const int64_t start = b * kCumsumBlock, stop = std::min(n, start + kCumsumBlock);
      float* ys = y + (o * n + start) * inner;
      const float* off = totals.data() + g * inner;
      for (int64_t i = 0; i < stop - start; ++i)
        for (int64_t j = 0; j < inner; ++j)
          ys[i * inner + j] = canonicalize(b == 0 ? ys[i * inner + j] : add(off[j], ys[i * inner + j]));
    }
  });
}

}  // namespace bl
