// strided.h: addressing of strided, broadcast operands in kernels (CPU and CUDA).
//
// An op's output is contiguous in row-major order over `shape`; each input is described by its
// strides over that same shape (0 where it is broadcast). Element `linear` of the output reads the
// input at strided_offset(view, linear). Dimensions are coalesced on the host first, so most
// operands reach the kernel with ndim 1.
#pragma once

#include "contract/compat.h"

namespace bl {

// Most dimensions a kernel operand may have after coalescing.
constexpr int kMaxDims = 8;

struct StridedView {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};  // in elements
};

// Element offset (in elements) of row-major element `linear` of view.shape.
BL_HD int64_t strided_offset(const StridedView& view, int64_t linear) {
  int64_t offset = 0;
  for (int d = view.ndim - 1; d >= 0; --d) {
    int64_t extent = view.shape[d];
    int64_t i = linear % extent;
    linear /= extent;
    offset += i * view.strides[d];
  }
  return offset;
}

// True when view reads element i at offset i (contiguous, no broadcast).
BL_HD bool strided_is_identity(const StridedView& view) {
  int64_t expected = 1;
  for (int d = view.ndim - 1; d >= 0; --d) {
    if (view.shape[d] != 1 && view.strides[d] != expected) return false;
    expected *= view.shape[d];
  }
  return true;
}

}  // namespace bl
