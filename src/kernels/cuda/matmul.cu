// CUDA contract GEMM: SIMT fp32 (no tensor cores: their internal accumulation is not the
// contract's), shared-memory tiles, register blocking.
//
// Each block computes a BM x BN tile of C for one batch entry; each thread a TM x TN sub-tile. The
// k range is walked in slabs of BK (BK divides kGemmKLeaf, so a slab never straddles a leaf). Per
// leaf a thread runs its TM x TN accumulators from +0.0 with one __fmaf_rn per k in ascending k
// (bl::fma), then folds them into the running sum: c = leaf0, c = c + leaf_j. Slabs past K
// are not padded with zeros inside a leaf (fma(0, 0, -0) would turn a -0 partial into +0): the last
// slab runs only its valid k. Tiles are walked by a grid-stride loop, so the grid size (grid_cap)
// changes nothing but speed. Results equal bl::matmul_reference bit for bit, for every variant.
//
// Two kernel families: matmul_kernel stages slabs through registers (double-buffered shared
// memory); matmul_pipe_kernel copies them with cp.async into 3-4 shared-memory stages and keeps the
// running leaf sum either in C or in registers.
//
// Speed (H200, bench/bench_gemm_cuda, GFLOP/s, cuBLAS strict fp32 in brackets): variant 6 reaches
// 29.5k [49.1k] at 2048^3, 30.8k [51.2k] at 4096^3 and 8192^3, 30.1k [43.8k] at 8192x768x3072,
// 31.0k [46.1k] at 8192x3072x768, 29.4k [43.1k] at 8192x768x768: 0.60 of cuBLAS on squares, 0.67-0.69
// on the LM shapes (the register-staged kernel, variant 3: 23-27k). Variant 0 picks the warp-tiled
// variant 10 of matmul_wide.cu for large shapes instead (warp tiles, leaf sums in shared memory):
// 36.4k at 4096^3, 37.3k at 8192^3, 35.7k, 33.9k, 32.1k at the LM shapes, 0.71-0.80 of cuBLAS.
// Profile of variant 6 at 4096^3: 3.1 cycles per issued instruction with 8 warps per
// multiprocessor, compute throughput 62% of peak: latency, not bandwidth, is the limit. What
// remains for 1.0 (none of it touches the order of operations) is listed in docs/performance.md.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/cuda/matmul_pipe.cuh"
#include "kernels/cuda/matmul_wide.h"
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

// Multiprocessors of the current device (read once per device index).
int64_t current_multiprocessors() {
  static int64_t cached[64] = {};
  int dev = 0;
  BL_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return 132;
  if (cached[dev] == 0) {
    int v = 0;
    BL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
    cached[dev] = v > 0 ? v : 1;
  }
  return cached[dev];
}

// Opt-in shared memory per block of the current device, bytes (read once per device index).
int64_t current_smem_optin() {
  static int64_t cached[64] = {};
  int dev = 0;
  BL_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return 0;
  if (cached[dev] == 0) {
    int v = 0;
    BL_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cached[dev] = v > 0 ? v : 1;
  }
  return cached[dev];
}

// True when the leaf-parallel mode (variants 14..16) may split this product: a single product
// (batch 1) on the default stream (where products share its scratch one after another) with two or
// more k leaves. Otherwise those variants run their tile over all of K in one launch.
bool leaf_parallel_applies(const MatmulArgs& args, void* stream) {
  return stream == nullptr && args.batch == 1 && gemm_k_leaf_count(args.k) >= 2;
}

// Variant 0 picks the tile by shape so that small products still fill the device: a 128 x 128
// tile when it gives every multiprocessor a tile (the warp-tiled variant 10 where the device has
// the shared memory for it, H200: 0.71-0.80 of cuBLAS against 0.60-0.67 for variant 6; else the
// pipeline of variant 6), else the 128 x 64 pipeline when that does. Below that (products with few
// rows, such as a 128-token prefill) the small warp tiles of variant 11 (32 x 64), with the k
// leaves run in parallel and folded in the same launch (variant 14) when a single product has two
// or more of them. Every variant gives the same bits, so the choice changes only speed.
// Where a device gives a block less shared memory (AMD: 64 KiB per workgroup), each choice falls
// back to the next smaller tile that fits; the 64 x 64 tile's static buffers always do.
template <int BM, int BN, int BK, int STAGES>
constexpr size_t pipe_smem_bytes() {
  const size_t a = PipeTile<BM, BN, BK, STAGES, false, false>::kSmemBytes;
  const size_t b = PipeTile<BM, BN, BK, STAGES, true, true>::kSmemBytes;
  const size_t c = PipeTile<BM, BN, BK, STAGES, true, false>::kSmemBytes;
  const size_t d = PipeTile<BM, BN, BK, STAGES, false, true>::kSmemBytes;
  const size_t ab = a > b ? a : b, cd = c > d ? c : d;
  return ab > cd ? ab : cd;
}

int auto_variant(const MatmulArgs& args, void* stream) {
  const int64_t sms = current_multiprocessors();
  const int64_t optin = current_smem_optin();
  const int64_t batch = args.batch, m = args.m, n = args.n;
  auto tiles = [&](int64_t bm, int64_t bn) { return batch * ((m + bm - 1) / bm) * ((n + bn - 1) / bn); };
  const bool fits10 = static_cast<int64_t>(matmul_wide_smem_bytes(10)) <= optin;
  const bool fits6 = static_cast<int64_t>(pipe_smem_bytes<128, 128, 32, 3>()) <= optin;
  const bool fits4 = static_cast<int64_t>(pipe_smem_bytes<128, 64, 16, 4>()) <= optin;
  const bool fits11 = static_cast<int64_t>(matmul_wide_smem_bytes(11)) <= optin;
  if (tiles(128, 128) >= sms) {
    if (fits10) return 10;
    if (fits6) return 6;
  }
  if (tiles(128, 64) >= sms && fits4) return 4;
  if (!fits11) return 1;
  return leaf_parallel_applies(args, stream) ? 14 : 11;
}

// c[m * ldc + n] = canonicalize(add(c[m * ldc + n], bias[n])) for every batch entry: the row
// broadcast add of the Tensor add op, after a variant that does not add the bias as it stores.
__global__ void add_bias_rows_kernel(float* c, const float* bias, int64_t batch, int64_t m, int64_t n,
                                     int64_t ldc, int64_t stride_c) {
  const int64_t total = batch * m * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % n, i = (g / n) % m, bi = g / (m * n);
    float* out = c + bi * stride_c + i * ldc + j;
    *out = canonicalize(add(*out, bias[j]));
  }
}

// The variant that runs: config.variant, or variant 0's choice by shape.
int resolve_variant(const MatmulArgs& args, const LaunchConfig& config, void* stream) {
  return config.variant == 0 ? auto_variant(args, stream) : config.variant;
}

// Runs the product with variant (bias: see matmul_bias_cuda; only the small-tile variants 11..16
// take it, the caller adds it after the others).
void run_variant(int variant, const MatmulArgs& args, const float* a, const float* b, float* c,
                 const float* bias, const LaunchConfig& config, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (variant >= 11 && variant <= 16) {  // small tiles; 14..16: the same tiles leaf-parallel
    const bool split = variant >= 14 && leaf_parallel_applies(args, stream);
    matmul_cuda_wide(variant >= 14 ? variant - 3 : variant, args, a, b, c, config, s, bias, split);
    return;
  }
  if (matmul_wide_variant(variant)) {  // 7..10: the wide-tile kernels of matmul_wide.cu
    matmul_cuda_wide(variant, args, a, b, c, config, s);
    return;
  }
  MatmulDeviceArgs p;
  p.m = args.m;
  p.n = args.n;
  p.k = args.k;
  p.lda = args.lda;
  p.ldb = args.ldb;
  p.ldc = args.ldc;
  p.stride_a = args.stride_a;
  p.stride_b = args.stride_b;
  p.stride_c = args.stride_c;
  p.trans_a = args.trans_a ? 1 : 0;
  p.trans_b = args.trans_b ? 1 : 0;
  p.tiles_m = p.tiles_n = 0;
  p.tiles_total = args.batch;
  switch (variant) {
    case 6:  // pipelined: 128 x 128 tiles, BK = 32, 3 cp.async stages, one block per multiprocessor
             // (variant 0's large-shape choice where variant 10 does not fit in shared memory)
      launch_matmul_pipe<128, 128, 32, 3, 1, false>(p, args.batch, a, b, c, config, s);
      break;
    case 1:  // small tiles, for small or skinny problems
      launch_matmul<64, 64, 8, 4, 4, 1>(p, a, b, c, config, s);
      break;
    case 2:  // pipelined: 128 x 128 tiles, BK = 16, 4 stages, one block, leaf sums in registers
      launch_matmul_pipe<128, 128, 16, 4, 1, true>(p, args.batch, a, b, c, config, s);
      break;
    case 3:  // register-staged 128 x 128 tiles, BK = 8, two blocks per multiprocessor
      launch_matmul<128, 128, 8, 8, 8, 2>(p, a, b, c, config, s);
      break;
    case 4:  // pipelined: 128 x 64 tiles (128 threads), BK = 16, 4 stages, three blocks
      launch_matmul_pipe<128, 64, 16, 4, 3, false>(p, args.batch, a, b, c, config, s);
      break;
    case 5:  // pipelined: 128 x 128 tiles, BK = 32, 3 stages, one block, leaf sums in registers
      launch_matmul_pipe<128, 128, 32, 3, 1, true>(p, args.batch, a, b, c, config, s);
      break;
    default:
      BL_CHECK(false, "matmul_cuda: LaunchConfig.variant must be 0..16, got ", config.variant);
  }
}

}  // namespace

void matmul_cuda(const MatmulArgs& args, const float* a, const float* b, float* c,
                 const LaunchConfig& config, void* stream) {
  matmul_check_args("matmul_cuda", args, a, b, c);
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  // variant picks the tile shape; the block size follows from it (config.block is not used).
  run_variant(resolve_variant(args, config, stream), args, a, b, c, nullptr, config, stream);
}

void matmul_bias_cuda(const MatmulArgs& args, const float* a, const float* b, const float* bias, float* c,
                      const LaunchConfig& config, void* stream) {
  matmul_check_args("matmul_bias_cuda", args, a, b, c);
  BL_CHECK(bias != nullptr || args.n == 0, "matmul_bias_cuda: bias is null for a product with ", args.n,
           " columns");
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  const int variant = resolve_variant(args, config, stream);
  const bool fused = variant >= 11 && variant <= 16;
  run_variant(variant, args, a, b, c, fused ? bias : nullptr, config, stream);
  if (fused) return;
  const cuda::GridShape g = cuda::grid_for(args.batch * args.m * args.n, config);
  add_bias_rows_kernel<<<g.blocks, g.threads, 0, static_cast<cudaStream_t>(stream)>>>(
      c, bias, args.batch, args.m, args.n, args.ldc, args.stride_c);
  BL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace bl
