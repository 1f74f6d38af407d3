// cumsum.h: inclusive cumulative sum along the middle axis of a contiguous (outer, n, inner) array.
//
// Schedule (a pure function of n; the reference below is the specification). For one sequence
// x[0..n), cut into blocks of kCumsumBlock consecutive elements (the last may be short):
//   local_i = x_i at the first element of a block, else local_{i-1} + x_i      (ascending i)
//   T_b     = local at the last element of block b (the block total)
//   O_1     = T_0;  O_b = O_{b-1} + T_{b-1} for b >= 2                          (ascending b)
//   y_i     = local_i in block 0;  y_i = O_b + local_i in block b >= 1
// Every stored NaN is canonical. The blocks can be summed in parallel; only the chain of block
// offsets (n / kCumsumBlock additions) is sequential. y may alias x.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl {

class ThreadPool;

constexpr int64_t kCumsumBlock = 512;

BL_HD int64_t cumsum_block_count(int64_t n) { return (n + kCumsumBlock - 1) / kCumsumBlock; }

// Reference: shape as in reduce.h (element i of sequence (o, j) at x[(o * n + i) * inner + j]).
inline void cumsum_reference(const float* x, ReduceShape shape, float* y) {
  const int64_t n = shape.n, inner = shape.inner;
  std::vector<float> local(static_cast<size_t>(n));
  for (int64_t o = 0; o < shape.outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      for (int64_t i = 0; i < n; ++i) {
        float v = x[base + i * inner];
        local[i] = (i % kCumsumBlock == 0) ? v : add(local[i - 1], v);
      }
      float offset = 0.0f;
      for (int64_t b = 0; b < cumsum_block_count(n); ++b) {
        const int64_t start = b * kCumsumBlock;
        const int64_t stop = start + kCumsumBlock < n ? start + kCumsumBlock : n;
        if (b == 1) offset = local[start - 1];
        if (b >= 2) offset = add(offset, local[start - 1]);
        for (int64_t i = start; i < stop; ++i)
          y[base + i * inner] = canonicalize(b == 0 ? local[i] : add(offset, local[i]));
      }
    }
  }
}

// CPU: threaded over (sequence, block) jobs; tasks depend on the shape only.
void cumsum_cpu(const float* x, ReduceShape shape, float* y, ThreadPool& pool);

// CUDA: device pointers; default stream, returns when done.
void cumsum_cuda(const float* x, ReduceShape shape, float* y, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
