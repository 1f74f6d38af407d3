// histogram_gathered.cpp: CPU gradient histograms from gathered pairs (see kernels/histogram.h).
//
// The sums are integers, so any cut of the work and any order gives the same bits; the choices
// below are for speed only. Tree growth lists a node's rows in ascending order, so the rows' bin
// bytes are read forward but with gaps: the prefetch a few rows ahead hides most of the misses
// once the bin matrix no longer fits in cache. Constant hessians (squared error) skip one of the
// three additions per cell and fill the hessian column as count * h_const at the end.
#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/histogram.h"

namespace bl {

namespace {

constexpr int64_t kMinRowsPerTask = 8192;
constexpr int64_t kPrefetchAhead = 16;  // rows

inline void prefetch_read(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Adds rows [begin, end) of the list, features [f0, f1), into h (kHistStats per cell; the hessian
// entry is left alone when kHasHessian is false).
template <bool kHasHessian>
void accumulate(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t begin, int64_t end, const int64_t* g,
                const int64_t* hv, int64_t f0, int64_t f1, uint64_t* h) {
  for (int64_t i = begin; i < end; ++i) {
    if (i + kPrefetchAhead < end) prefetch_read(bins + static_cast<int64_t>(rows[i + kPrefetchAhead]) * d + f0);
    const uint8_t* b = bins + static_cast<int64_t>(rows[i]) * d;
    const uint64_t gi = static_cast<uint64_t>(g[i]);
    const uint64_t hi = kHasHessian ? static_cast<uint64_t>(hv[i]) : 0u;
    for (int64_t f = f0; f < f1; ++f) {
      uint64_t* cell = h + (f * kHistBins + b[f]) * kHistStats;
      cell[0] += gi;
      if (kHasHessian) cell[1] += hi;
      cell[2] += 1u;
    }
  }
}

void accumulate_range(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t begin, int64_t end,
                      const int64_t* g, const int64_t* hv, int64_t f0, int64_t f1, uint64_t* h) {
  if (hv) accumulate<true>(bins, d, rows, begin, end, g, hv, f0, f1, h);
  else accumulate<false>(bins, d, rows, begin, end, g, hv, f0, f1, h);
}

// The hessian column of cells [begin, end) as count * h_const (modulo 2^64).
void fill_constant_hessian(uint64_t* h, int64_t begin, int64_t end, int64_t h_const) {
  const uint64_t c = static_cast<uint64_t>(h_const);
  for (int64_t cell = begin; cell < end; ++cell) h[cell * kHistStats + 1] = h[cell * kHistStats + 2] * c;
}

}  // namespace

void histogram_gathered_cpu(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                            const int64_t* g, const int64_t* hv, int64_t h_const, int64_t* hist, ThreadPool& pool) {
  const int64_t size = histogram_size(d);
  const int64_t cells = d * kHistBins;
  uint64_t* out = reinterpret_cast<uint64_t*>(hist);
  const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(pool.threads(), n_rows / kMinRowsPerTask));
  if (tasks == 1) {
    std::fill(out, out + size, 0u);
    accumulate_range(bins, d, rows, 0, n_rows, g, hv, 0, d, out);
    if (!hv) fill_constant_hessian(out, 0, cells, h_const);
    return;
  }
  if (d >= 2 * tasks) {
    // Feature ranges: each task owns its features' part of the histogram, so nothing is merged.
    pool.parallel_for(tasks, [&](int64_t t) {
      const int64_t f0 = d * t / tasks, f1 = d * (t + 1) / tasks;
      std::fill(out + f0 * kHistBins * kHistStats, out + f1 * kHistBins * kHistStats, 0u);
      accumulate_range(bins, d, rows, 0, n_rows, g, hv, f0, f1, out);
      if (!hv) fill_constant_hessian(out, f0 * kHistBins, f1 * kHistBins, h_const);
    });
    return;
  }
  // Row ranges: one private histogram per range, merged by integer addition.
  std::vector<std::vector<uint64_t>> parts(static_cast<size_t>(tasks));
  pool.parallel_for(tasks, [&](int64_t t) {
    parts[t].assign(static_cast<size_t>(size), 0u);
    const int64_t begin = n_rows * t / tasks, end = n_rows * (t + 1) / tasks;
    accumulate_range(bins, d, rows, begin, end, g, hv, 0, d, parts[t].data());
  });
  const int64_t chunks = std::min<int64_t>(tasks, d);
  pool.parallel_for(chunks, [&](int64_t c) {
    const int64_t begin = cells * c / chunks, end = cells * (c + 1) / chunks;
    std::fill(out + begin * kHistStats, out + end * kHistStats, 0u);
    for (const auto& p : parts) {
      for (int64_t i = begin * kHistStats; i < end * kHistStats; ++i) out[i] += p[i];
    }
    if (!hv) fill_constant_hessian(out, begin, end, h_const);
  });
}

}  // namespace bl
