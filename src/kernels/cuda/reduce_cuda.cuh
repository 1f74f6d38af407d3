// reduce_cuda.cuh: the CUDA engine behind every sum-schedule reduction (reduce, softmax, norms).
//
// Contiguous reductions (inner == 1): one group of 8 threads per leaf. Thread t of the group holds
// lanes 4t .. 4t+3 of schedule.h, so one float4 load at leaf offset 4t + 32 m gives each of its
// lanes its m-th element; each lane still adds its elements t, t + 32, ... in ascending order.
// The lanes are folded by halving exactly as fold_lanes: s = 16, 8, 4 by 8-wide shuffles between
// threads (lane 4t+k meets lane 4(t+s/4)+k), s = 2, 1 inside thread 0. The shuffles are given width 8,
// so nothing depends on the hardware warp width. Strided reductions (inner > 1): one thread per
// (column, leaf), holding the 32 lanes in registers (adjacent threads read adjacent columns). The
// leaf values are then combined by the pairwise tree, five levels per launch (leaf_tree_segment,
// one 32-thread group per segment of 32 values). Nothing depends on the block
// size or grid cap: grid-stride loops cover any grid, and every block size is clamped to what the
// kernel can launch with (fitted_block).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl::cuda {

// Block size (a multiple of 32 in [32, 1024]) and grid size for `work_blocks` blocks of work.
inline int block_size(const LaunchConfig& config) {
  int b = (config.block / 32) * 32;
  return std::min(1024, std::max(32, b));
}

// block_size(config) clamped to the most threads `kernel` can launch with (its register use may
// allow fewer than 1024), rounded down to a multiple of 32. Results never depend on the block size,
// so clamping only changes which thread does what.
// The kernel's limit is read once per kernel and cached by its address (a driver query costs about
// a microsecond, and small ops launch several kernels each); all devices of a process run the same
// compiled code, so one limit per kernel holds for all of them.
int cached_kernel_thread_limit(const void* kernel, int (*query)(const void*));
template <class Kernel>
int fitted_block(Kernel* kernel, const LaunchConfig& config) {
  const int limit = cached_kernel_thread_limit(reinterpret_cast<const void*>(kernel), [](const void* k) {
    cudaFuncAttributes attributes;
    BL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<Kernel*>(const_cast<void*>(k))));
    return attributes.maxThreadsPerBlock;
  });
  const int cap = std::max(32, (limit / 32) * 32);
  return std::min(block_size(config), cap);
}
inline int grid_size(int64_t work_blocks, const LaunchConfig& config) {
  int64_t g = std::max<int64_t>(1, std::min<int64_t>(work_blocks, int64_t{1} << 30));
  if (config.grid_cap > 0) g = std::min<int64_t>(g, config.grid_cap);
  return static_cast<int>(g);
}

// Scratch memory on the current device from the caching allocator (bitlearn/cuda_memory.h),
// given back on scope exit; reuse is safe because all work is ordered on the default stream.
// op names the caller in an out-of-memory error.
template <class T>
struct DeviceScratch {
  T* ptr = nullptr;
  int device = 0;
  explicit DeviceScratch(int64_t count, const char* op = "CUDA scratch buffer") {
    if (count <= 0) return;
    BL_CUDA_CHECK(cudaGetDevice(&device));
    ptr = static_cast<T*>(cuda_allocate(static_cast<size_t>(count) * sizeof(T), device, op));
  }
  ~DeviceScratch() {
    if (ptr) cuda_free(ptr, device);
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
};

// The value stored and reduced for element x (with the reduction's c): x itself for plain
// reductions; softmax maps x to exp(x - c) and keeps it.
struct MapIdentity {
  BL_HD static float map(float x, float) { return x; }
};

constexpr int kLeafGroup = 8;  // threads per leaf in the contiguous kernel, 4 lanes each

// One 8-thread group per leaf (see the top of this file). `vec` says that every leaf start of x
// (and of stored) is 16-byte aligned, so full float4 chunks may be loaded in one instruction; the
// lanes and their order are the same either way. When stored is not null, Map's value of every
// element is written there (same index as x; stored may alias x).
template <class Step, class Map>
__global__ void leaf_contiguous_kernel(const float* x, int64_t n, int64_t leaves, int64_t jobs,
                                       const float* centers, float* p, float* stored, bool vec) {
  const int t = threadIdx.x & (kLeafGroup - 1);
  const int64_t groups_per_block = blockDim.x / kLeafGroup;
  const int64_t stride = gridDim.x * groups_per_block;
  // All threads of a 32-thread warp run the same number of iterations (jobs past the end are idle
  // but still join the shuffles), because the shuffles name the whole warp in their mask.
  const int64_t warp_first = blockIdx.x * groups_per_block + (threadIdx.x >> 5) * (32 / kLeafGroup);
  const int64_t sub = (threadIdx.x >> 3) & 3;
  for (int64_t base = warp_first; base < jobs; base += stride) {
    const int64_t g = base + sub;
    const bool active = g < jobs;
    float a0 = Step::init(), a1 = Step::init(), a2 = Step::init(), a3 = Step::init();
    if (active) {
      const int64_t o = g / leaves, l = g % leaves;
      const int64_t start = l * kReduceLeaf;
      const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
      const float c = centers ? centers[o] : 0.0f;
      const float* xs = x + o * n + start;
      float* ys = stored ? stored + o * n + start : nullptr;
      int64_t i = 4 * t;
      if (vec) {
        for (; i + 3 * 32 + 3 < len; i += 4 * 32) {
          float4 v[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) v[q] = *reinterpret_cast<const float4*>(xs + i + 32 * q);
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            v[q].x = Map::map(v[q].x, c);
            v[q].y = Map::map(v[q].y, c);
            v[q].z = Map::map(v[q].z, c);
            v[q].w = Map::map(v[q].w, c);
            if (ys) *reinterpret_cast<float4*>(ys + i + 32 * q) = v[q];
            a0 = Step::apply(a0, v[q].x, c);
            a1 = Step::apply(a1, v[q].y, c);
            a2 = Step::apply(a2, v[q].z, c);
            a3 = Step::apply(a3, v[q].w, c);
          }
        }
        for (; i + 3 < len; i += 32) {
          float4 v = *reinterpret_cast<const float4*>(xs + i);
          v.x = Map::map(v.x, c);
          v.y = Map::map(v.y, c);
          v.z = Map::map(v.z, c);
          v.w = Map::map(v.w, c);
          if (ys) *reinterpret_cast<float4*>(ys + i) = v;
          a0 = Step::apply(a0, v.x, c);
          a1 = Step::apply(a1, v.y, c);
          a2 = Step::apply(a2, v.z, c);
          a3 = Step::apply(a3, v.w, c);
        }
      }
      for (; i < len; i += 32) {
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          if (i + k < len) {
            v[k] = Map::map(xs[i + k], c);
            if (ys) ys[i + k] = v[k];
          }
        }
        if (i + 0 < len) a0 = Step::apply(a0, v[0], c);
        if (i + 1 < len) a1 = Step::apply(a1, v[1], c);
        if (i + 2 < len) a2 = Step::apply(a2, v[2], c);
        if (i + 3 < len) a3 = Step::apply(a3, v[3], c);
      }
    }
    // fold_lanes: s = 16, 8, 4 across threads (lane 4t+k takes lane 4(t + s/4)+k), then s = 2, 1.
#pragma unroll
    for (int s = 4; s >= 1; s >>= 1) {
      a0 = Step::combine(a0, __shfl_down_sync(0xFFFFFFFFu, a0, s, kLeafGroup));
      a1 = Step::combine(a1, __shfl_down_sync(0xFFFFFFFFu, a1, s, kLeafGroup));
      a2 = Step::combine(a2, __shfl_down_sync(0xFFFFFFFFu, a2, s, kLeafGroup));
      a3 = Step::combine(a3, __shfl_down_sync(0xFFFFFFFFu, a3, s, kLeafGroup));
    }
    a0 = Step::combine(a0, a2);
    a1 = Step::combine(a1, a3);
    a0 = Step::combine(a0, a1);
    if (active && t == 0) p[g] = a0;
  }
}

// Leaves of reductions along a strided axis (inner > 1). The contract's leaf keeps kReduceLanes
// lane accumulators (lane k takes elements k, k + 32, ... of the leaf in order) and combines them
// pairwise (s = 16, 8, 4, 2, 1: lane k takes lane k + s). Each lane's chain is sequential, so a
// block runs every lane of a leaf in parallel: thread (lane, jj) accumulates lane `lane` of column
// j = tile * tj + jj (neighbouring threads read neighbouring columns), then the block combines the
// lanes through shared memory in the contract's order. tj = blockDim.x / kReduceLanes columns per
// block; a job is one (outer index, leaf, column tile).
template <class Step, class Map>
__global__ void leaf_strided_kernel(const float* x, int64_t n, int64_t inner, int64_t leaves, int64_t col_tiles,
                                    int64_t jobs, const float* centers, float* p) {
  __shared__ float part[kReduceLanes * 32];
  const int tj = static_cast<int>(blockDim.x) / kReduceLanes;
  const int jj = static_cast<int>(threadIdx.x) % tj, lane = static_cast<int>(threadIdx.x) / tj;
  for (int64_t g = blockIdx.x; g < jobs; g += gridDim.x) {
    const int64_t tile = g % col_tiles, rest = g / col_tiles;
    const int64_t l = rest % leaves, o = rest / leaves;
    const int64_t j = tile * tj + jj;
    const bool active = j < inner;
    const int64_t start = l * kReduceLeaf;
    const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
    float acc = Step::init();
    if (active) {
      const float c = centers ? centers[o * inner + j] : 0.0f;
      const float* xs = x + (o * n + start) * inner + j;
      const int64_t step = int64_t{kReduceLanes} * inner;
      int64_t i = lane;
      const float* q = xs + i * inner;
      for (; i + 3 * kReduceLanes < len; i += 4 * kReduceLanes, q += 4 * step) {
        const float v0 = q[0], v1 = q[step], v2 = q[2 * step], v3 = q[3 * step];
        acc = Step::apply(acc, Map::map(v0, c), c);
        acc = Step::apply(acc, Map::map(v1, c), c);
        acc = Step::apply(acc, Map::map(v2, c), c);
        acc = Step::apply(acc, Map::map(v3, c), c);
      }
      for (; i < len; i += kReduceLanes, q += step) acc = Step::apply(acc, Map::map(q[0], c), c);
    }
    part[lane * tj + jj] = acc;
    __syncthreads();
#pragma unroll
    for (int s = kReduceLanes / 2; s >= 1; s >>= 1) {
      if (lane < s) part[lane * tj + jj] = Step::combine(part[lane * tj + jj], part[(lane + s) * tj + jj]);
      __syncthreads();
    }
    if (active && lane == 0) p[(o * inner + j) * leaves + l] = part[jj];
    __syncthreads();
  }
}

// Five levels of the pairwise tree for every reduction: q[r][i] = the tree over the 32-aligned
// segment i of p[r][0..m) (the value of leaf_tree_segment), i < ceil(m / 32). One 32-thread group
// per segment: at step d = 1, 2, 4, 8, 16, lane i (a multiple of 2d) holds the node over
// [i, min(i + 2d, len)) as combine(its node, lane i + d's node), or keeps its node when i + d >= len
// (the odd last element moving up). Width-32 shuffles, so the hardware warp width does not matter.
template <class Step>
__global__ void tree_segment_kernel(const float* p, int64_t m, float* q, int64_t reductions) {
  const int lane = threadIdx.x & 31;
  const int64_t groups_per_block = blockDim.x >> 5;
  const int64_t next = (m + 31) / 32;
  const int64_t jobs = reductions * next;
  for (int64_t g = blockIdx.x * groups_per_block + (threadIdx.x >> 5); g < jobs;
       g += static_cast<int64_t>(gridDim.x) * groups_per_block) {  // uniform across the group
    const int64_t r = g / next, i = g % next;
    const int64_t start = 32 * i;
    const int len = static_cast<int>(m - start < 32 ? m - start : 32);
    float v = lane < len ? p[r * m + start + lane] : Step::init();
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const float w = __shfl_down_sync(0xFFFFFFFFu, v, d, 32);
      if (lane + d < len) v = Step::combine(v, w);
    }
    if (lane == 0) q[g] = v;
  }
}

template <class Step>
__global__ void fill_kernel(float* totals, int64_t count) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < count;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    totals[r] = Step::init();
}

// Tree totals of Step for every reduction r = o * inner + j into totals[r] (device pointers);
// centers[r] is the step's c (null means 0); every element enters as Map::map(x, c). When stored
// is not null (contiguous reductions only), Map's values are written there. n == 0 gives
// Step::init().
template <class Step, class Map = MapIdentity>
void reduce_totals(const float* x, ReduceShape shape, const float* centers, float* totals,
                   const LaunchConfig& config, float* stored = nullptr) {
  const int64_t outer = shape.outer, n = shape.n, inner = shape.inner;
  const int64_t reductions = outer * inner;
  if (reductions == 0) return;
  BL_CHECK(stored == nullptr || inner == 1, "reduce_totals: stored values need inner == 1, got inner = ", inner);
  if (n == 0) {
    const int block = fitted_block(fill_kernel<Step>, config);
    fill_kernel<Step><<<grid_size((reductions + block - 1) / block, config), block>>>(totals, reductions);
    BL_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const int64_t leaves = reduce_leaf_count(n);
  // One leaf per reduction: the leaf value is the total, written in place.
  DeviceScratch<float> p(leaves == 1 ? 0 : reductions * leaves);
  float* leaf_out = leaves == 1 ? totals : p.ptr;
  if (inner == 1) {
    const int64_t jobs = outer * leaves;
    const bool vec = n % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(stored) % 16 == 0;
    const int block = fitted_block(leaf_contiguous_kernel<Step, Map>, config);
    const int64_t groups = block / kLeafGroup;
    leaf_contiguous_kernel<Step, Map><<<grid_size((jobs + groups - 1) / groups, config), block>>>(
        x, n, leaves, jobs, centers, leaf_out, stored, vec);
  } else {
    // Columns per block: as many as the configured block holds (32 lanes each), at most the next
    // power of two >= inner, so narrow reductions do not idle most of the block.
    int tj = fitted_block(leaf_strided_kernel<Step, Map>, config) / kReduceLanes;
    int wanted = 1;
    while (wanted < inner && wanted < tj) wanted *= 2;
    tj = wanted;
    const int64_t col_tiles = (inner + tj - 1) / tj;
    const int64_t jobs = outer * leaves * col_tiles;
    leaf_strided_kernel<Step, Map><<<grid_size(jobs, config), tj * kReduceLanes>>>(
        x, n, inner, leaves, col_tiles, jobs, centers, leaf_out);
  }
  BL_CUDA_CHECK(cudaGetLastError());
  if (leaves == 1) return;
  // Five tree levels per pass until one value per reduction is left (the last pass writes totals).
  float* src = p.ptr;
  int64_t m = leaves;
  DeviceScratch<float> q(reductions * ((m + 31) / 32));
  float* dst = q.ptr;
  while (m > 1) {
    const int64_t next = (m + 31) / 32;
    float* out = next == 1 ? totals : dst;
    const int block = fitted_block(tree_segment_kernel<Step>, config);
    const int64_t groups = block / 32;
    tree_segment_kernel<Step><<<grid_size((reductions * next + groups - 1) / groups, config), block>>>(
        src, m, out, reductions);
    BL_CUDA_CHECK(cudaGetLastError());
    std::swap(src, dst);
    m = next;
  }
}

// Applies a per-element function f(total, index) to every total in place: used for finishing.
template <class F>
__global__ void map_totals_kernel(float* v, int64_t count, F f) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < count;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    v[r] = f(v[r]);
}

template <class F>
void map_totals(float* v, int64_t count, F f, const LaunchConfig& config) {
  if (count == 0) return;
  const int block = fitted_block(map_totals_kernel<F>, config);
  map_totals_kernel<<<grid_size((count + block - 1) / block, config), block>>>(v, count, f);
  BL_CUDA_CHECK(cudaGetLastError());
}

// Ends an op: work stays queued on the default stream (see cuda_sync_check in core/allocator.h).
inline void finish_sync() { cuda_sync_check("reduction"); }

}  // namespace bl::cuda
