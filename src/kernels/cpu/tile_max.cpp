// tile_max.cpp: CPU max pooling over k x k tiles (see kernels/tile_max.h).
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/conv_direct.h"
#include "kernels/tile_max.h"

namespace bl {

namespace {

// Tasks from the shape alone (each element is computed independently, so the cut never matters).
int64_t task_count(int64_t rows, int64_t elements) {
  return std::max<int64_t>(1, std::min<int64_t>(rows, elements / 32768));
}

// Output row (b, oy): every ox and channel, channels innermost. The maximum is read off the arg
// position: the element with the greatest argmax key is the bl::max of the window (a NaN when
// there is one; +0 over -0 among equal values), so y = canonicalize(x[arg]) has the reference's
// bits, and the loop is branch-free selects on integer keys.
void forward_row(const float* x, TileMaxShape s, int64_t row, float* y, int32_t* arg,
                 std::vector<uint32_t>& keys) {
  const int64_t b = row / s.out_h(), oy = row % s.out_h(), c = s.c;
  uint32_t* kp = keys.data();
  for (int64_t ox = 0; ox < s.out_w(); ++ox) {
    const int64_t o = (row * s.out_w() + ox) * c;
    float* yo = y + o;
    int32_t* ao = arg + o;
    for (int64_t ky = 0; ky < s.k; ++ky) {
      for (int64_t kx = 0; kx < s.k; ++kx) {
        const float* src = x + ((b * s.h + oy * s.k + ky) * s.w + ox * s.k + kx) * c;
        const int32_t p = static_cast<int32_t>(ky * s.k + kx);
        if (p == 0) {
          for (int64_t j = 0; j < c; ++j) {
            kp[j] = argmax_key(src[j]);
            yo[j] = src[j];
            ao[j] = 0;
          }
          continue;
        }
        for (int64_t j = 0; j < c; ++j) {
          const float v = src[j];
          const uint32_t key = argmax_key(v);
          const bool better = key > kp[j];
          kp[j] = better ? key : kp[j];
          yo[j] = better ? v : yo[j];
          ao[j] = better ? p : ao[j];
        }
      }
    }
    for (int64_t j = 0; j < c; ++j) yo[j] = canonicalize(yo[j]);
  }
}

// Input row (b, iy): every ix and channel.
void backward_row(const float* g, const int32_t* arg, TileMaxShape s, int64_t row, float* dx) {
  const int64_t b = row / s.h, iy = row % s.h, c = s.c;
  const int64_t orow = b * s.out_h() + iy / s.k;
  for (int64_t ix = 0; ix < s.w; ++ix) {
    const int64_t o = (orow * s.out_w() + ix / s.k) * c;
    const int32_t p = static_cast<int32_t>((iy % s.k) * s.k + ix % s.k);
    float* d = dx + (row * s.w + ix) * c;
    for (int64_t j = 0; j < c; ++j) d[j] = arg[o + j] == p ? g[o + j] : 0.0f;
  }
}

}  // namespace

void tile_max_check(TileMaxShape s) {
  BL_CHECK(s.n >= 0 && s.h >= 0 && s.w >= 0 && s.c >= 0, "tile_max: extents must be >= 0, got [",
           s.n, ", ", s.h, ", ", s.w, ", ", s.c, "]");
  BL_CHECK(s.k >= 1 && s.k * s.k <= 65536, "tile_max: tile side k must lie in [1, 256], got ", s.k);
  BL_CHECK(s.h % s.k == 0 && s.w % s.k == 0, "tile_max: H=", s.h, " and W=", s.w,
           " must be multiples of the tile side ", s.k);
}

void tile_max_cpu(const float* x, TileMaxShape s, float* y, int32_t* arg, ThreadPool& pool) {
  tile_max_check(s);
  const int64_t rows = s.n * s.out_h();
  if (s.out_numel() == 0) return;
  // The SIMD rows (kernels/conv_direct.h) where the active variant has them: the same bits.
  if (conv_pool_max_forward(x, ConvPoolShape{s.n, s.h, s.w, s.c, s.k}, y, arg, pool)) return;
  const int64_t tasks = task_count(rows, s.out_numel() * s.k * s.k);
  pool.parallel_for(tasks, [&](int64_t t) {
    std::vector<uint32_t> keys(static_cast<size_t>(s.c));
    for (int64_t r = rows * t / tasks; r < rows * (t + 1) / tasks; ++r) forward_row(x, s, r, y, arg, keys);
  });
}

void tile_max_backward_cpu(const float* g, const int32_t* arg, TileMaxShape s, float* dx, ThreadPool& pool) {
  tile_max_check(s);
  const int64_t rows = s.n * s.h;
  if (rows * s.w * s.c == 0) return;
  if (conv_pool_max_backward(g, arg, ConvPoolShape{s.n, s.h, s.w, s.c, s.k}, dx, pool)) return;
  const int64_t tasks = task_count(rows, rows * s.w * s.c);
  pool.parallel_for(tasks, [&](int64_t t) {
    for (int64_t r = rows * t / tasks; r < rows * (t + 1) / tasks; ++r) backward_row(g, arg, s, r, dx);
  });
}

}  // namespace bl
