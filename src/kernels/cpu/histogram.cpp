// histogram.cpp: CPU gradient histograms (see kernels/histogram.h).
#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/histogram.h"

namespace bl {

namespace {
constexpr int64_t kMinRowsPerTask = 8192;

void accumulate(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t begin, int64_t end,
                const int64_t* gq, const int64_t* hq, uint64_t* h) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t r = rows ? rows[i] : i;
    const uint8_t* b = bins + r * d;
    const uint64_t g = static_cast<uint64_t>(gq[r]), hv = static_cast<uint64_t>(hq[r]);
    for (int64_t f = 0; f < d; ++f) {
      uint64_t* cell = h + (f * kHistBins + b[f]) * kHistStats;
      cell[0] += g;
      cell[1] += hv;
      cell[2] += 1u;
    }
  }
}
}  // namespace

void histogram_cpu(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                   const int64_t* gq, const int64_t* hq, int64_t* hist, ThreadPool& pool) {
  const int64_t size = histogram_size(d);
  uint64_t* out = reinterpret_cast<uint64_t*>(hist);
  std::fill(out, out + size, 0u);
  const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(pool.threads(), n_rows / kMinRowsPerTask));
  if (tasks == 1) {
    accumulate(bins, d, rows, 0, n_rows, gq, hq, out);
    return;
  }
  std::vector<std::vector<uint64_t>> parts(static_cast<size_t>(tasks));
  pool.parallel_for(tasks, [&](int64_t t) {
    parts[t].assign(static_cast<size_t>(size), 0u);
    const int64_t begin = n_rows * t / tasks, end = n_rows * (t + 1) / tasks;
    accumulate(bins, d, rows, begin, end, gq, hq, parts[t].data());
  });
  const int64_t chunks = std::min<int64_t>(tasks, d);
  pool.parallel_for(chunks, [&](int64_t c) {
    const int64_t begin = size * c / chunks, end = size * (c + 1) / chunks;
    for (const auto& p : parts) {
      for (int64_t i = begin; i < end; ++i) out[i] += p[i];
    }
  });
}

void histogram_subtract(const int64_t* a, const int64_t* b, int64_t d, int64_t* out) {
  const int64_t size = histogram_size(d);
  for (int64_t i = 0; i < size; ++i) {
    out[i] = static_cast<int64_t>(static_cast<uint64_t>(a[i]) - static_cast<uint64_t>(b[i]));
  }
}

}  // namespace bl
