// matmul_wide.cuh: the warp-tiled CUDA contract GEMM kernel templates of matmul_wide.cu, for any
// tile shape (internal to the CUDA backend; the kernel lab instantiates shapes the library does
// not ship): wide tiles for large products, small tiles for products with few rows (such as the
// 128-token prefill of a language model, where 128 x 128 tiles would leave most multiprocessors
// idle).
//
// The order of operations is the one of every other GEMM kernel (src/kernels/matmul.h): per output and
// per k leaf a partial runs from +0.0 with one fma per k in ascending k; the partials are folded left
// to right (sum = leaf0, sum = sum + leaf_j) and the final sum is canonicalized. What differs from
// matmul.cu is only which thread owns which outputs and where the running sum waits between leaves:
//
//  - Block tiles up to 128 x 256 with 256 threads and up to 8 x 16 outputs per thread (more fma per
//    shared-memory read, more independent fma per warp to hide latency).
//  - Warp tiling: each warp owns a WM x WN sub-tile, its 32 threads laid out inside it. The lane
//    grouping of 32 is a layout choice only: each thread still owns whole outputs, so a different
//    hardware warp width changes speed, never bits.
//  - Thread outputs along a k-contiguous operand (plain A, transposed B) interleave thread by thread,
//    so the 8-byte reads along k of one warp hit distinct rows and distinct banks; along an
//    outer-contiguous operand they come in groups of 4 adjacent outputs read as one float4.
//  - The running leaf sum lives in shared memory, one slot per thread and output (no
//    synchronisation is needed, C is written once, and no 64-bit C addresses are held in registers:
//    keeping the sum in C, as matmul.cu does, spilled about 1 KB per thread at 8 x 16 outputs).
//
// Slabs of BK k steps (BK divides the leaf) are copied by cp.async in STAGES stages
// (matmul_pipe.cuh). Tiles are walked grid-stride, so the grid size changes nothing but speed.
//
// Leaf-parallel mode (SPLIT, the small tiles only, a single product): each work item is one tile
// and one k leaf; the block runs that leaf's fma chain from +0.0 and writes the unfolded partial to
// scratch. The block that completes a tile's last leaf (an integer arrival counter per tile) folds
// the tile's partials left to right (leaf 0, + leaf 1, + leaf 2, ...) and stores C. Which block folds
// changes nothing: the fold order is fixed by the leaf index. With a bias row the stored value is
// canonicalize(add(canonicalize(sum), bias[n])): the bits of the product followed by a separate add.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/matmul_pipe.cuh"
#include "kernels/cuda/per_device_once.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl {

// Scratch of the leaf-parallel mode, one per device (matmul_wide.cu): leaf partials and per-tile
// arrival counters, zero between products.
struct MatmulSplitWorkspace {
  float* partial = nullptr;
  int64_t partial_floats = 0;
  unsigned* counters = nullptr;
  int64_t counter_count = 0;
};

// Guards the workspaces from the lookup until the launch is queued.
std::mutex& matmul_split_mutex();

// The current device's workspace with room for partial_floats partials and counter_count
// counters (grown on demand). Callers hold matmul_split_mutex().
MatmulSplitWorkspace& matmul_split_workspace(int64_t partial_floats, int64_t counter_count);

namespace {

// The problem as the kernel sees it, passed by value.
struct WideArgs {
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  int64_t tiles_m, tiles_n, tiles_total;
  int64_t leaves;           // SPLIT: k leaves of the product (work items = tiles x leaves)
  float* partial;           // SPLIT: [leaves][m][n] unfolded leaf partials
  unsigned* counters;       // SPLIT: arrivals per tile, zero between products
  const float* bias;        // null, or N floats added to every row after the product
};

// The value stored for one output: the finished sum, canonical, plus the bias when there is one.
__device__ __forceinline__ float wide_store_value(float sum, const float* bias, int64_t n) {
  const float v = canonicalize(sum);
  return bias == nullptr ? v : canonicalize(add(v, bias[n]));
}

constexpr int kLaneGroup = 32;  // threads of one warp tile (a layout choice, see above)

// Shape of one warp-tiled kernel. WM = WN = 0: the block is one unit (no warp tiling).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_>
struct WideConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int kStages = STAGES_, kMinBlocks = MIN_BLOCKS_;
  static constexpr bool kWarpTiled = WM_ > 0;
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  // The unit a thread's outputs interleave over: a warp tile, or the whole block.
  static constexpr int kUnitM = kWarpTiled ? WM_ : BM;
  static constexpr int kUnitN = kWarpTiled ? WN_ : BN;
  static constexpr int kUnitRows = kUnitM / TM;  // threads down a unit
  static constexpr int kUnitCols = kUnitN / TN;  // threads across a unit
  static constexpr int kUnitThreads = kUnitRows * kUnitCols;
  static constexpr int kUnitsN = BN / kUnitN;
  static_assert(!kWarpTiled || kUnitThreads == kLaneGroup, "a warp tile holds 32 threads");
  static_assert(kThreads == (BM / kUnitM) * kUnitsN * kUnitThreads, "the threads cover the tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "outputs come in groups of 4");
  static_assert(kGemmKLeaf % BK == 0 && BK % 4 == 0, "a slab never straddles a leaf");
};

// Where a thread's T outputs along one side (rows of op(A) or columns of op(B)) lie in the tile,
// for R threads across the unit: k-contiguous operand out(i) = base + i * R (threads interleave one
// by one); outer-contiguous operand out(i) = base + (i / 4) * 4R + i % 4 (groups of 4 adjacent).
template <int R, bool KC>
struct SideMap {
  static constexpr int kSlotScale = KC ? 1 : 4;  // base = unit origin + slot * kSlotScale
  __device__ __forceinline__ static int offset(int base, int i) {
    return base + (i / 4) * (4 * R) + (i % 4) * (KC ? R : 1);
  }
};

// Two k steps (k0g, then k0g + 1) of a thread's TM x TN outputs with vector fragment reads: a
// k-contiguous operand gives one float2 per output line, an outer-contiguous one a float4 per group.
template <class C, bool A_KC, bool B_KC>
__device__ __forceinline__ void wide_step_pair(const float* sa, const float* sb, int k0g, int row_base,
                                               int col_base, float (&acc)[C::TM][C::TN]) {
  using SA = PipeSlab<C::BM, C::BK, A_KC>;
  using SB = PipeSlab<C::BN, C::BK, B_KC>;
  using MA = SideMap<C::kUnitRows, A_KC>;
  using MB = SideMap<C::kUnitCols, B_KC>;
  float fa[2][C::TM], fb[2][C::TN];
  if (A_KC) {
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
      const float2 v = *reinterpret_cast<const float2*>(sa + MA::offset(row_base, i) * SA::kPitch + k0g);
      fa[0][i] = v.x;
      fa[1][i] = v.y;
    }
  } else {
#pragma unroll
    for (int g = 0; g < 2; ++g)
#pragma unroll
      for (int i = 0; i < C::TM; i += 4) {
        const float4 v =
            *reinterpret_cast<const float4*>(sa + (k0g + g) * SA::kPitch + MA::offset(row_base, i));
        fa[g][i] = v.x; fa[g][i + 1] = v.y; fa[g][i + 2] = v.z; fa[g][i + 3] = v.w;
      }
  }
  if (B_KC) {
#pragma unroll
    for (int j = 0; j < C::TN; ++j) {
      const float2 v = *reinterpret_cast<const float2*>(sb + MB::offset(col_base, j) * SB::kPitch + k0g);
      fb[0][j] = v.x;
      fb[1][j] = v.y;
    }
  } else {
#pragma unroll
    for (int g = 0; g < 2; ++g)
#pragma unroll
      for (int j = 0; j < C::TN; j += 4) {
        const float4 v =
            *reinterpret_cast<const float4*>(sb + (k0g + g) * SB::kPitch + MB::offset(col_base, j));
        fb[g][j] = v.x; fb[g][j + 1] = v.y; fb[g][j + 2] = v.z; fb[g][j + 3] = v.w;
      }
  }
#pragma unroll
  for (int g = 0; g < 2; ++g)
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
      for (int j = 0; j < C::TN; ++j) acc[i][j] = fma(fa[g][i], fb[g][j], acc[i][j]);
}

// One k step with scalar reads (the short last slab of K only).
template <class C, bool A_KC, bool B_KC>
__device__ __forceinline__ void wide_step_one(const float* sa, const float* sb, int kk, int row_base,
                                              int col_base, float (&acc)[C::TM][C::TN]) {
  using SA = PipeSlab<C::BM, C::BK, A_KC>;
  using SB = PipeSlab<C::BN, C::BK, B_KC>;
  using MA = SideMap<C::kUnitRows, A_KC>;
  using MB = SideMap<C::kUnitCols, B_KC>;
  float fa[C::TM], fb[C::TN];
#pragma unroll
  for (int i = 0; i < C::TM; ++i) {
    const int r = MA::offset(row_base, i);
    fa[i] = A_KC ? sa[r * SA::kPitch + kk] : sa[kk * SA::kPitch + r];
  }
#pragma unroll
  for (int j = 0; j < C::TN; ++j) {
    const int col = MB::offset(col_base, j);
    fb[j] = B_KC ? sb[col * SB::kPitch + kk] : sb[kk * SB::kPitch + col];
  }
#pragma unroll
  for (int i = 0; i < C::TM; ++i)
#pragma unroll
    for (int j = 0; j < C::TN; ++j) acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
}

template <class C, bool A_KC, bool B_KC>
struct WideSmem {
  using SA = PipeSlab<C::BM, C::BK, A_KC>;
  using SB = PipeSlab<C::BN, C::BK, B_KC>;
  static constexpr int kStageFloats = SA::kFloats + SB::kFloats;
  static constexpr int kSumFloats = C::BM * C::BN;  // the running leaf sums
  static constexpr size_t kBytes = sizeof(float) * (size_t{C::kStages} * kStageFloats + kSumFloats);
  static_assert(kBytes <= 227 * 1024, "fits the shared memory of one multiprocessor");
};

template <class C, bool A_KC, bool B_KC, bool SPLIT>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    matmul_wide_kernel(WideArgs p, const float* __restrict__ a, const float* __restrict__ b, float* c,
                       int vec_a, int vec_b) {
  using S = WideSmem<C, A_KC, B_KC>;
  using MA = SideMap<C::kUnitRows, A_KC>;
  using MB = SideMap<C::kUnitCols, B_KC>;
  constexpr int TM = C::TM, TN = C::TN, BK = C::BK, kStages = C::kStages;
  extern __shared__ __align__(16) float smem[];
  float* sum_smem = smem + kStages * S::kStageFloats;  // [TM * TN][kThreads]
  const int tid = static_cast<int>(threadIdx.x);
  const int unit = tid / C::kUnitThreads, slot = tid % C::kUnitThreads;
  const int row_base = (unit / C::kUnitsN) * C::kUnitM + (slot / C::kUnitCols) * MA::kSlotScale;
  const int col_base = (unit % C::kUnitsN) * C::kUnitN + (slot % C::kUnitCols) * MB::kSlotScale;
  __shared__ int fold_here;  // SPLIT: this block completed the tile's last leaf

  for (int64_t tile = blockIdx.x; tile < p.tiles_total; tile += gridDim.x) {
    const int64_t tn = tile % p.tiles_n;
    const int64_t tm = (tile / p.tiles_n) % p.tiles_m;
    const int64_t bi = tile / (p.tiles_n * p.tiles_m);  // batch entry, or (SPLIT) k leaf
    const int64_t m0 = tm * C::BM, n0 = tn * C::BN;
    // SPLIT: the leaf's k slice of A and B (batch is 1); its K is the leaf's length.
    const int64_t k_total = SPLIT ? (p.k - bi * kGemmKLeaf < kGemmKLeaf ? p.k - bi * kGemmKLeaf : kGemmKLeaf) : p.k;
    const int64_t a_step = SPLIT ? (A_KC ? kGemmKLeaf : kGemmKLeaf * p.lda) : p.stride_a;
    const int64_t b_step = SPLIT ? (B_KC ? kGemmKLeaf : kGemmKLeaf * p.ldb) : p.stride_b;
    const float* ab = a + bi * a_step;
    const float* bb = b + bi * b_step;
    float* cb = SPLIT ? c : c + bi * p.stride_c;
    const int64_t slabs = (k_total + BK - 1) / BK;
    const int64_t m_left = p.m - m0, n_left = p.n - n0;  // tile-local row / column is inside when <

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    if (slabs == 0) {  // K == 0: the empty sum is +0.0
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int r = MA::offset(row_base, i);
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int col = MB::offset(col_base, j);
          if (r < m_left && col < n_left) cb[(m0 + r) * p.ldc + n0 + col] = 0.0f;
        }
      }
      continue;
    }

    // Prologue: slabs 0 .. kStages-2 in flight (one commit group each, empty past the end).
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < slabs) {
        float* st = smem + s * S::kStageFloats;
        pipe_load_slab<C::BM, BK, C::kThreads, A_KC>(st, ab, p.lda, m0, p.m, k_total, s, vec_a != 0);
        pipe_load_slab<C::BN, BK, C::kThreads, B_KC>(st + S::SA::kFloats, bb, p.ldb, n0, p.n, k_total, s,
                                                     vec_b != 0);
      }
      cp_async_commit();
    }

    for (int64_t s = 0; s < slabs; ++s) {
      cp_async_wait<kStages - 2>();  // slab s has landed (for this thread's copies)
      __syncthreads();               // ... for every thread's, and slab s-1 is no longer read
      const int64_t s_next = s + kStages - 1;
      if (s_next < slabs) {
        float* st = smem + static_cast<int>(s_next % kStages) * S::kStageFloats;
        pipe_load_slab<C::BM, BK, C::kThreads, A_KC>(st, ab, p.lda, m0, p.m, k_total, s_next, vec_a != 0);
        pipe_load_slab<C::BN, BK, C::kThreads, B_KC>(st + S::SA::kFloats, bb, p.ldb, n0, p.n, k_total,
                                                     s_next, vec_b != 0);
      }
      cp_async_commit();

      const float* sa = smem + static_cast<int>(s % kStages) * S::kStageFloats;
      const float* sb = sa + S::SA::kFloats;
      const int64_t k0 = s * BK;
      if (k0 + BK <= k_total) {
#pragma unroll
        for (int kg = 0; kg < BK; kg += 2) wide_step_pair<C, A_KC, B_KC>(sa, sb, kg, row_base, col_base, acc);
      } else {
        const int valid = static_cast<int>(k_total - k0);
        for (int kk = 0; kk < valid; ++kk) wide_step_one<C, A_KC, B_KC>(sa, sb, kk, row_base, col_base, acc);
      }

      // End of a leaf: fold the partial into the running sum (sum = leaf0, sum = sum + leaf_j) and
      // restart the partial at +0.0.
      const int64_t k_next = k0 + BK;
      if (k_next % kGemmKLeaf == 0 || k_next >= k_total) {
        const bool first_leaf = k0 < kGemmKLeaf;
        // Slot (i, j) of thread tid: only this thread reads or writes it.
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            float* slot_sum = sum_smem + (i * TN + j) * C::kThreads + tid;
            *slot_sum = first_leaf ? acc[i][j] : add(*slot_sum, acc[i][j]);
            acc[i][j] = 0.0f;
          }
      }
    }
    if (!SPLIT) {  // the finished sums, canonicalized, stored once
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int r = MA::offset(row_base, i);
        float* out_row = cb + (m0 + r) * p.ldc + n0;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int col = MB::offset(col_base, j);
          if (r < m_left && col < n_left)
            out_row[col] = wide_store_value(sum_smem[(i * TN + j) * C::kThreads + tid], p.bias, n0 + col);
        }
      }
    } else {
      // This leaf's partial to scratch, then count the arrival; the last of the tile's leaves folds.
      const int64_t plane = p.m * p.n;
      float* part = p.partial + bi * plane;
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int r = MA::offset(row_base, i);
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int col = MB::offset(col_base, j);
          if (r < m_left && col < n_left)
            part[(m0 + r) * p.n + n0 + col] = sum_smem[(i * TN + j) * C::kThreads + tid];
        }
      }
      __threadfence();  // the partial is visible device-wide before the arrival is counted
      __syncthreads();
      if (tid == 0) {
        const int64_t tile_mn = tile % (p.tiles_m * p.tiles_n);
        const unsigned before = atomicAdd(p.counters + tile_mn, 1u);
        fold_here = static_cast<int64_t>(before) + 1 == p.leaves ? 1 : 0;
        if (fold_here) p.counters[tile_mn] = 0u;  // every leaf has arrived: ready for the next product
      }
      __syncthreads();
      if (fold_here) {
        __threadfence();
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int r = MA::offset(row_base, i);
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            const int col = MB::offset(col_base, j);
            if (r < m_left && col < n_left) {
              // Volatile reads: other blocks wrote these, so no stale cached copy may be used.
              const volatile float* q = p.partial + (m0 + r) * p.n + n0 + col;
              float sum = q[0];
              for (int64_t l = 1; l < p.leaves; ++l) sum = add(sum, q[l * plane]);
              cb[(m0 + r) * p.ldc + n0 + col] = wide_store_value(sum, p.bias, n0 + col);
            }
          }
        }
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // the next tile's prologue overwrites the stages
  }
}

template <class C, bool A_KC, bool B_KC, bool SPLIT>
void launch_wide_typed(const WideArgs& p, const float* a, const float* b, float* c, unsigned blocks,
                       int vec_a, int vec_b, cudaStream_t stream) {
  using S = WideSmem<C, A_KC, B_KC>;
  auto kernel = matmul_wide_kernel<C, A_KC, B_KC, SPLIT>;
  static cuda::PerDeviceOnce smem_limit_set;  // this kernel's attribute, once per device
  cuda::set_max_dynamic_smem_once(smem_limit_set, kernel, static_cast<int>(S::kBytes), "matmul_cuda");
  kernel<<<blocks, C::kThreads, S::kBytes, stream>>>(p, a, b, c, vec_a, vec_b);
}

// SPLIT (leaf-parallel, batch 1, default stream) or one launch over all of K for each batch entry.
template <class C, bool SPLIT>
void launch_wide(const MatmulArgs& args, const float* a, const float* b, float* c, const float* bias,
                 const LaunchConfig& config, cudaStream_t stream) {
  WideArgs p;
  pipe_problem_sizes(args, p);
  p.tiles_m = (args.m + C::BM - 1) / C::BM;
  p.tiles_n = (args.n + C::BN - 1) / C::BN;
  p.leaves = SPLIT ? gemm_k_leaf_count(args.k) : 1;
  p.tiles_total = p.tiles_m * p.tiles_n * (SPLIT ? p.leaves : args.batch);
  p.partial = nullptr;
  p.counters = nullptr;
  p.bias = bias;
  int64_t grid = p.tiles_total;
  if (config.grid_cap > 0) grid = std::min<int64_t>(grid, config.grid_cap);
  grid = std::min<int64_t>(grid, int64_t{1} << 30);
  const unsigned blocks = static_cast<unsigned>(grid);
  const int vec_a = rows_16b_aligned(a, args.lda, args.stride_a, args.batch) ? 1 : 0;
  const int vec_b = rows_16b_aligned(b, args.ldb, args.stride_b, args.batch) ? 1 : 0;
  std::unique_lock<std::mutex> lock(matmul_split_mutex(), std::defer_lock);
  if (SPLIT) {
    BL_CHECK(args.batch == 1 && stream == nullptr && p.leaves >= 2,
             "matmul_cuda: the leaf-parallel mode needs one product with two or more k leaves on the default stream");
    lock.lock();
    MatmulSplitWorkspace& w = matmul_split_workspace(p.leaves * args.m * args.n, p.tiles_m * p.tiles_n);
    p.partial = w.partial;
    p.counters = w.counters;
  }
  // A is k-contiguous when plain (M x K), B when transposed (N x K).
  if (!args.trans_a && !args.trans_b)
    launch_wide_typed<C, true, false, SPLIT>(p, a, b, c, blocks, vec_a, vec_b, stream);
  else if (!args.trans_a && args.trans_b)
    launch_wide_typed<C, true, true, SPLIT>(p, a, b, c, blocks, vec_a, vec_b, stream);
  else if (args.trans_a && !args.trans_b)
    launch_wide_typed<C, false, false, SPLIT>(p, a, b, c, blocks, vec_a, vec_b, stream);
  else
    launch_wide_typed<C, false, true, SPLIT>(p, a, b, c, blocks, vec_a, vec_b, stream);
  BL_CUDA_CHECK(cudaGetLastError());
}

// The small tiles over all of K, or leaf-parallel when split.
template <class C>
void launch_small(const MatmulArgs& args, const float* a, const float* b, float* c, const float* bias,
                  bool split, const LaunchConfig& config, cudaStream_t stream) {
  if (split)
    launch_wide<C, true>(args, a, b, c, bias, config, stream);
  else
    launch_wide<C, false>(args, a, b, c, bias, config, stream);
}

template <class C>
size_t wide_smem_max() {
  return std::max(std::max(WideSmem<C, true, false>::kBytes, WideSmem<C, true, true>::kBytes),
                  std::max(WideSmem<C, false, false>::kBytes, WideSmem<C, false, true>::kBytes));
}

}  // namespace
}  // namespace bl
