// rng_fill.h: filling arrays from the contract's Philox streams (the rng.* checks of the verifier).
//
// The element rule (uniform_element / normal_element of src/contract/rng.h) is the reference; the
// CPU loop (src/kernels/cpu/rng_fill.cpp) and the CUDA kernel (src/kernels/cuda/rng_fill.cu) both
// evaluate it per element, so every backend gives the same bits whatever the partition.
#pragma once

#include <cstdint>

#include "contract/rng.h"

namespace bl {

class ThreadPool;
struct LaunchConfig;

// Which distribution to fill with.
enum class RngKind : int { uniform01 = 0, uniform_ab = 1, normal = 2 };

// Element i of the fill (a, b: the uniform range; mean, stddev for normal as a, b).
BL_HD float rng_fill_element(RngKind kind, uint64_t seed, uint64_t stream, uint64_t i, float a,
                             float b) {
  if (kind == RngKind::uniform01) return uniform_element(seed, stream, i);
  if (kind == RngKind::uniform_ab) return uniform_element(seed, stream, i, a, b);
  return normal_element(seed, stream, i, a, b);
}

// Elements per CPU task: a function of n only.
constexpr int64_t kRngFillChunk = int64_t(1) << 16;

// out[i] = rng_fill_element(kind, seed, stream, i, a, b) for i < n, on pool (host memory).
void rng_fill_cpu(RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out, int64_t n,
                  ThreadPool& pool);

// The same on the current CUDA device (out a device pointer). Synchronous; throws bl::Error.
void rng_fill_cuda(RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out, int64_t n,
                   const LaunchConfig& config);

}  // namespace bl
