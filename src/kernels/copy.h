// copy.h: strided copies (contiguous(), copy_into, concat, slices): the reference.
//
// Copies move bits: an element type is just its size (1, 4 or 8 bytes), so NaN payloads survive.
#pragma once

#include "kernels/strided.h"

namespace bl {

// REFERENCE: dst[offset(dst_view, i)] = src[offset(src_view, i)] for i in [0, n), T an unsigned
// integer type of the element's size.
template <typename T>
void strided_copy_reference(const T* src, const StridedView& src_view, T* dst,
                            const StridedView& dst_view, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[strided_offset(dst_view, i)] = src[strided_offset(src_view, i)];
}

}  // namespace bl
