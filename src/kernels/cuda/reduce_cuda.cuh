// reduce_cuda.cuh: the CUDA engine behind every sum-schedule reduction (reduce, softmax, norms).
//
// Contiguous reductions (inner == 1): one group of 32 threads per leaf. Thread t of the group is
// lane t of schedule.h: it adds elements t, t + 32, t + 64, ... of the leaf in ascending order,
// and the lanes are folded by halving with 32-wide shuffles (lane j takes lane j + s for s = 16, 8,
// 4, 2, 1), exactly as fold_lanes. The shuffles are given width 32, so a 64-wide hardware warp
// (AMD) runs two independent groups. Strided reductions (inner > 1): one thread per (column, leaf),
// holding the 32 lanes in registers (adjacent threads read adjacent columns). The leaf values are
// then combined by the pairwise tree, one launch per tree level (or one thread per reduction for
// short trees): the same tree as leaf_tree, level by level. Nothing depends on the block size or
// grid cap: grid-stride loops cover any grid.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl::cuda {

// Block size (a multiple of 32 in [32, 1024]) and grid size for `work_blocks` blocks of work.
inline int block_size(const LaunchConfig& config) {
  int b = (config.block / 32) * 32;
  return std::min(1024, std::max(32, b));
}
inline int grid_size(int64_t work_blocks, const LaunchConfig& config) {
  int64_t g = std::max<int64_t>(1, std::min<int64_t>(work_blocks, int64_t{1} << 30));
  if (config.grid_cap > 0) g = std::min<int64_t>(g, config.grid_cap);
  return static_cast<int>(g);
}

// Stream-ordered scratch memory on the default stream, freed on scope exit.
template <class T>
struct DeviceScratch {
  T* ptr = nullptr;
  explicit DeviceScratch(int64_t count) {
    if (count > 0) BL_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr), count * sizeof(T), 0));
  }
  ~DeviceScratch() {
    if (ptr) cudaFreeAsync(ptr, 0);
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
};

template <class Step>
__global__ void leaf_contiguous_kernel(const float* x, int64_t n, int64_t leaves, int64_t jobs,
                                       const float* centers, float* p) {
  const int lane = threadIdx.x & 31;
  const int64_t groups_per_block = blockDim.x >> 5;
  const int64_t first = blockIdx.x * groups_per_block + (threadIdx.x >> 5);
  const int64_t stride = gridDim.x * groups_per_block;
  for (int64_t g = first; g < jobs; g += stride) {  // uniform across the 32-thread group
    const int64_t o = g / leaves, l = g % leaves;
    const int64_t start = l * kReduceLeaf;
    const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
    const float c = centers ? centers[o] : 0.0f;
    const float* xs = x + o * n + start;
    float acc = Step::init();
    int64_t i = lane;
    for (; i + 7 * 32 < len; i += 8 * 32) {
      float v[8];
#pragma unroll
      for (int q = 0; q < 8; ++q) v[q] = xs[i + 32 * q];
#pragma unroll
      for (int q = 0; q < 8; ++q) acc = Step::apply(acc, v[q], c);
    }
    for (; i < len; i += 32) acc = Step::apply(acc, xs[i], c);
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) acc = Step::combine(acc, __shfl_down_sync(0xFFFFFFFFu, acc, s, 32));
    if (lane == 0) p[g] = acc;
  }
}

template <class Step>
__global__ void leaf_strided_kernel(const float* x, int64_t n, int64_t inner, int64_t leaves, int64_t jobs,
                                    const float* centers, float* p) {
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < jobs;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % inner, rest = g / inner;
    const int64_t l = rest % leaves, o = rest / leaves;
    const int64_t start = l * kReduceLeaf;
    const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
    const float c = centers ? centers[o * inner + j] : 0.0f;
    const float* xs = x + (o * n + start) * inner + j;
    float lanes[kReduceLanes];
#pragma unroll
    for (int k = 0; k < kReduceLanes; ++k) lanes[k] = Step::init();
    int64_t i = 0;
    for (; i + kReduceLanes <= len; i += kReduceLanes) {
#pragma unroll
      for (int k = 0; k < kReduceLanes; ++k) lanes[k] = Step::apply(lanes[k], xs[(i + k) * inner], c);
    }
#pragma unroll
    for (int k = 0; k < kReduceLanes; ++k)
      if (i + k < len) lanes[k] = Step::apply(lanes[k], xs[(i + k) * inner], c);
#pragma unroll
    for (int s = kReduceLanes / 2; s >= 1; s >>= 1)
#pragma unroll
      for (int k = 0; k < s; ++k) lanes[k] = Step::combine(lanes[k], lanes[k + s]);
    p[(o * inner + j) * leaves + l] = lanes[0];
  }
}

// One level of the pairwise tree for every reduction: q[r][i] = p[r][2i] + p[r][2i+1] for i < m/2,
// q[r][m/2] = p[r][m-1] when m is odd.
template <class Step>
__global__ void tree_level_kernel(const float* p, int64_t m, float* q, int64_t reductions) {
  const int64_t next = m / 2 + (m % 2);
  const int64_t total = reductions * next;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / next, i = g % next;
    const float* pr = p + r * m;
    q[g] = (2 * i + 1 < m) ? Step::combine(pr[2 * i], pr[2 * i + 1]) : pr[m - 1];
  }
}

// Short trees: one thread per reduction runs leaf_tree (destroys p).
template <class Step>
__global__ void tree_thread_kernel(float* p, int64_t leaves, int64_t reductions, float* totals) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < reductions;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    totals[r] = leaf_tree<Step>(p + r * leaves, leaves);
}

template <class Step>
__global__ void fill_kernel(float* totals, int64_t count) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < count;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    totals[r] = Step::init();
}

// Tree totals of Step for every reduction r = o * inner + j into totals[r] (device pointers);
// centers[r] is the step's c (null means 0). n == 0 gives Step::init().
template <class Step>
void reduce_totals(const float* x, ReduceShape shape, const float* centers, float* totals,
                   const LaunchConfig& config) {
  const int64_t outer = shape.outer, n = shape.n, inner = shape.inner;
  const int64_t reductions = outer * inner;
  if (reductions == 0) return;
  const int block = block_size(config);
  if (n == 0) {
    fill_kernel<Step><<<grid_size((reductions + block - 1) / block, config), block>>>(totals, reductions);
    BL_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const int64_t leaves = reduce_leaf_count(n);
  DeviceScratch<float> p(reductions * leaves);
  if (inner == 1) {
    const int64_t jobs = outer * leaves;
    const int64_t groups = block / 32;
    leaf_contiguous_kernel<Step><<<grid_size((jobs + groups - 1) / groups, config), block>>>(
        x, n, leaves, jobs, centers, p.ptr);
  } else {
    const int64_t jobs = outer * leaves * inner;
    leaf_strided_kernel<Step><<<grid_size((jobs + block - 1) / block, config), block>>>(
        x, n, inner, leaves, jobs, centers, p.ptr);
  }
  BL_CUDA_CHECK(cudaGetLastError());
  if (leaves <= 64) {
    tree_thread_kernel<Step><<<grid_size((reductions + block - 1) / block, config), block>>>(
        p.ptr, leaves, reductions, totals);
    BL_CUDA_CHECK(cudaGetLastError());
    return;
  }
  DeviceScratch<float> q(reductions * (leaves / 2 + 1));
  float* src = p.ptr;
  float* dst = q.ptr;
  int64_t m = leaves;
  while (m > 1) {
    const int64_t next = m / 2 + (m % 2);
    float* out = next == 1 ? totals : dst;
    tree_level_kernel<Step><<<grid_size((reductions * next + block - 1) / block, config), block>>>(
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
  const int block = block_size(config);
  map_totals_kernel<<<grid_size((count + block - 1) / block, config), block>>>(v, count, f);
  BL_CUDA_CHECK(cudaGetLastError());
}

inline void finish_sync() { BL_CUDA_CHECK(cudaStreamSynchronize(0)); }

}  // namespace bl::cuda
