// tile_max.h: max pooling over non-overlapping k x k tiles of a channels-last image batch.
//
// x is [N, H, W, C] (contiguous, H and W multiples of k); the window of output (b, oy, ox, c) is
// x[b, oy * k + ky, ox * k + kx, c] for ky, kx in [0, k), numbered p = ky * k + kx. The output is
// the bl::max of the window (a commutative, associative fold: NaN wins as the canonical NaN, +0
// beats -0), the same bits as bl::amax over the window axis. arg is the first p (lowest) whose
// argmax key (bl::argmax's total order, NaN greatest) is largest, as bl::argmax picks it. The
// gradient of x is g at the arg position of each window and +0 elsewhere. The references below
// are the specification; every backend writes the same bits for any thread count or launch shape.
#pragma once

#include <cstdint>

#include "contract/arith.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl {

class ThreadPool;

struct TileMaxShape {
  int64_t n = 0, h = 0, w = 0, c = 0;  // input extents
  int64_t k = 1;                       // tile side (stride = k, no padding)
  BL_HD int64_t out_h() const { return h / k; }
  BL_HD int64_t out_w() const { return w / k; }
  BL_HD int64_t out_numel() const { return n * out_h() * out_w() * c; }
};

// One output element (index o into [N, H/k, W/k, C]): its max and arg.
BL_HD void tile_max_one(const float* x, TileMaxShape s, int64_t o, float* y, int32_t* arg) {
  const int64_t c = o % s.c;
  const int64_t ox = (o / s.c) % s.out_w();
  const int64_t oy = (o / (s.c * s.out_w())) % s.out_h();
  const int64_t b = o / (s.c * s.out_w() * s.out_h());
  float m = float_of(0xFF800000u);  // -inf: bl::max(-inf, v) == v
  int32_t best = 0;
  uint32_t best_key = 0;
  for (int64_t ky = 0; ky < s.k; ++ky) {
    const float* row = x + ((b * s.h + oy * s.k + ky) * s.w + ox * s.k) * s.c + c;
    for (int64_t kx = 0; kx < s.k; ++kx) {
      const float v = row[kx * s.c];
      const uint32_t key = argmax_key(v);
      const int32_t p = static_cast<int32_t>(ky * s.k + kx);
      if (p == 0 || key > best_key) {  // strictly greater: the lowest position keeps ties
        best_key = key;
        best = p;
      }
      m = max(m, v);
    }
  }
  y[o] = canonicalize(m);
  arg[o] = best;
}

// One input-gradient element (index i into [N, H, W, C]).
BL_HD float tile_max_grad_one(const float* g, const int32_t* arg, TileMaxShape s, int64_t i) {
  const int64_t c = i % s.c;
  const int64_t ix = (i / s.c) % s.w;
  const int64_t iy = (i / (s.c * s.w)) % s.h;
  const int64_t b = i / (s.c * s.w * s.h);
  const int64_t o = ((b * s.out_h() + iy / s.k) * s.out_w() + ix / s.k) * s.c + c;
  const int32_t p = static_cast<int32_t>((iy % s.k) * s.k + ix % s.k);
  return arg[o] == p ? g[o] : 0.0f;
}

inline void tile_max_reference(const float* x, TileMaxShape s, float* y, int32_t* arg) {
  for (int64_t o = 0; o < s.out_numel(); ++o) tile_max_one(x, s, o, y, arg);
}

inline void tile_max_backward_reference(const float* g, const int32_t* arg, TileMaxShape s, float* dx) {
  const int64_t total = s.n * s.h * s.w * s.c;
  for (int64_t i = 0; i < total; ++i) dx[i] = tile_max_grad_one(g, arg, s, i);
}

// Throws bl::Error unless the extents are >= 0, k >= 1 and k divides H and W.
void tile_max_check(TileMaxShape s);

// CPU: output rows (b, oy) cut into tasks; the same bits as the reference.
void tile_max_cpu(const float* x, TileMaxShape s, float* y, int32_t* arg, ThreadPool& pool);
void tile_max_backward_cpu(const float* g, const int32_t* arg, TileMaxShape s, float* dx, ThreadPool& pool);

// CUDA: device pointers, one thread per element (grid-stride); in order on the default stream.
void tile_max_cuda(const float* x, TileMaxShape s, float* y, int32_t* arg,
                   const LaunchConfig& config = LaunchConfig());
void tile_max_backward_cuda(const float* g, const int32_t* arg, TileMaxShape s, float* dx,
                            const LaunchConfig& config = LaunchConfig());

}  // namespace bl
