// index.h: index_select, gather, scatter and embedding backward: element functions shared by the
// backends and the scalar references (the specification).
//
// Index values are i32 or i64; a value outside [0, extent) is an error. The references return the
// row-major position of the first bad index (or -1 when all are valid) and skip bad entries.
#pragma once

#include "contract/schedule.h"
#include "kernels/strided.h"

// Dispatch on the element size (1, 4, 8 bytes) and index dtype (i32 / i64) of the backends' entry
// points: `return CALL;` with T the unsigned element type and I the index type in scope. Expanded
// only where DType and Error (core/error.h) are visible; shared so both backends accept one set.
#define BL_INDEX_DISPATCH(CALL)                                                         \
  do {                                                                                  \
    bool i64 = index_dtype == DType::i64;                                               \
    switch (element_size) {                                                             \
      case 1: if (i64) { using T = uint8_t; using I = int64_t; return CALL; }           \
              else { using T = uint8_t; using I = int32_t; return CALL; }               \
      case 4: if (i64) { using T = uint32_t; using I = int64_t; return CALL; }          \
              else { using T = uint32_t; using I = int32_t; return CALL; }              \
      case 8: if (i64) { using T = uint64_t; using I = int64_t; return CALL; }          \
              else { using T = uint64_t; using I = int32_t; return CALL; }              \
      default: throw Error("index op: unsupported element size");                       \
    }                                                                                   \
  } while (0)

namespace bl {

// The one-dimensional contiguous view of n index values (extent 1 when n is 0), with which the
// backends validate a flat index list through the strided validation path.
inline StridedView flat_view(int64_t n) {
  StridedView v;
  v.ndim = 1;
  v.shape[0] = n > 0 ? n : 1;
  v.strides[0] = 1;
  return v;
}

// index_select on contiguous x viewed as [outer, extent, inner]: out is [outer, count, inner] with
// out[o][k][i] = x[o][index[k]][i]. T: unsigned type of the element size; I: int32_t / int64_t.
template <typename T, typename I>
int64_t index_select_reference(const T* x, int64_t outer, int64_t extent, int64_t inner,
                               const I* index, int64_t count, T* out) {
  for (int64_t k = 0; k < count; ++k)
    if (index[k] < 0 || index[k] >= extent) return k;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k)
      for (int64_t i = 0; i < inner; ++i)
        out[(o * count + k) * inner + i] = x[(o * extent + index[k]) * inner + i];
  return -1;
}

// gather: out (contiguous over index's shape) at position p = x at (coordinates of p, with the
// coordinate along dim replaced by index[p]). x_view has index's shape and x's strides with the
// dim stride set to 0; dim_stride is x's stride along dim, extent its extent there.
template <typename T, typename I>
int64_t gather_reference(const T* x, const StridedView& x_view, int64_t dim_stride, int64_t extent,
                         const I* index, const StridedView& index_view, T* out, int64_t n) {
  int64_t bad = -1;
  for (int64_t p = 0; p < n; ++p) {
    I j = index[strided_offset(index_view, p)];
    if (j < 0 || j >= extent) {
      if (bad < 0) bad = p;
      out[p] = T(0);
      continue;
    }
    out[p] = x[strided_offset(x_view, p) + static_cast<int64_t>(j) * dim_stride];
  }
  return bad;
}

// scatter into out (already a copy of x): index and src share a shape; for p in row-major order
// over that shape, out at (coordinates of p with dim replaced by index[p]) = src[p]. Later p
// overwrite earlier ones (last wins). The views have index's shape with the dim stride set to 0;
// *_dim_stride are the strides along dim.
template <typename T, typename I>
int64_t scatter_reference(T* out, const StridedView& out_view, int64_t out_dim_stride, int64_t extent,
                          const I* index, const StridedView& index_view, const T* src,
                          const StridedView& src_view, int64_t n) {
  int64_t bad = -1;
  for (int64_t p = 0; p < n; ++p) {
    I j = index[strided_offset(index_view, p)];
    if (j < 0 || j >= extent) {
      if (bad < 0) bad = p;
      continue;
    }
    out[strided_offset(out_view, p) + static_cast<int64_t>(j) * out_dim_stride] =
        src[strided_offset(src_view, p)];
  }
  return bad;
}

// The contract sum (schedule.h) of x[0..n): leaves of kReduceLeaf by 32 lanes, then the pairwise
// tree over leaves. scratch needs reduce_leaf_count(n) floats.
inline float schedule_sum_reference(const float* x, int64_t n, float* scratch) {
  int64_t leaves = reduce_leaf_count(n);
  for (int64_t l = 0; l < leaves; ++l) {
    int64_t begin = l * kReduceLeaf;
    int64_t len = n - begin < kReduceLeaf ? n - begin : kReduceLeaf;
    scratch[l] = reference_leaf_sum(x + begin, len);
  }
  return fold_leaves(scratch, leaves);
}

// Streaming form of the same sum, used by the CPU and CUDA kernels: values arrive one by one in
// order; full leaves are merged on a stack like a binary counter, which builds the same tree as
// fold_leaves (perfect subtrees of 2^k leaves from the left, an odd last element joining last).
struct ScheduleSumState {
  float lanes[kReduceLanes];
  float stack[64];      // leaf sums of perfect subtrees, largest first
  int64_t stack_size[64];  // leaves in each stack entry
  int depth;
  int64_t in_leaf;      // values in the current leaf
};

BL_HD void schedule_sum_begin(ScheduleSumState& s) {
  for (int j = 0; j < kReduceLanes; ++j) s.lanes[j] = 0.0f;
  s.depth = 0;
  s.in_leaf = 0;
}

BL_HD void schedule_sum_push_leaf(ScheduleSumState& s, float leaf) {
  s.stack[s.depth] = leaf;
  s.stack_size[s.depth] = 1;
  ++s.depth;
  while (s.depth >= 2 && s.stack_size[s.depth - 1] == s.stack_size[s.depth - 2]) {
    s.stack[s.depth - 2] = add(s.stack[s.depth - 2], s.stack[s.depth - 1]);
    s.stack_size[s.depth - 2] *= 2;
    --s.depth;
  }
}

BL_HD void schedule_sum_add(ScheduleSumState& s, float x) {
  int lane = static_cast<int>(s.in_leaf % kReduceLanes);
  s.lanes[lane] = add(s.lanes[lane], x);
  ++s.in_leaf;
  if (s.in_leaf == kReduceLeaf) {
    schedule_sum_push_leaf(s, fold_lanes(s.lanes));
    for (int j = 0; j < kReduceLanes; ++j) s.lanes[j] = 0.0f;
    s.in_leaf = 0;
  }
}

// The sum so far; the stack entries are combined right to left, matching fold_leaves' tree.
BL_HD float schedule_sum_end(ScheduleSumState& s) {
  if (s.in_leaf > 0) {
    schedule_sum_push_leaf(s, fold_lanes(s.lanes));
    s.in_leaf = 0;
  }
  if (s.depth == 0) return 0.0f;
  float acc = s.stack[s.depth - 1];
  for (int k = s.depth - 2; k >= 0; --k) acc = add(s.stack[k], acc);
  return acc;
}

// REFERENCE for embedding backward: grad is [n, width] (contiguous), ids [n];
// out[v][d] = contract sum over ascending p with ids[p] == v of grad[p][d]; NaN canonical.
template <typename I>
int64_t embedding_backward_reference(const float* grad, const I* ids, int64_t n, int64_t width,
                                     int64_t rows, float* out) {
  for (int64_t p = 0; p < n; ++p)
    if (ids[p] < 0 || ids[p] >= rows) return p;
  // Positions of each row, ascending.
  int64_t* count = new int64_t[rows + 1];
  for (int64_t v = 0; v <= rows; ++v) count[v] = 0;
  for (int64_t p = 0; p < n; ++p) ++count[ids[p] + 1];
  for (int64_t v = 0; v < rows; ++v) count[v + 1] += count[v];
  int64_t* positions = new int64_t[n > 0 ? n : 1];
  int64_t* fill = new int64_t[rows > 0 ? rows : 1];
  for (int64_t v = 0; v < rows; ++v) fill[v] = count[v];
  for (int64_t p = 0; p < n; ++p) positions[fill[ids[p]]++] = p;
  float* values = new float[n > 0 ? n : 1];
  float* scratch = new float[reduce_leaf_count(n) + 1];
  for (int64_t v = 0; v < rows; ++v) {
    int64_t m = count[v + 1] - count[v];
    for (int64_t d = 0; d < width; ++d) {
      for (int64_t j = 0; j < m; ++j) values[j] = grad[positions[count[v] + j] * width + d];
      out[v * width + d] = canonicalize(schedule_sum_reference(values, m, scratch));
    }
  }
  delete[] count;
  delete[] positions;
  delete[] fill;
  delete[] values;
  delete[] scratch;
  return -1;
}

}  // namespace bl
