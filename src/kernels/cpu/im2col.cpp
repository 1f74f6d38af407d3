// im2col.cpp: CPU patch matrix of a convolution window (see kernels/im2col.h).
#include <algorithm>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/im2col.h"

namespace bl {

void im2col_check(const Im2colShape& s) {
  BL_CHECK(s.n >= 0 && s.h >= 0 && s.w >= 0 && s.c >= 0, "im2col: extents must be >= 0, got [", s.n,
           ", ", s.h, ", ", s.w, ", ", s.c, "]");
  BL_CHECK(s.kernel_h >= 1 && s.kernel_w >= 1 && s.stride_h >= 1 && s.stride_w >= 1 && s.dilation_h >= 1 &&
               s.dilation_w >= 1 && s.pad_h >= 0 && s.pad_w >= 0,
           "im2col: kernel, stride and dilation must be >= 1 and padding >= 0");
  BL_CHECK(s.n * s.h * s.w == 0 || (s.out_h() >= 1 && s.out_w() >= 1), "im2col: the ", s.kernel_h, "x",
           s.kernel_w, " window (dilation ", s.dilation_h, ", padding ", s.pad_h, ") does not fit a ", s.h,
           "x", s.w, " image");
}

namespace {

// Output rows [begin, end): the row's pixel decoded once, each window position a copy of C floats
// (element assignments: bit copies) or a fill with the pad value.
void im2col_rows(const float* x, const Im2colShape& s, float pad_value, float* out, int64_t begin, int64_t end) {
  const int64_t oh = s.out_h(), ow = s.out_w(), c = s.c, kk = s.kernel_h * s.kernel_w;
  int64_t ox = begin % ow, oy = (begin / ow) % oh, b = begin / (ow * oh);
  for (int64_t m = begin; m < end; ++m) {
    float* dst = out + m * kk * c;
    for (int64_t ky = 0; ky < s.kernel_h; ++ky) {
      const int64_t iy = oy * s.stride_h - s.pad_h + ky * s.dilation_h;
      const bool row_inside = iy >= 0 && iy < s.h;
      const float* src_row = x + (b * s.h + iy) * s.w * c;
      for (int64_t kx = 0; kx < s.kernel_w; ++kx, dst += c) {
        const int64_t ix = ox * s.stride_w - s.pad_w + kx * s.dilation_w;
        if (row_inside && ix >= 0 && ix < s.w) {
          const float* src = src_row + ix * c;
          for (int64_t j = 0; j < c; ++j) dst[j] = src[j];
        } else {
          for (int64_t j = 0; j < c; ++j) dst[j] = pad_value;
        }
      }
    }
    if (++ox == ow) {
      ox = 0;
      if (++oy == oh) {
        oy = 0;
        ++b;
      }
    }
  }
}

}  // namespace

void im2col_cpu(const float* x, const Im2colShape& s, float pad_value, float* out, ThreadPool& pool) {
  im2col_check(s);
  if (s.n * s.h * s.w == 0 || s.out_numel() == 0) return;
  const int64_t rows = s.rows();
  const int64_t tasks = std::max<int64_t>(1, std::min<int64_t>(rows, s.out_numel() / 65536));
  pool.parallel_for(tasks, [&](int64_t t) {
    im2col_rows(x, s, pad_value, out, rows * t / tasks, rows * (t + 1) / tasks);
  });
}

}  // namespace bl
