// conv_direct.h: stride-1 convolution products without the patch matrix (CPU, AVX2 / AVX-512).
//
// A stride-1, dilation-1 convolution of a channels-last batch is the contract GEMM
// y = patches(x) W^T (kernels/matmul.h): every output is one fma chain per leaf of kGemmKLeaf
// products, starting at +0.0, in the k order (ky, kx, c) of the patch row, the leaves added in
// order and the sum canonicalized. These kernels compute that same chain element by element
// straight from the zero-padded input (the padded positions are the 0.0 the patch matrix holds),
// so the bits are the GEMM's; only the memory traffic changes (no patch matrix, no packing).
//   forward:      y[m, o]  = sum_k xp[pixel(m) + off[k]] * wt[k, o]          (k in leaves)
//   weight grad:  dw[o, k] = sum_m g[m, o] * xp[pixel(m) + off[k]]            (m in leaves)
// The input gradient is the forward of the padded output gradient with the rotated kernel.
// Tasks come from the problem size only; each output is computed whole by one task.
#pragma once

#include <cstdint>

namespace bl {

class ThreadPool;

struct ConvDirectShape {
  int64_t n = 0, hp = 0, wp = 0, c = 0;  // the padded input [n, hp, wp, c]
  int64_t kh = 0, kw = 0, oc = 0;        // window and output channels
  int64_t out_h() const { return hp - kh + 1; }
  int64_t out_w() const { return wp - kw + 1; }
  int64_t k() const { return kh * kw * c; }
  int64_t rows() const { return n * out_h() * out_w(); }
};

struct ConvDirectArgs {
  ConvDirectShape s;
  const float* xp = nullptr;   // padded input
  const int64_t* off = nullptr;  // [K]: (ky * wp + kx) * c + ci, the patch element's offset
  float nan = 0.0f;            // the canonical NaN
};

// The SIMD width (floats) of the active variant's kernels, or 0 where there is none (the caller
// then keeps the patch-matrix path). Output channels must be a multiple of it.
int64_t conv_direct_lanes();

// y [rows, oc] from wt [K, oc].
void conv_direct_forward(const ConvDirectArgs& a, const float* wt, float* y, ThreadPool& pool);
// dw [oc, K] from g [rows, oc].
void conv_direct_weight_grad(const ConvDirectArgs& a, const float* g, float* dw, ThreadPool& pool);

// Max pooling over k x k tiles (stride k, no padding; kernels/tile_max.h): y [n, h/k, w/k, c] and
// the tile position of the maximum, the bits of tile_max_cpu (greatest argmax key, the first
// position among equal keys, y = the canonicalized input there) with the channel loops in SIMD
// registers. Return false where the active variant has none (the caller runs tile_max).
struct ConvPoolShape {
  int64_t n = 0, h = 0, w = 0, c = 0, k = 1;
};
bool conv_pool_max_forward(const float* x, const ConvPoolShape& s, float* y, int32_t* arg, ThreadPool& pool);
// dx [n, h, w, c]: g at each tile's arg position, +0.0 elsewhere.
bool conv_pool_max_backward(const float* g, const int32_t* arg, const ConvPoolShape& s, float* dx, ThreadPool& pool);

// ISA variants (conv_direct_avx2.cpp, conv_direct_avx512.cpp): one task each.
void conv_direct_forward_row_avx2(const ConvDirectArgs& a, const float* wt, float* y, int64_t row);
void conv_direct_forward_row_avx512(const ConvDirectArgs& a, const float* wt, float* y, int64_t row);
void conv_direct_wgrad_block_avx2(const ConvDirectArgs& a, const float* g, float* dw, int64_t k0, int64_t kc);
void conv_direct_wgrad_block_avx512(const ConvDirectArgs& a, const float* g, float* dw, int64_t k0, int64_t kc);
void conv_pool_max_row_avx2(const float* x, const ConvPoolShape& s, int64_t row, float* y, int32_t* arg, float nan);
void conv_pool_max_row_avx512(const float* x, const ConvPoolShape& s, int64_t row, float* y, int32_t* arg, float nan);
void conv_pool_max_backward_row_avx2(const float* g, const int32_t* arg, const ConvPoolShape& s, int64_t row, float* dx);
void conv_pool_max_backward_row_avx512(const float* g, const int32_t* arg, const ConvPoolShape& s, int64_t row,
                                       float* dx);

}  // namespace bl
