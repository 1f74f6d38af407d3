// histogram.h: gradient histograms of histogram gradient boosting.
//
// For the listed rows r (rows[0..n_rows), or 0..n_rows-1 when rows is null) and every feature f of
// a row-major bin matrix bins[r * d + f] (one byte per value, kHistBins bins), the histogram holds
// per (f, b) three int64 sums: of the fixed-point gradients gq[r], of the fixed-point hessians hq[r]
// and of 1 (the row count), at hist[(f * kHistBins + b) * 3 + {0, 1, 2}].
//
// The sums are integers added modulo 2^64 (the caller scales values so that no true sum overflows),
// and integer addition is associative: the result is the same for every order, partition, thread
// count and launch shape. This is what makes integer atomics on the GPU safe, where float atomics
// would not be. The reference below is the specification.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/launch.h"

namespace bl {

class ThreadPool;

constexpr int64_t kHistBins = 256;
constexpr int64_t kHistStats = 3;  // gradient, hessian, count

// Number of int64 entries of a histogram over d features.
inline int64_t histogram_size(int64_t d) { return d * kHistBins * kHistStats; }

// Reference: clears hist, then adds every listed row in ascending list order.
inline void histogram_reference(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                                const int64_t* gq, const int64_t* hq, int64_t* hist) {
  std::memset(hist, 0, static_cast<size_t>(histogram_size(d)) * sizeof(int64_t));
  uint64_t* h = reinterpret_cast<uint64_t*>(hist);
  for (int64_t i = 0; i < n_rows; ++i) {
    const int64_t r = rows ? rows[i] : i;
    for (int64_t f = 0; f < d; ++f) {
      uint64_t* cell = h + (f * kHistBins + bins[r * d + f]) * kHistStats;
      cell[0] += static_cast<uint64_t>(gq[r]);
      cell[1] += static_cast<uint64_t>(hq[r]);
      cell[2] += 1u;
    }
  }
}

// Gathered form (reference): the same histogram, but the fixed-point pair of the i-th listed row
// rows[i] is passed in list order as g[i], h[i] instead of gq[rows[i]], hq[rows[i]]. h == nullptr
// means every listed row's hessian equals h_const; its sums are then count * h_const (mod 2^64),
// the same integers the additions give.
inline void histogram_gathered_reference(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                                         const int64_t* g, const int64_t* h, int64_t h_const, int64_t* hist) {
  std::memset(hist, 0, static_cast<size_t>(histogram_size(d)) * sizeof(int64_t));
  uint64_t* out = reinterpret_cast<uint64_t*>(hist);
  for (int64_t i = 0; i < n_rows; ++i) {
    const int64_t r = rows[i];
    for (int64_t f = 0; f < d; ++f) {
      uint64_t* cell = out + (f * kHistBins + bins[r * d + f]) * kHistStats;
      cell[0] += static_cast<uint64_t>(g[i]);
      cell[1] += static_cast<uint64_t>(h ? h[i] : h_const);
      cell[2] += 1u;
    }
  }
}

// CPU: the listed rows cut into contiguous ranges, one private histogram per range, merged by
// integer addition (any cut gives the same bits).
void histogram_cpu(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                   const int64_t* gq, const int64_t* hq, int64_t* hist, ThreadPool& pool);

// CPU, gathered form (see histogram_gathered_reference): the rows' bin bytes are prefetched a few
// rows ahead, the pairs read sequentially; the work is cut by feature ranges (no merge) when there
// are enough features, else by row ranges as histogram_cpu. rows must not be null.
void histogram_gathered_cpu(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                            const int64_t* g, const int64_t* h, int64_t h_const, int64_t* hist, ThreadPool& pool);

// out = a - b entry by entry (modulo 2^64): the sibling histogram from its parent's.
void histogram_subtract(const int64_t* a, const int64_t* b, int64_t d, int64_t* out);

// CUDA: device pointers (rows may be null), hist on the device; per block a shared-memory
// histogram of up to 8 features, then 64-bit integer atomics into global memory. Default stream,
// returns when done.
void histogram_cuda(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                    const int64_t* gq, const int64_t* hq, int64_t* hist,
                    const LaunchConfig& config = LaunchConfig());

}  // namespace bl
