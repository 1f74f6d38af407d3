// reduce_rows.h: the CPU engine behind every sum-schedule reduction (reduce, softmax, norms).
//
// It computes, for each reduction of an (outer, n, inner) array, the leaf-tree total of a lane step
// (reduce.h) exactly as the reference does. Work is cut into tasks whose extent depends only on the
// shape (kTaskElements elements per task), so the thread count never changes a result: every leaf
// value is computed by one task in the reference order, and the tree over leaves runs in one task.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/reduce.h"

namespace bl::cpu {

// About this many elements per task (a pure constant: tasks depend on the shape only).
constexpr int64_t kTaskElements = int64_t{1} << 16;
// Most columns handled together when inner > 1. Each row of a block is one contiguous run of up to
// 1 KiB that the hardware prefetcher follows, and the block's 32 lanes (32 KiB) stay in L1; with
// 16 columns (64 bytes a row) a sum over the rows of a 4096-column array ran at a quarter of
// memory bandwidth, every row a new page and a lone cache line.
constexpr int64_t kColumnBlock = 256;
// Fewest column-loop jobs wanted before blocks get narrower (problem size only).
constexpr int64_t kMinColumnJobs = 32;
// How many rows ahead the column loop prefetches.
constexpr int64_t kPrefetchRows = 16;

// A contiguous leaf: x[0..len), len <= kReduceLeaf, with the per-reduction value c.
using ContiguousLeafFn = float (*)(const float* x, int64_t len, float c);

template <class Step>
float scalar_contiguous_leaf(const float* x, int64_t len, float c) {
  return leaf_reduce<Step>(x, len, 1, c);
}

// Leaf functions compiled for AVX2+FMA (reduce_avx2.cpp), AVX-512 (reduce_avx512.cpp) and AArch64
// NEON (reduce_neon.cpp), all from simd/reduce_leaf.h: leaf_<name>_<isa> for the names sum,
// abs_sum, square_sum, centered_square_sum, max and min. Call each only under its ISA variant
// (best_contiguous_leaf picks). max / min ignore c and need len >= 1.
#define BL_DECLARE_REDUCE_LEAVES(isa)                                         \
  float leaf_sum_##isa(const float* x, int64_t len, float c);                 \
  float leaf_abs_sum_##isa(const float* x, int64_t len, float c);             \
  float leaf_square_sum_##isa(const float* x, int64_t len, float c);          \
  float leaf_centered_square_sum_##isa(const float* x, int64_t len, float c); \
  float leaf_max_##isa(const float* x, int64_t len, float c);                 \
  float leaf_min_##isa(const float* x, int64_t len, float c);
BL_DECLARE_REDUCE_LEAVES(avx2)
BL_DECLARE_REDUCE_LEAVES(avx512)
BL_DECLARE_REDUCE_LEAVES(neon)
#undef BL_DECLARE_REDUCE_LEAVES

// Whether CPU kernels may use their SIMD versions (default true; tests turn it off to check the
// scalar versions too). Results are the same either way.
bool& simd_enabled();
// The ISA variant the CPU kernels that honour simd_enabled() run: active_isa(), or Isa::scalar
// while simd_enabled() is false.
Isa kernel_isa();

// The fastest contiguous leaf this CPU has for Step (scalar where no SIMD version exists).
template <class Step>
inline ContiguousLeafFn best_contiguous_leaf() {
  return &scalar_contiguous_leaf<Step>;
}
// The specialization of best_contiguous_leaf for a Step with SIMD leaves leaf_<name>_<isa>.
#define BL_BEST_CONTIGUOUS_LEAF(Step, name)                                                               \
  template <>                                                                                             \
  inline ContiguousLeafFn best_contiguous_leaf<Step>() {                                                  \
    return select_isa<ContiguousLeafFn>(kernel_isa(), &scalar_contiguous_leaf<Step>, &leaf_##name##_avx2, \
                                        &leaf_##name##_avx512, &leaf_##name##_neon);                      \
  }
BL_BEST_CONTIGUOUS_LEAF(StepAdd, sum)
BL_BEST_CONTIGUOUS_LEAF(StepAddAbs, abs_sum)
BL_BEST_CONTIGUOUS_LEAF(StepSquare, square_sum)
BL_BEST_CONTIGUOUS_LEAF(StepMax, max)
BL_BEST_CONTIGUOUS_LEAF(StepMin, min)
BL_BEST_CONTIGUOUS_LEAF(StepCenteredSquare, centered_square_sum)
#undef BL_BEST_CONTIGUOUS_LEAF

// Tree totals of Step for every reduction r = o * inner + j into totals[r]; centers[r] is the
// step's c (null means 0). n == 0 gives Step::init().
template <class Step>
void reduce_totals(const float* x, ReduceShape shape, const float* centers, float* totals,
                   ThreadPool& pool) {
  const int64_t outer = shape.outer, n = shape.n, inner = shape.inner;
  const int64_t reductions = outer * inner;
  if (reductions == 0) return;
  if (n == 0) {
    for (int64_t r = 0; r < reductions; ++r) totals[r] = Step::init();
    return;
  }
  const int64_t leaves = reduce_leaf_count(n);
  const int64_t leaf_elems = std::min<int64_t>(n, kReduceLeaf);
  std::vector<float> p(static_cast<size_t>(reductions * leaves));
  float* pd = p.data();

  if (inner == 1) {
    const ContiguousLeafFn leaf_fn = best_contiguous_leaf<Step>();
    const int64_t jobs = outer * leaves;
    const int64_t per_task = std::max<int64_t>(1, kTaskElements / leaf_elems);
    const int64_t tasks = (jobs + per_task - 1) / per_task;
    pool.parallel_for(tasks, [&](int64_t t) {
      const int64_t end = std::min(jobs, (t + 1) * per_task);
      for (int64_t g = t * per_task; g < end; ++g) {
        const int64_t o = g / leaves, l = g % leaves;
        const int64_t start = l * kReduceLeaf;
        const int64_t len = std::min<int64_t>(kReduceLeaf, n - start);
        pd[g] = leaf_fn(x + o * n + start, len, centers ? centers[o] : 0.0f);
      }
    });
  } else {
    // Narrower blocks (down to 16 columns) where wide ones would leave fewer than
    // kMinColumnJobs jobs, so mid-size arrays still spread over the threads. Shape only.
    int64_t block = kColumnBlock;
    while (block > 16 && outer * leaves * ((inner + block - 1) / block) < kMinColumnJobs) block /= 2;
    const int64_t col_blocks = (inner + block - 1) / block;
    const int64_t jobs = outer * leaves * col_blocks;
    const int64_t per_task = std::max<int64_t>(1, kTaskElements / (leaf_elems * std::min(inner, block)));
    const int64_t tasks = (jobs + per_task - 1) / per_task;
    pool.parallel_for(tasks, [&](int64_t t) {
      float lanes[kReduceLanes][kColumnBlock];
      float c[kColumnBlock];
      const int64_t end = std::min(jobs, (t + 1) * per_task);
      for (int64_t g = t * per_task; g < end; ++g) {
        const int64_t jb = g % col_blocks, l = (g / col_blocks) % leaves, o = g / (col_blocks * leaves);
        const int64_t j0 = jb * block;
        const int64_t width = std::min(block, inner - j0);
        const int64_t start = l * kReduceLeaf;
        const int64_t len = std::min<int64_t>(kReduceLeaf, n - start);
        for (int64_t jj = 0; jj < width; ++jj) c[jj] = centers ? centers[o * inner + j0 + jj] : 0.0f;
        for (int lane = 0; lane < kReduceLanes; ++lane)
          for (int64_t jj = 0; jj < width; ++jj) lanes[lane][jj] = Step::init();
        const float* base = x + (o * n + start) * inner + j0;
        for (int64_t i = 0; i < len; ++i) {
          float* lane = lanes[i % kReduceLanes];
          const float* src = base + i * inner;
          // Rows are a page or more apart: ask for a row kPrefetchRows ahead, line by line.
          if (i + kPrefetchRows < len)
            for (int64_t jj = 0; jj < width; jj += 16) __builtin_prefetch(src + kPrefetchRows * inner + jj);
          for (int64_t jj = 0; jj < width; ++jj) lane[jj] = Step::apply(lane[jj], src[jj], c[jj]);
        }
        for (int s = kReduceLanes / 2; s >= 1; s /= 2)
          for (int lane = 0; lane < s; ++lane)
            for (int64_t jj = 0; jj < width; ++jj)
              lanes[lane][jj] = Step::combine(lanes[lane][jj], lanes[lane + s][jj]);
        for (int64_t jj = 0; jj < width; ++jj) pd[(o * inner + j0 + jj) * leaves + l] = lanes[0][jj];
      }
    });
  }

  const int64_t per_task = std::max<int64_t>(1, kTaskElements / (leaves * 16));
  const int64_t tasks = (reductions + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t end = std::min(reductions, (t + 1) * per_task);
    for (int64_t r = t * per_task; r < end; ++r) totals[r] = leaf_tree<Step>(pd + r * leaves, leaves);
  });
}

// The tree total of Step over one contiguous reduction x[0..n), n >= 1, with the step value c:
// the leaves by leaf_fn (best_contiguous_leaf<Step>()) and the leaf tree, the same bits as
// reduce_totals gives for one row of an (outer, n, 1) array. `leaves` holds reduce_leaf_count(n)
// floats of scratch. Single-threaded: for kernels that keep a row in cache across passes.
template <class Step>
float row_total(ContiguousLeafFn leaf_fn, const float* x, int64_t n, float c, float* leaves) {
  const int64_t count = reduce_leaf_count(n);
  for (int64_t l = 0; l < count; ++l) {
    const int64_t start = l * kReduceLeaf;
    leaves[l] = leaf_fn(x + start, std::min<int64_t>(kReduceLeaf, n - start), c);
  }
  return leaf_tree<Step>(leaves, count);
}

// Calls body(r, i0, i1) over the elements [i0, i1) of row r of a (rows, n) array, cut into tasks
// of about kTaskElements elements (the cut depends on the shape only).
template <class Body>
void for_each_row_segment(int64_t rows, int64_t n, ThreadPool& pool, const Body& body) {
  const int64_t total = rows * n;
  if (total == 0) return;
  const int64_t tasks = (total + kTaskElements - 1) / kTaskElements;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t begin = t * kTaskElements;
    const int64_t end = std::min(total, begin + kTaskElements);
    int64_t g = begin;
    while (g < end) {
      const int64_t r = g / n, i0 = g % n;
      const int64_t i1 = std::min(n, i0 + (end - g));
      body(r, i0, i1);
      g += i1 - i0;
    }
  });
}

}  // namespace bl::cpu
