// matmul_pipe.cuh: the data movement shared by the pipelined CUDA GEMM kernels (matmul.cu and
// matmul_wide.cu): cp.async copies of operand slabs from global into shared memory, and the
// problem's sizes copied into their argument structs. Only data moves here; no arithmetic, so
// nothing in this file can change a bit of a product.
//
// Each operand slab is copied into shared memory as it is stored in global memory (k-contiguous
// operands as [outer][BK + 4], outer-contiguous ones as [BK][outer + 4]) by asynchronous 16-byte
// copies. Chunks at the matrix edge, or of operands whose rows are not 16-byte aligned, are copied
// one element at a time; elements outside the matrix are zero-filled and never reach a stored
// output or a k step that is run.
#pragma once

#include <cuda_runtime.h>

#include <stdint.h>

#include "kernels/matmul.h"

namespace bl {
namespace {

// The sizes, row pitches and batch strides of a product, copied from MatmulArgs into a kernel's
// argument struct (MatmulDeviceArgs, WideArgs); the caller sets the rest.
template <class P>
void pipe_problem_sizes(const MatmulArgs& args, P& p) {
  p.m = args.m;
  p.n = args.n;
  p.k = args.k;
  p.lda = args.lda;
  p.ldb = args.ldb;
  p.ldc = args.ldc;
  p.stride_a = args.stride_a;
  p.stride_b = args.stride_b;
  p.stride_c = args.stride_c;
}

#if defined(__HIP_PLATFORM_AMD__)
// AMD GPUs have no cp.async: the same copies done synchronously (src_bytes of the chunk are read,
// the rest zero-filled, as cp.async does). Only data movement differs; every fma stays in place.
__device__ __forceinline__ void cp_async_16(float* smem, const float* gmem, int src_bytes) {
  for (int i = 0; i < 4; ++i) smem[i] = 4 * i < src_bytes ? gmem[i] : 0.0f;
}
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, int src_bytes) {
  smem[0] = src_bytes >= 4 ? gmem[0] : 0.0f;
}
__device__ __forceinline__ void cp_async_commit() {}
template <int N>
__device__ __forceinline__ void cp_async_wait() {}
#else
__device__ __forceinline__ void cp_async_16(float* smem, const float* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
#endif

// Shared-memory geometry of one operand slab (BO outer x BK deep).
template <int BO, int BK, bool K_CONTIGUOUS>
struct PipeSlab {
  static constexpr int kPitch = K_CONTIGUOUS ? BK + 4 : BO + 4;  // floats; rows stay 16-byte aligned
  static constexpr int kFloats = K_CONTIGUOUS ? BO * kPitch : BK * kPitch;
  static constexpr int kChunksPerRow = (K_CONTIGUOUS ? BK : BO) / 4;  // 4-float chunks
  static constexpr int kChunks = BO * BK / 4;
};

// Issues the copies of slab s of one operand into smem. x is the batch entry's matrix, o0 the
// tile's first outer index, vec whether 16-byte copies are allowed (aligned rows).
template <int BO, int BK, int kThreads, bool K_CONTIGUOUS>
__device__ __forceinline__ void pipe_load_slab(float* smem, const float* x, int64_t ld, int64_t o0,
                                               int64_t outer_total, int64_t k_total, int64_t s,
                                               bool vec) {
  using S = PipeSlab<BO, BK, K_CONTIGUOUS>;
  static_assert(S::kChunks % kThreads == 0, "whole chunks per thread");
  const int64_t k0 = s * BK;
#pragma unroll
  for (int i = 0; i < S::kChunks / kThreads; ++i) {
    const int c = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = c / S::kChunksPerRow;        // smem row: outer (k-contiguous) or k
    const int col = (c % S::kChunksPerRow) * 4;  // first of 4 contiguous elements in that row
    float* dst = smem + row * S::kPitch + col;
    // Global (outer, k) of the chunk's first element and how many of its 4 elements are inside.
    const int64_t o = K_CONTIGUOUS ? o0 + row : o0 + col;
    const int64_t k = K_CONTIGUOUS ? k0 + col : k0 + row;
    const int64_t in_k = K_CONTIGUOUS ? k_total - k : (k < k_total ? 4 : 0);
    const int64_t in_o = K_CONTIGUOUS ? (o < outer_total ? 4 : 0) : outer_total - o;
    int64_t inside = in_k < in_o ? in_k : in_o;
    if (inside < 0) inside = 0;
    const float* src = K_CONTIGUOUS ? x + o * ld + k : x + k * ld + o;
    if (vec && inside >= 4) {
      cp_async_16(dst, src, 16);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = e < inside;
        cp_async_4(dst + e, ok ? src + e : x, ok ? 4 : 0);
      }
    }
  }
}

// True when every 4-aligned chunk of rows of x starts 16-byte aligned in every batch entry.
inline bool rows_16b_aligned(const float* x, int64_t ld, int64_t stride, int64_t batch) {
  return reinterpret_cast<uintptr_t>(x) % 16 == 0 && ld % 4 == 0 && (batch <= 1 || stride % 4 == 0);
}

}  // namespace
}  // namespace bl
