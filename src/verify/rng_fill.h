// rng_fill.h: filling arrays from the contract's Philox streams, for the rng.* checks.
//
// The element rule (uniform_element / normal_element of src/contract/rng.h) is shared by the CPU
// loop and the CUDA kernel (src/verify/cuda/rng_fill.cu), so both must give the same bits.
#pragma once

#include <cstdint>

#include "contract/rng.h"

namespace bl::verify {

// Which distribution to fill with.
enum class RngKind : int { uniform01 = 0, uniform_ab = 1, normal = 2 };

// Element i of the fill (a, b: the uniform range; mean, stddev for normal as a, b).
BL_HD float rng_fill_element(RngKind kind, uint64_t seed, uint64_t stream, uint64_t i, float a,
                             float b) {
  if (kind == RngKind::uniform01) return uniform_element(seed, stream, i);
  if (kind == RngKind::uniform_ab) return uniform_element(seed, stream, i, a, b);
  return normal_element(seed, stream, i, a, b);
}

#if defined(BITLEARN_HAS_CUDA)
// out (a device pointer on the current device) gets elements [0, n). Synchronous; throws bl::Error.
void rng_fill_cuda(RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out,
                   int64_t n);
#endif

}  // namespace bl::verify
