// conv_direct_kernels.h: the loops of conv_direct.h, written once over a vector type V (included
// by conv_direct_avx2.cpp and conv_direct_avx512.cpp only). V supplies T, L (floats per vector),
// zero, load, store, bcast (one float to every lane), fma (a * b + c, one rounding), add and canon
// (NaN lanes to the canonical NaN). Each lane is one output's own chain, so the lane width changes
// nothing in any output's order of operations.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/conv_direct.h"

namespace bl::conv_direct_detail {
// Internal linkage: each ISA's object keeps its own copies (scripts/check_isa_objects.sh).
namespace {

constexpr int64_t kLeaf = 256;  // kGemmKLeaf (checked in conv_direct.cpp)

// Outputs of R adjacent pixels of one output row, channels [j0, j0 + OCV * L). src: the padded
// input at the window's top-left corner of the first pixel; y: the first pixel's output row.
template <class V, int R, int OCV>
inline void forward_block(const ConvDirectArgs& a, const float* wt, const float* src, float* y, int64_t j0) {
  using T = typename V::T;
  constexpr int L = V::L;
  const int64_t kt = a.s.k(), c = a.s.c, oc = a.s.oc;
  T tot[R][OCV], acc[R][OCV];
  for (int64_t k0 = 0; k0 < kt; k0 += kLeaf) {
    const int64_t k1 = std::min(kt, k0 + kLeaf);
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < OCV; ++j) acc[r][j] = V::zero();
    for (int64_t k = k0; k < k1; ++k) {
      const float* s = src + a.off[k];
      const float* w = wt + k * oc + j0;
      T wv[OCV];
      for (int j = 0; j < OCV; ++j) wv[j] = V::load(w + j * L);
      for (int r = 0; r < R; ++r) {
        const T xb = V::bcast(s + r * c);
        for (int j = 0; j < OCV; ++j) acc[r][j] = V::fma(xb, wv[j], acc[r][j]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < OCV; ++j) tot[r][j] = k0 == 0 ? acc[r][j] : V::add(tot[r][j], acc[r][j]);
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < OCV; ++j) V::store(y + r * oc + j0 + j * L, V::canon(tot[r][j], a.nan));
}

// One output row (image b, row oy): blocks of R pixels, the rest in blocks of 8, 4, 2, 1.
template <class V, int R, int OCV>
inline void forward_row(const ConvDirectArgs& a, const float* wt, float* y, int64_t row) {
  const ConvDirectShape& s = a.s;
  const int64_t oh = s.out_h(), ow = s.out_w(), c = s.c, oc = s.oc;
  const int64_t b = row / oh, oy = row % oh;
  const float* src = a.xp + (b * s.hp + oy) * s.wp * c;
  float* out = y + row * ow * oc;
  for (int64_t j0 = 0; j0 < oc; j0 += OCV * V::L) {
    int64_t ox = 0;
    for (; ox + R <= ow; ox += R) forward_block<V, R, OCV>(a, wt, src + ox * c, out + ox * oc, j0);
    if constexpr (R > 8)
      for (; ox + 8 <= ow; ox += 8) forward_block<V, 8, OCV>(a, wt, src + ox * c, out + ox * oc, j0);
    if constexpr (R > 4)
      for (; ox + 4 <= ow; ox += 4) forward_block<V, 4, OCV>(a, wt, src + ox * c, out + ox * oc, j0);
    if constexpr (R > 2)
      for (; ox + 2 <= ow; ox += 2) forward_block<V, 2, OCV>(a, wt, src + ox * c, out + ox * oc, j0);
    for (; ox < ow; ++ox) forward_block<V, 1, OCV>(a, wt, src + ox * c, out + ox * oc, j0);
  }
}

// Weight gradient of patch columns [k0, k0 + CB) and channels [j0, j0 + OCV * L): the sum over
// every output pixel m in leaves of kLeaf, m in order.
template <class V, int CB, int OCV>
inline void wgrad_block(const ConvDirectArgs& a, const float* g, float* dw, int64_t k0, int64_t j0) {
  using T = typename V::T;
  constexpr int L = V::L;
  const ConvDirectShape& s = a.s;
  const int64_t oh = s.out_h(), ow = s.out_w(), c = s.c, oc = s.oc, kt = s.k(), rows = s.rows();
  int64_t off[CB];
  for (int cb = 0; cb < CB; ++cb) off[cb] = a.off[k0 + cb];
  T tot[CB][OCV], acc[CB][OCV];
  int64_t b = 0, oy = 0, ox = 0;
  const float* base = a.xp;
  for (int64_t m0 = 0; m0 < rows; m0 += kLeaf) {
    const int64_t m1 = std::min(rows, m0 + kLeaf);
    for (int cb = 0; cb < CB; ++cb)
      for (int j = 0; j < OCV; ++j) acc[cb][j] = V::zero();
    for (int64_t m = m0; m < m1; ++m) {
      const float* gm = g + m * oc + j0;
      T gv[OCV];
      for (int j = 0; j < OCV; ++j) gv[j] = V::load(gm + j * L);
      for (int cb = 0; cb < CB; ++cb) {
        const T xb = V::bcast(base + off[cb]);
        for (int j = 0; j < OCV; ++j) acc[cb][j] = V::fma(gv[j], xb, acc[cb][j]);
      }
      base += c;
      if (++ox == ow) {
        ox = 0;
        base += (s.wp - ow) * c;
        if (++oy == oh) {
          oy = 0;
          ++b;
          base = a.xp + b * s.hp * s.wp * c;
        }
      }
    }
    for (int cb = 0; cb < CB; ++cb)
      for (int j = 0; j < OCV; ++j) tot[cb][j] = m0 == 0 ? acc[cb][j] : V::add(tot[cb][j], acc[cb][j]);
  }
  alignas(64) float lanes[L];
  for (int cb = 0; cb < CB; ++cb)
    for (int j = 0; j < OCV; ++j) {
      V::store(lanes, V::canon(tot[cb][j], a.nan));
      for (int l = 0; l < L; ++l) dw[(j0 + j * L + l) * kt + k0 + cb] = lanes[l];
    }
}

template <class V, int OCV>
inline void wgrad_columns(const ConvDirectArgs& a, const float* g, float* dw, int64_t k0, int64_t kc, int64_t j0) {
  switch (kc) {
    case 8: wgrad_block<V, 8, OCV>(a, g, dw, k0, j0); break;
    case 7: wgrad_block<V, 7, OCV>(a, g, dw, k0, j0); break;
    case 6: wgrad_block<V, 6, OCV>(a, g, dw, k0, j0); break;
    case 5: wgrad_block<V, 5, OCV>(a, g, dw, k0, j0); break;
    case 4: wgrad_block<V, 4, OCV>(a, g, dw, k0, j0); break;
    case 3: wgrad_block<V, 3, OCV>(a, g, dw, k0, j0); break;
    case 2: wgrad_block<V, 2, OCV>(a, g, dw, k0, j0); break;
    default: wgrad_block<V, 1, OCV>(a, g, dw, k0, j0); break;
  }
}

// argmax_key of kernels/reduce.h: NaN above everything, else the total order of the bits.
inline uint32_t pool_key(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const uint32_t key = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return v != v ? 0xFFFFFFFFu : key;
}

// Output row (b, oy) of the tile max, channels in runs of kPoolRun held in local arrays (no
// aliasing with the outputs, so the selects vectorize). Tile positions in (ky, kx) order; a later
// position replaces the best only with a strictly greater key, as tile_max_cpu does.
constexpr int64_t kPoolRun = 64;

inline void pool_max_row(const float* x, const ConvPoolShape& s, int64_t row, float* y, int32_t* arg, float nan) {
  const int64_t k = s.k, oh = s.h / k, ow = s.w / k, c = s.c;
  const int64_t b = row / oh, oy = row % oh;
  for (int64_t ox = 0; ox < ow; ++ox) {
    float* __restrict yo = y + (row * ow + ox) * c;
    int32_t* __restrict ao = arg + (row * ow + ox) * c;
    for (int64_t j0 = 0; j0 < c; j0 += kPoolRun) {
      const int64_t jc = std::min(kPoolRun, c - j0);
      uint32_t kb[kPoolRun];
      float vb[kPoolRun];
      int32_t ab[kPoolRun];
      for (int64_t p = 0; p < k * k; ++p) {
        const int64_t ky = p / k, kx = p % k;
        const float* __restrict src = x + ((b * s.h + oy * k + ky) * s.w + ox * k + kx) * c + j0;
        if (p == 0) {
          for (int64_t j = 0; j < jc; ++j) {
            kb[j] = pool_key(src[j]);
            vb[j] = src[j];
            ab[j] = 0;
          }
          continue;
        }
        const int32_t pos = static_cast<int32_t>(p);
        for (int64_t j = 0; j < jc; ++j) {
          const float v = src[j];
          const uint32_t key = pool_key(v);
          const bool better = key > kb[j];
          kb[j] = better ? key : kb[j];
          vb[j] = better ? v : vb[j];
          ab[j] = better ? pos : ab[j];
        }
      }
      for (int64_t j = 0; j < jc; ++j) {
        yo[j0 + j] = vb[j] != vb[j] ? nan : vb[j];
        ao[j0 + j] = ab[j];
      }
    }
  }
}

// Input row (b, iy) of the tile max gradient.
inline void pool_max_backward_row(const float* g, const int32_t* arg, const ConvPoolShape& s, int64_t row, float* dx) {
  const int64_t k = s.k, oh = s.h / k, ow = s.w / k, c = s.c;
  const int64_t b = row / s.h, iy = row % s.h;
  const int64_t orow = b * oh + iy / k;
  for (int64_t ix = 0; ix < s.w; ++ix) {
    const int64_t o = (orow * ow + ix / k) * c;
    const int32_t p = static_cast<int32_t>((iy % k) * k + ix % k);
    const float* __restrict go = g + o;
    const int32_t* __restrict a = arg + o;
    float* __restrict d = dx + (row * s.w + ix) * c;
    for (int64_t j = 0; j < c; ++j) d[j] = a[j] == p ? go[j] : 0.0f;
  }
}

}  // namespace
}  // namespace bl::conv_direct_detail
