// im2col.h: the patch matrix of a 2-d convolution or pooling window over a channels-last batch.
//
// x is [N, H, W, C] (contiguous). Row m = (b * OH + oy) * OW + ox of the output [N * OH * OW,
// KH * KW, C] holds, at window position p = ky * KW + kx, the C channels of input pixel
// (oy * SH - PH + ky * DH, ox * SW - PW + kx * DW) of image b, or pad_value where that pixel lies
// outside the image. Every element is a bit copy (no arithmetic), so all backends agree trivially;
// the reference below is the specification.
#pragma once

#include <cstdint>
#include <cstring>

#include "contract/compat.h"
#include "kernels/launch.h"

namespace bl {

class ThreadPool;

struct Im2colShape {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  BL_HD int64_t out_h() const { return (h + 2 * pad_h - dilation_h * (kernel_h - 1) - 1) / stride_h + 1; }
  BL_HD int64_t out_w() const { return (w + 2 * pad_w - dilation_w * (kernel_w - 1) - 1) / stride_w + 1; }
  BL_HD int64_t rows() const { return n * out_h() * out_w(); }
  BL_HD int64_t out_numel() const { return rows() * kernel_h * kernel_w * c; }
};

// The input offset (pixel index times C) of window position p of row m, or -1 for padding.
BL_HD int64_t im2col_source(const Im2colShape& s, int64_t m, int64_t p) {
  const int64_t ow = s.out_w(), oh = s.out_h();
  const int64_t ox = m % ow, oy = (m / ow) % oh, b = m / (ow * oh);
  const int64_t ky = p / s.kernel_w, kx = p % s.kernel_w;
  const int64_t iy = oy * s.stride_h - s.pad_h + ky * s.dilation_h;
  const int64_t ix = ox * s.stride_w - s.pad_w + kx * s.dilation_w;
  if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) return -1;
  return ((b * s.h + iy) * s.w + ix) * s.c;
}

inline void im2col_reference(const float* x, const Im2colShape& s, float pad_value, float* out) {
  const int64_t kk = s.kernel_h * s.kernel_w;
  for (int64_t m = 0; m < s.rows(); ++m)
    for (int64_t p = 0; p < kk; ++p) {
      const int64_t src = im2col_source(s, m, p);
      float* dst = out + (m * kk + p) * s.c;
      for (int64_t j = 0; j < s.c; ++j) dst[j] = src < 0 ? pad_value : x[src + j];
    }
}

// Throws bl::Error unless extents are >= 0, kernel/stride/dilation >= 1, padding >= 0 and the
// output has at least one row and column (for a non-empty input).
void im2col_check(const Im2colShape& s);

// CPU: output rows cut into tasks; each window position a copy of C floats or a fill.
void im2col_cpu(const float* x, const Im2colShape& s, float pad_value, float* out, ThreadPool& pool);

// CUDA: device pointers, one thread per output element (grid-stride); in order on the default stream.
void im2col_cuda(const float* x, const Im2colShape& s, float pad_value, float* out,
                 const LaunchConfig& config = LaunchConfig());

}  // namespace bl
