// CUDA contract GEMM: SIMT fp32 (no tensor cores: their internal accumulation is not the
// contract's), shared-memory tiles, register blocking.
//
// Each block computes a BM x BN tile of C for one batch entry; each thread a TM x TN sub-tile. The
// k range is walked in slabs of BK (BK divides kGemmKLeaf, so a slab never straddles a leaf). Per
// leaf a thread runs its TM x TN accumulators from +0.0 with one __fmaf_rn per k in ascending k
// (bl::fma), then folds them into its outputs in C: c = leaf0, c = c + leaf_j. Slabs past K
// are not padded with zeros inside a leaf (fma(0, 0, -0) would turn a -0 partial into +0): the last
// slab runs only its valid k. Tiles are walked by a grid-stride loop, so the grid size (grid_cap)
// changes nothing but speed. Results equal bl::matmul_reference bit for bit.
//
// Speed (H200, bench/bench_gemm_cuda): variant 0 reaches about 25-27 TFLOP/s at 2048..8192 and the
// LM shapes, 0.5-0.6 of cuBLAS strict fp32 (43-51 TFLOP/s). The way to 1.0, none of which touches
// the order of operations: (1) cp.async (or the bulk tensor copy) into 3-4 shared-memory stages
// instead of the register round trip, so a block needs fewer registers and two blocks fit without
// the spills that the 128-register cap causes now; (2) a warp-tiled layout (each warp 64 x 32, each
// thread 2 x 2 sub-tiles of 4 x 4) so fragment loads are conflict-free broadcasts for A and B;
// (3) BK = 16 with 32-bit index arithmetic once the stages are in shared memory; (4) the leaf fold
// kept in shared memory or registers instead of C (one read-modify-write of C per 256 k now);
// (5) for skinny shapes (N = 768) split-K across blocks with the partials folded in ascending leaf
// order by a second tiny kernel.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "core/error.h"
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
__global__ void __launch_bounds__(MatmulTile<BM, BN, BK, TM, TN>::kThreads, MIN_BLOCKS)
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

}  // namespace

void matmul_cuda(const MatmulArgs& args, const float* a, const float* b, float* c,
                 const LaunchConfig& config, void* stream) {
  matmul_check_args("matmul_cuda", args, a, b, c);
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
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
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  // variant picks the tile shape; the block size follows from it (config.block is not used).
  switch (config.variant) {
    case 0:  // 128 x 128 tiles, 8 x 8 per thread, two blocks per multiprocessor
      launch_matmul<128, 128, 8, 8, 8, 2>(p, a, b, c, config, s);
      break;
    case 1:  // small tiles, for small or skinny problems
      launch_matmul<64, 64, 8, 4, 4, 1>(p, a, b, c, config, s);
      break;
    case 2:  // deeper k slabs
      launch_matmul<128, 128, 16, 8, 8, 2>(p, a, b, c, config, s);
      break;
    case 3:  // 128 x 128 tiles, one block per multiprocessor, no register cap
      launch_matmul<128, 128, 8, 8, 8, 1>(p, a, b, c, config, s);
      break;
    default:
      BL_CHECK(false, "matmul_cuda: LaunchConfig.variant must be 0..3, got ", config.variant);
  }
}

}  // namespace bl
