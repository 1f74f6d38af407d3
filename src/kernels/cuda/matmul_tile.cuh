// matmul_tile.cuh: the SIMT contract GEMM kernel templates of matmul.cu, for any tile shape
// (internal to the CUDA backend; the kernel lab instantiates shapes the library does not ship).
//
// Each block computes a BM x BN tile of C for one batch entry; each thread a TM x TN sub-tile. The
// k range is walked in slabs of BK (BK divides kGemmKLeaf, so a slab never straddles a leaf). Per
// leaf a thread runs its TM x TN accumulators from +0.0 with one __fmaf_rn per k in ascending k
// (bl::fma), then folds them into the running sum: c = leaf0, c = c + leaf_j. Slabs past K
// are not padded with zeros inside a leaf (fma(0, 0, -0) would turn a -0 partial into +0): the last
// slab runs only its valid k. Tiles are walked by a grid-stride loop, so the grid size (grid_cap)
// changes nothing but speed. Results equal bl::matmul_reference bit for bit, for every tile shape.
//
// Two kernel families: matmul_kernel stages slabs through registers (double-buffered shared
// memory); matmul_pipe_kernel copies them with cp.async into 3-4 shared-memory stages and keeps the
// running leaf sum either in C or in registers.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "kernels/cuda/matmul_pipe.cuh"
#include "kernels/cuda/per_device_once.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl {
namespace {

// Everything the kernel needs about the problem, passed by value.
struct MatmulDeviceArgs {
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  int64_t tiles_m, tiles_n, tiles_total;
  int trans_a, trans_b;
};

// Shared-memory rows are padded by 4 floats: keeps 16-byte alignment of each row for the float4
// fragment loads and spreads the transposing stores over the banks.
template <int BM, int BN, int BK, int TM, int TN>
struct MatmulTile {
  static constexpr int kThreadsN = BN / TN;
  // A thread's TN columns are TN/4 groups of 4 adjacent columns, kGroupStrideN apart, so the
  // float4 reads of one quarter-warp cover 128 contiguous bytes (no bank conflicts).
  static constexpr int kGroupStrideN = BN / (TN / 4);
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static constexpr int kPitchA = BM + 4;
  static constexpr int kPitchB = BN + 4;
  static constexpr int kLoadsA = BM * BK / kThreads;  // slab elements of A per thread
  static constexpr int kLoadsB = BN * BK / kThreads;
  static_assert(kGemmKLeaf % BK == 0, "a slab never straddles a leaf");
  static_assert((BM * BK) % kThreads == 0 && (BN * BK) % kThreads == 0, "whole loads per thread");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
};

// Loads BK-deep slabs of one operand (op(A) with outer = m, or op(B) with outer = n) from global
// memory into registers, then into shared memory as [k][outer]. Element (o, k) lives at
// x[o * ld + k] when k is contiguous (plain A, B^T) and at x[k * ld + o] otherwise (A^T, plain B);
// consecutive threads always read consecutive addresses. Out-of-range elements load as 0; they
// only ever meet outputs that are not stored or k steps that are not run.
template <int BO, int BK, int kThreads, bool K_CONTIGUOUS>
struct SlabLoader {
  static constexpr int kLoads = BO * BK / kThreads;
  static_assert(kThreads % BO == 0 && kThreads % BK == 0, "every load of a thread has the same "
                "in-row position, so one pointer and one step describe all of them");
  // Between consecutive loads of one thread: outer += kOuterStep, k += kKStep.
  static constexpr int kOuterStep = K_CONTIGUOUS ? kThreads / BK : 0;
  static constexpr int kKStep = K_CONTIGUOUS ? 0 : kThreads / BO;
  const float* ptr;  // this thread's first element of slab 0
  int oo;            // outer offset of load 0 within the tile
  int kk;            // k offset of load 0 within the slab
  unsigned outer_ok; // bit i: load i is inside the matrix along outer

  __device__ __forceinline__ void init(const float* x, int64_t ld, int64_t o0, int64_t outer_total) {
    const int t = threadIdx.x;
    oo = K_CONTIGUOUS ? t / BK : t % BO;
    kk = K_CONTIGUOUS ? t % BK : t / BO;
    outer_ok = 0;
#pragma unroll
    for (int i = 0; i < kLoads; ++i)
      if (o0 + oo + i * kOuterStep < outer_total) outer_ok |= 1u << i;
    // Out-of-range rows point at row o0 (never dereferenced: the load is masked).
    const int64_t o = o0 + oo < outer_total ? o0 + oo : o0;
    ptr = K_CONTIGUOUS ? x + o * ld + kk : x + static_cast<int64_t>(kk) * ld + o;
  }

  // Reads slab s (k from s * BK) into reg; elements outside the matrix read as 0.
  __device__ __forceinline__ void load(int64_t s, int64_t k_total, int64_t ld,
                                       float (&reg)[kLoads]) const {
    const float* base = K_CONTIGUOUS ? ptr + s * BK : ptr + s * BK * ld;
    const int64_t k_left = k_total - s * BK - kk;  // load i is inside K when i*kKStep < k_left
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const bool ok = ((outer_ok >> i) & 1u) && (i * kKStep < k_left);
      const int64_t offset = K_CONTIGUOUS ? i * kOuterStep * ld : i * kKStep * ld;
      reg[i] = ok ? base[offset] : 0.0f;
    }
  }

  __device__ __forceinline__ void store(const float (&reg)[kLoads], float* smem, int pitch) const {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) smem[(kk + i * kKStep) * pitch + oo + i * kOuterStep] = reg[i];
  }
};

// One k step of the register tile: acc[i][j] = fma(a_i, b_j, acc[i][j]).
template <int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void tile_step(const float* sa, const float* sb, int kk, int row0,
                                          int col0, float (&acc)[TM][TN]) {
  using T = MatmulTile<BM, BN, BK, TM, TN>;
  float fa[TM], fb[TN];
#pragma unroll
  for (int i = 0; i < TM; i += 4) {
    const float4 v = *reinterpret_cast<const float4*>(sa + kk * T::kPitchA + row0 + i);
    fa[i] = v.x; fa[i + 1] = v.y; fa[i + 2] = v.z; fa[i + 3] = v.w;
  }
#pragma unroll
  for (int j = 0; j < TN; j += 4) {
    const float4 v =
        *reinterpret_cast<const float4*>(sb + kk * T::kPitchB + (j / 4) * T::kGroupStrideN + col0);
    fb[j] = v.x; fb[j + 1] = v.y; fb[j + 2] = v.z; fb[j + 3] = v.w;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
}

template <int BM, int BN, int BK, int TM, int TN, int MIN_BLOCKS, bool A_KC, bool B_KC>
__global__ void __launch_bounds__((MatmulTile<BM, BN, BK, TM, TN>::kThreads), MIN_BLOCKS)
    matmul_kernel(MatmulDeviceArgs p, const float* __restrict__ a, const float* __restrict__ b,
                  float* c) {
  using T = MatmulTile<BM, BN, BK, TM, TN>;
  __shared__ __align__(16) float smem_a[2][BK * T::kPitchA];
  __shared__ __align__(16) float smem_b[2][BK * T::kPitchB];
  const int row0 = (threadIdx.x / T::kThreadsN) * TM;  // within the tile
  const int col0 = (threadIdx.x % T::kThreadsN) * 4;  // first column of the first group
  const int64_t slabs = (p.k + BK - 1) / BK;

  for (int64_t tile = blockIdx.x; tile < p.tiles_total; tile += gridDim.x) {
    const int64_t tn = tile % p.tiles_n;
    const int64_t tm = (tile / p.tiles_n) % p.tiles_m;
    const int64_t bi = tile / (p.tiles_n * p.tiles_m);
    const int64_t m0 = tm * BM, n0 = tn * BN;
    const float* ab = a + bi * p.stride_a;
    const float* bb = b + bi * p.stride_b;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    float* cb = c + bi * p.stride_c;
    if (slabs == 0) {  // K == 0: the empty sum is +0.0
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int64_t m = m0 + row0 + i;
          const int64_t n = n0 + (j / 4) * T::kGroupStrideN + col0 + j % 4;
          if (m < p.m && n < p.n) cb[m * p.ldc + n] = 0.0f;
        }
      continue;
    }

    // A is k-contiguous when plain (M x K), B when transposed (N x K).
    SlabLoader<BM, BK, T::kThreads, A_KC> load_a;
    SlabLoader<BN, BK, T::kThreads, B_KC> load_b;
    load_a.init(ab, p.lda, m0, p.m);
    load_b.init(bb, p.ldb, n0, p.n);
    float reg_a[T::kLoadsA], reg_b[T::kLoadsB];
    load_a.load(0, p.k, p.lda, reg_a);
    load_b.load(0, p.k, p.ldb, reg_b);
    load_a.store(reg_a, smem_a[0], T::kPitchA);
    load_b.store(reg_b, smem_b[0], T::kPitchB);
    __syncthreads();

    for (int64_t s = 0; s < slabs; ++s) {
      const int buf = static_cast<int>(s & 1);
      const int64_t k0 = s * BK;
      if (s + 1 < slabs) {  // prefetch the next slab into registers while this one computes
        load_a.load(s + 1, p.k, p.lda, reg_a);
        load_b.load(s + 1, p.k, p.ldb, reg_b);
      }
      const float* sa = smem_a[buf];
      const float* sb = smem_b[buf];
      if (k0 + BK <= p.k) {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) tile_step<BM, BN, BK, TM, TN>(sa, sb, kk, row0, col0, acc);
      } else {
        const int valid = static_cast<int>(p.k - k0);
        for (int kk = 0; kk < valid; ++kk) tile_step<BM, BN, BK, TM, TN>(sa, sb, kk, row0, col0, acc);
      }
      // End of a leaf: fold the partial into C in ascending leaf order (C = leaf0, C = C + leaf_j;
      // each output is read and written by this thread only), canonicalize after the last leaf,
      // and restart the partial at +0.0. The running sum lives in C rather than in a second
      // register set: 8 x 8 partials plus 8 x 8 sums exceed the 255-register limit and spill.
      const int64_t k_next = k0 + BK;
      if (k_next % kGemmKLeaf == 0 || k_next >= p.k) {
        const bool first_leaf = k0 < kGemmKLeaf;
        const bool last_leaf = k_next >= p.k;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int64_t m = m0 + row0 + i;
          float* out_row = cb + m * p.ldc + n0 + col0;
          const int64_t n_left = p.n - n0 - col0;  // column j of the thread is inside N when < n_left
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            const int cj = (j / 4) * T::kGroupStrideN + j % 4;
            if (m < p.m && cj < n_left) {
              float v = first_leaf ? acc[i][j] : add(out_row[cj], acc[i][j]);
              out_row[cj] = last_leaf ? canonicalize(v) : v;
            }
            acc[i][j] = 0.0f;
          }
        }
      }
      if (s + 1 < slabs) {
        load_a.store(reg_a, smem_a[buf ^ 1], T::kPitchA);
        load_b.store(reg_b, smem_b[buf ^ 1], T::kPitchB);
      }
      __syncthreads();
    }
  }
}

// ---- Pipelined kernel: cp.async global -> shared copies in STAGES stages ----------------------
//
// Same per-output order as matmul_kernel (leaf partials from +0 with one fma per k in ascending k,
// folded into C once per leaf), only the data movement differs: the operand slabs are copied into
// shared memory by cp.async (matmul_pipe.cuh), STAGES - 1 slabs ahead of the compute, so no
// registers hold in-flight slabs and one __syncthreads guards each slab.

template <int BM, int BN, int BK, int STAGES, bool A_KC, bool B_KC>
struct PipeTile {
  static constexpr int TM = 8, TN = 8;
  static constexpr int kThreadsN = BN / TN;
  static constexpr int kGroupStrideN = BN / 2;  // a thread's columns: two groups of 4
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  using SA = PipeSlab<BM, BK, A_KC>;
  using SB = PipeSlab<BN, BK, B_KC>;
  static constexpr int kStageFloats = SA::kFloats + SB::kFloats;
  static constexpr size_t kSmemBytes = sizeof(float) * kStageFloats * STAGES;
  // k steps whose fragments of a k-contiguous operand are read as one vector per row.
  static constexpr int kGroup = 2;
  static_assert(kGemmKLeaf % BK == 0 && BK % 4 == 0, "a slab never straddles a leaf");
};

// Fragment of A (rows row0..row0+7) for k step kk of a slab, one float per row.
template <int BM, int BK, bool A_KC>
__device__ __forceinline__ float pipe_frag_a(const float* sa, int row0, int i, int kk) {
  using S = PipeSlab<BM, BK, A_KC>;
  return A_KC ? sa[(row0 + i) * S::kPitch + kk] : sa[kk * S::kPitch + row0 + i];
}

// One k step, operands read element-wise (used for the short last slab only).
template <int BM, int BN, int BK, bool A_KC, bool B_KC>
__device__ __forceinline__ void pipe_step_scalar(const float* sa, const float* sb, int kk, int row0,
                                                 int col0, float (&acc)[8][8]) {
  using SB = PipeSlab<BN, BK, B_KC>;
  float fa[8], fb[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) fa[i] = pipe_frag_a<BM, BK, A_KC>(sa, row0, i, kk);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int col = (j / 4) * (BN / 2) + col0 + j % 4;
    fb[j] = B_KC ? sb[col * SB::kPitch + kk] : sb[kk * SB::kPitch + col];
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
}

// G consecutive k steps (k0g .. k0g+G-1, ascending) with vector fragment reads: a k-contiguous
// operand gives one G-wide vector per row, an outer-contiguous one two float4 per k.
template <int BM, int BN, int BK, int G, bool A_KC, bool B_KC>
__device__ __forceinline__ void pipe_step_group(const float* sa, const float* sb, int k0g, int row0,
                                                int col0, float (&acc)[8][8]) {
  using SA = PipeSlab<BM, BK, A_KC>;
  using SB = PipeSlab<BN, BK, B_KC>;
  float ga[A_KC ? 8 : 1][G], gb[B_KC ? 8 : 1][G];
  if (A_KC) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float* p = sa + (row0 + i) * SA::kPitch + k0g;
      if (G == 4) {
        const float4 v = *reinterpret_cast<const float4*>(p);
        ga[i][0] = v.x; ga[i][G > 1 ? 1 : 0] = v.y; ga[i][G > 2 ? 2 : 0] = v.z; ga[i][G > 3 ? 3 : 0] = v.w;
      } else {
        const float2 v = *reinterpret_cast<const float2*>(p);
        ga[i][0] = v.x; ga[i][G > 1 ? 1 : 0] = v.y;
      }
    }
  }
  if (B_KC) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float* p = sb + ((j / 4) * (BN / 2) + col0 + j % 4) * SB::kPitch + k0g;
      if (G == 4) {
        const float4 v = *reinterpret_cast<const float4*>(p);
        gb[j][0] = v.x; gb[j][G > 1 ? 1 : 0] = v.y; gb[j][G > 2 ? 2 : 0] = v.z; gb[j][G > 3 ? 3 : 0] = v.w;
      } else {
        const float2 v = *reinterpret_cast<const float2*>(p);
        gb[j][0] = v.x; gb[j][G > 1 ? 1 : 0] = v.y;
      }
    }
  }
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const int kk = k0g + g;
    float fa[8], fb[8];
    if (A_KC) {
#pragma unroll
      for (int i = 0; i < 8; ++i) fa[i] = ga[A_KC ? i : 0][g];
    } else {
#pragma unroll
      for (int i = 0; i < 8; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(sa + kk * SA::kPitch + row0 + i);
        fa[i] = v.x; fa[i + 1] = v.y; fa[i + 2] = v.z; fa[i + 3] = v.w;
      }
    }
    if (B_KC) {
#pragma unroll
      for (int j = 0; j < 8; ++j) fb[j] = gb[B_KC ? j : 0][g];
    } else {
#pragma unroll
      for (int j = 0; j < 8; j += 4) {
        const float4 v =
            *reinterpret_cast<const float4*>(sb + kk * SB::kPitch + (j / 4) * (BN / 2) + col0);
        fb[j] = v.x; fb[j + 1] = v.y; fb[j + 2] = v.z; fb[j + 3] = v.w;
      }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
  }
}

template <int BM, int BN, int BK, int STAGES, int MIN_BLOCKS, bool SUM_REGS, bool A_KC, bool B_KC>
__global__ void __launch_bounds__((PipeTile<BM, BN, BK, STAGES, A_KC, B_KC>::kThreads), MIN_BLOCKS)
    matmul_pipe_kernel(MatmulDeviceArgs p, const float* __restrict__ a,
                       const float* __restrict__ b, float* c, int vec_a, int vec_b) {
  using T = PipeTile<BM, BN, BK, STAGES, A_KC, B_KC>;
  extern __shared__ __align__(16) float smem[];
  const int row0 = (threadIdx.x / T::kThreadsN) * 8;  // within the tile
  const int col0 = (threadIdx.x % T::kThreadsN) * 4;  // first column of the first group
  const int64_t slabs = (p.k + BK - 1) / BK;

  for (int64_t tile = blockIdx.x; tile < p.tiles_total; tile += gridDim.x) {
    const int64_t tn = tile % p.tiles_n;
    const int64_t tm = (tile / p.tiles_n) % p.tiles_m;
    const int64_t bi = tile / (p.tiles_n * p.tiles_m);
    const int64_t m0 = tm * BM, n0 = tn * BN;
    const float* ab = a + bi * p.stride_a;
    const float* bb = b + bi * p.stride_b;
    float* cb = c + bi * p.stride_c;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    // With SUM_REGS the running leaf sum stays in registers (one block per multiprocessor leaves
    // room for it) and C is written once; otherwise it lives in C.
    constexpr int kS = SUM_REGS ? 8 : 1;
    float sum[kS][kS];
#pragma unroll
    for (int i = 0; i < kS; ++i)
#pragma unroll
      for (int j = 0; j < kS; ++j) sum[i][j] = 0.0f;

    if (slabs == 0) {  // K == 0: the empty sum is +0.0
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int64_t m = m0 + row0 + i;
          const int64_t n = n0 + (j / 4) * T::kGroupStrideN + col0 + j % 4;
          if (m < p.m && n < p.n) cb[m * p.ldc + n] = 0.0f;
        }
      continue;
    }

    // Prologue: slabs 0 .. STAGES-2 in flight (one commit group each, empty past the end).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < slabs) {
        float* st = smem + s * T::kStageFloats;
        pipe_load_slab<BM, BK, T::kThreads, A_KC>(st, ab, p.lda, m0, p.m, p.k, s, vec_a != 0);
        pipe_load_slab<BN, BK, T::kThreads, B_KC>(st + T::SA::kFloats, bb, p.ldb, n0, p.n, p.k, s,
                                                  vec_b != 0);
      }
      cp_async_commit();
    }

    for (int64_t s = 0; s < slabs; ++s) {
      cp_async_wait<STAGES - 2>();  // slab s has landed (for this thread's copies)
      __syncthreads();              // ... for every thread's, and slab s-1 is no longer read
      const int64_t s_next = s + STAGES - 1;
      if (s_next < slabs) {
        float* st = smem + static_cast<int>(s_next % STAGES) * T::kStageFloats;
        pipe_load_slab<BM, BK, T::kThreads, A_KC>(st, ab, p.lda, m0, p.m, p.k, s_next, vec_a != 0);
        pipe_load_slab<BN, BK, T::kThreads, B_KC>(st + T::SA::kFloats, bb, p.ldb, n0, p.n, p.k,
                                                  s_next, vec_b != 0);
      }
      cp_async_commit();

      const float* sa = smem + static_cast<int>(s % STAGES) * T::kStageFloats;
      const float* sb = sa + T::SA::kFloats;
      const int64_t k0 = s * BK;
      if (k0 + BK <= p.k) {
#pragma unroll
        for (int kg = 0; kg < BK; kg += T::kGroup)
          pipe_step_group<BM, BN, BK, T::kGroup, A_KC, B_KC>(sa, sb, kg, row0, col0, acc);
      } else {
        const int valid = static_cast<int>(p.k - k0);
        for (int kk = 0; kk < valid; ++kk)
          pipe_step_scalar<BM, BN, BK, A_KC, B_KC>(sa, sb, kk, row0, col0, acc);
      }
      // End of a leaf: fold into C exactly as matmul_kernel does (C = leaf0, C = C + leaf_j,
      // canonicalize after the last leaf, restart the partial at +0.0).
      const int64_t k_next = k0 + BK;
      if ((k_next % kGemmKLeaf == 0 || k_next >= p.k) && SUM_REGS) {
        const bool first_leaf = k0 < kGemmKLeaf;
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            sum[i % kS][j % kS] = first_leaf ? acc[i][j] : add(sum[i % kS][j % kS], acc[i][j]);
            acc[i][j] = 0.0f;
          }
      } else if (k_next % kGemmKLeaf == 0 || k_next >= p.k) {
        const bool first_leaf = k0 < kGemmKLeaf;
        const bool last_leaf = k_next >= p.k;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const int64_t m = m0 + row0 + i;
          float* out_row = cb + m * p.ldc + n0 + col0;
          const int64_t n_left = p.n - n0 - col0;
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const int cj = (j / 4) * T::kGroupStrideN + j % 4;
            if (m < p.m && cj < n_left) {
              float v = first_leaf ? acc[i][j] : add(out_row[cj], acc[i][j]);
              out_row[cj] = last_leaf ? canonicalize(v) : v;
            }
            acc[i][j] = 0.0f;
          }
        }
      }
    }
    if (SUM_REGS) {  // the finished sums, canonicalized, stored once
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t m = m0 + row0 + i;
        float* out_row = cb + m * p.ldc + n0 + col0;
        const int64_t n_left = p.n - n0 - col0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int cj = (j / 4) * T::kGroupStrideN + j % 4;
          if (m < p.m && cj < n_left) out_row[cj] = canonicalize(sum[i % kS][j % kS]);
        }
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // the next tile's prologue overwrites the stages
  }
}

template <int BM, int BN, int BK, int STAGES, int MIN_BLOCKS, bool SUM_REGS, bool A_KC, bool B_KC>
void launch_pipe_typed(const MatmulDeviceArgs& p, const float* a, const float* b, float* c,
                       unsigned blocks, int vec_a, int vec_b, cudaStream_t stream) {
  using T = PipeTile<BM, BN, BK, STAGES, A_KC, B_KC>;
  auto kernel = matmul_pipe_kernel<BM, BN, BK, STAGES, MIN_BLOCKS, SUM_REGS, A_KC, B_KC>;
  static cuda::PerDeviceOnce smem_limit_set;  // this kernel's attribute, once per device
  cuda::set_max_dynamic_smem_once(smem_limit_set, kernel, static_cast<int>(T::kSmemBytes), "matmul_cuda");
  kernel<<<blocks, T::kThreads, T::kSmemBytes, stream>>>(p, a, b, c, vec_a, vec_b);
}

template <int BM, int BN, int BK, int STAGES, int MIN_BLOCKS, bool SUM_REGS>
void launch_matmul_pipe(MatmulDeviceArgs p, int64_t batch, const float* a, const float* b, float* c,
                        const LaunchConfig& config, cudaStream_t stream) {
  p.tiles_m = (p.m + BM - 1) / BM;
  p.tiles_n = (p.n + BN - 1) / BN;
  p.tiles_total = p.tiles_m * p.tiles_n * p.tiles_total;  // tiles_total held the batch
  int64_t grid = p.tiles_total;
  if (config.grid_cap > 0) grid = std::min<int64_t>(grid, config.grid_cap);
  grid = std::min<int64_t>(grid, int64_t{1} << 30);
  const unsigned blocks = static_cast<unsigned>(grid);
  const int vec_a = rows_16b_aligned(a, p.lda, p.stride_a, batch) ? 1 : 0;
  const int vec_b = rows_16b_aligned(b, p.ldb, p.stride_b, batch) ? 1 : 0;
  if (!p.trans_a && !p.trans_b)
    launch_pipe_typed<BM, BN, BK, STAGES, MIN_BLOCKS, SUM_REGS, true, false>(p, a, b, c, blocks, vec_a, vec_b, stream);
  else if (!p.trans_a && p.trans_b)
    launch_pipe_typed<BM, BN, BK, STAGES, MIN_BLOCKS, SUM_REGS, true, true>(p, a, b, c, blocks, vec_a, vec_b, stream);
  else if (p.trans_a && !p.trans_b)
    launch_pipe_typed<BM, BN, BK, STAGES, MIN_BLOCKS, SUM_REGS, false, false>(p, a, b, c, blocks, vec_a, vec_b, stream);
  else
    launch_pipe_typed<BM, BN, BK, STAGES, MIN_BLOCKS, SUM_REGS, false, true>(p, a, b, c, blocks, vec_a, vec_b, stream);
  BL_CUDA_CHECK(cudaGetLastError());
}

template <int BM, int BN, int BK, int TM, int TN, int MIN_BLOCKS>
void launch_matmul(MatmulDeviceArgs p, const float* a, const float* b, float* c,
                   const LaunchConfig& config, cudaStream_t stream) {
  using T = MatmulTile<BM, BN, BK, TM, TN>;
  p.tiles_m = (p.m + BM - 1) / BM;
  p.tiles_n = (p.n + BN - 1) / BN;
  p.tiles_total = p.tiles_m * p.tiles_n * p.tiles_total;  // tiles_total held the batch
  int64_t grid = p.tiles_total;
  if (config.grid_cap > 0) grid = std::min<int64_t>(grid, config.grid_cap);
  grid = std::min<int64_t>(grid, int64_t{1} << 30);
  const unsigned blocks = static_cast<unsigned>(grid);
  if (!p.trans_a && !p.trans_b)
    matmul_kernel<BM, BN, BK, TM, TN, MIN_BLOCKS, true, false><<<blocks, T::kThreads, 0, stream>>>(p, a, b, c);
  else if (!p.trans_a && p.trans_b)
    matmul_kernel<BM, BN, BK, TM, TN, MIN_BLOCKS, true, true><<<blocks, T::kThreads, 0, stream>>>(p, a, b, c);
  else if (p.trans_a && !p.trans_b)
    matmul_kernel<BM, BN, BK, TM, TN, MIN_BLOCKS, false, false><<<blocks, T::kThreads, 0, stream>>>(p, a, b, c);
  else
    matmul_kernel<BM, BN, BK, TM, TN, MIN_BLOCKS, false, true><<<blocks, T::kThreads, 0, stream>>>(p, a, b, c);
  BL_CUDA_CHECK(cudaGetLastError());
}

// Largest dynamic shared memory of a pipelined tile over the four transpose combinations.
template <int BM, int BN, int BK, int STAGES>
constexpr size_t pipe_smem_bytes() {
  const size_t a = PipeTile<BM, BN, BK, STAGES, false, false>::kSmemBytes;
  const size_t b = PipeTile<BM, BN, BK, STAGES, true, true>::kSmemBytes;
  const size_t c = PipeTile<BM, BN, BK, STAGES, true, false>::kSmemBytes;
  const size_t d = PipeTile<BM, BN, BK, STAGES, false, true>::kSmemBytes;
  const size_t ab = a > b ? a : b, cd = c > d ? c : d;
  return ab > cd ? ab : cd;
}

}  // namespace
}  // namespace bl
