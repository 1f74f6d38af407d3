// index_cpu.cpp: CPU entry points of index_select, gather, scatter and embedding backward.
//
// Indices are validated first (the first bad one in row-major order is reported); then the data
// moves. Scatter is parallel over lines (positions that differ outside dim), which never collide,
// and walks each line in ascending order along dim, so the last write in row-major order wins.
// Embedding backward groups positions by row (ascending), then sums each row's contributions by
// the contract schedule, vectorized across the row's columns.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/cpu/map_cpu.h"
#include "kernels/index.h"

namespace bl {

// The shared loop helpers of the CPU backend (kernels/cpu/*.h) live in bl::cpu.
using namespace cpu;

namespace {

// First p in [0, n) with index at p outside [0, extent), or -1. Parallel with a fixed partition;
// each task finds its own first, the smallest wins.
template <typename I>
int64_t first_bad_index(const I* index, const StridedView& view, int64_t n, int64_t extent,
                        ThreadPool& pool) {
  int64_t tasks = (n + kCpuElementwiseChunk - 1) / kCpuElementwiseChunk;
  std::vector<int64_t> bad(static_cast<size_t>(std::max<int64_t>(tasks, 1)), -1);
  run_chunks(n, pool, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      I j = index[strided_offset(view, p)];
      if (j < 0 || j >= extent) {
        bad[static_cast<size_t>(begin / kCpuElementwiseChunk)] = p;
        return;
      }
    }
  });
  for (int64_t b : bad)
    if (b >= 0) return b;
  return -1;
}

template <typename T, typename I>
int64_t index_select_typed(const T* x, int64_t outer, int64_t extent, int64_t inner, const I* index,
                           int64_t count, T* out, ThreadPool& pool) {
  int64_t bad = first_bad_index(index, flat_view(count), count, extent, pool);
  if (bad >= 0) return bad;
  int64_t rows = outer * count;
  int64_t rows_per_task = std::max<int64_t>(1, kCpuElementwiseChunk / std::max<int64_t>(inner, 1));
  int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  auto body = [&](int64_t t) {
    int64_t end = std::min(rows, (t + 1) * rows_per_task);
    for (int64_t r = t * rows_per_task; r < end; ++r) {
      int64_t o = r / count, k = r % count;
      const T* src = x + (o * extent + static_cast<int64_t>(index[k])) * inner;
      T* dst = out + r * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
    }
  };
  if (tasks <= 1) {
    if (tasks == 1) body(0);
  } else {
    pool.parallel_for(tasks, body);
  }
  return -1;
}

template <typename T, typename I>
int64_t gather_typed(const T* x, const StridedView& x_view, int64_t dim_stride, int64_t extent,
                     const I* index, const StridedView& index_view, T* out, int64_t n,
                     ThreadPool& pool) {
  int64_t bad = first_bad_index(index, index_view, n, extent, pool);
  if (bad >= 0) return bad;
  run_chunks(n, pool, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      I j = index[strided_offset(index_view, p)];
      out[p] = x[strided_offset(x_view, p) + static_cast<int64_t>(j) * dim_stride];
    }
  });
  return -1;
}

template <typename T, typename I>
int64_t scatter_typed(T* out, const StridedView& out_lines, int64_t out_dim_stride, int64_t extent,
                      const I* index, const StridedView& index_lines, int64_t index_dim_stride,
                      const T* src, const StridedView& src_lines, int64_t src_dim_stride,
                      int64_t count, int64_t n_lines, ThreadPool& pool) {
  // Validation first: no write happens when any index is bad. The reported position is
  // line * count + j (lines in row-major order of the non-dim coordinates): a defined choice.
  int64_t bad = -1;
  for (int64_t l = 0; l < n_lines && bad < 0; ++l) {
    const I* line = index + strided_offset(index_lines, l);
    for (int64_t j = 0; j < count; ++j) {
      I v = line[j * index_dim_stride];
      if (v < 0 || v >= extent) {
        bad = l * count + j;
        break;
      }
    }
  }
  if (bad >= 0) return bad;
  int64_t per_line = std::max<int64_t>(count, 1);
  int64_t lines_per_task = std::max<int64_t>(1, kCpuElementwiseChunk / per_line);
  int64_t tasks = (n_lines + lines_per_task - 1) / lines_per_task;
  auto body = [&](int64_t t) {
    int64_t end = std::min(n_lines, (t + 1) * lines_per_task);
    for (int64_t l = t * lines_per_task; l < end; ++l) {
      const I* line_index = index + strided_offset(index_lines, l);
      const T* line_src = src + strided_offset(src_lines, l);
      T* line_out = out + strided_offset(out_lines, l);
      for (int64_t j = 0; j < count; ++j)
        line_out[static_cast<int64_t>(line_index[j * index_dim_stride]) * out_dim_stride] =
            line_src[j * src_dim_stride];
    }
  };
  if (tasks == 1) body(0);
  else if (tasks > 1) pool.parallel_for(tasks, body);
  return -1;
}

}  // namespace

int64_t index_select_cpu(size_t element_size, DType index_dtype, const void* x, int64_t outer,
                         int64_t extent, int64_t inner, const void* index, int64_t count, void* out,
                         ThreadPool& pool) {
  BL_INDEX_DISPATCH((index_select_typed<T, I>(static_cast<const T*>(x), outer, extent, inner,
                                              static_cast<const I*>(index), count,
                                              static_cast<T*>(out), pool)));
}

int64_t gather_cpu(size_t element_size, DType index_dtype, const void* x, const StridedView& x_view,
                   int64_t dim_stride, int64_t extent, const void* index, const StridedView& index_view,
                   void* out, int64_t n, ThreadPool& pool) {
  BL_INDEX_DISPATCH((gather_typed<T, I>(static_cast<const T*>(x), x_view, dim_stride, extent,
                                        static_cast<const I*>(index), index_view,
                                        static_cast<T*>(out), n, pool)));
}

int64_t scatter_cpu(size_t element_size, DType index_dtype, void* out, const StridedView& out_lines,
                    int64_t out_dim_stride, int64_t extent, const void* index,
                    const StridedView& index_lines, int64_t index_dim_stride, const void* src,
                    const StridedView& src_lines, int64_t src_dim_stride, int64_t count,
                    int64_t n_lines, ThreadPool& pool) {
  BL_INDEX_DISPATCH((scatter_typed<T, I>(static_cast<T*>(out), out_lines, out_dim_stride, extent,
                                         static_cast<const I*>(index), index_lines,
                                         index_dim_stride, static_cast<const T*>(src), src_lines,
                                         src_dim_stride, count, n_lines, pool)));
}


namespace {

// Positions of each row in ascending order: row v owns positions[start[v] .. start[v + 1]).
template <typename I>
int64_t group_by_row(const I* ids, int64_t n, int64_t rows, std::vector<int64_t>& start,
                     std::vector<int64_t>& positions) {
  for (int64_t p = 0; p < n; ++p)
    if (ids[p] < 0 || ids[p] >= rows) return p;
  start.assign(static_cast<size_t>(rows + 1), 0);
  for (int64_t p = 0; p < n; ++p) ++start[static_cast<size_t>(ids[p]) + 1];
  for (int64_t v = 0; v < rows; ++v) start[v + 1] += start[v];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  positions.resize(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) positions[static_cast<size_t>(fill[ids[p]]++)] = p;
  return -1;
}

// One row's gradient: the contract sum over its positions, for every column at once.
void sum_row(const float* grad, int64_t width, const int64_t* positions, int64_t m, float* out,
             std::vector<float>& lanes, std::vector<float>& stack) {
  lanes.assign(static_cast<size_t>(kReduceLanes * width), 0.0f);
  stack.resize(static_cast<size_t>(64 * width));
  int64_t stack_size[64];
  int depth = 0;
  auto fold_and_push = [&]() {
    for (int s = kReduceLanes / 2; s >= 1; s /= 2)
      for (int j = 0; j < s; ++j) {
        float* dst = &lanes[static_cast<size_t>(j * width)];
        const float* add_from = &lanes[static_cast<size_t>((j + s) * width)];
        for (int64_t d = 0; d < width; ++d) dst[d] = add(dst[d], add_from[d]);
      }
    float* top = &stack[static_cast<size_t>(depth * width)];
    for (int64_t d = 0; d < width; ++d) top[d] = lanes[static_cast<size_t>(d)];
    stack_size[depth] = 1;
    ++depth;
    while (depth >= 2 && stack_size[depth - 1] == stack_size[depth - 2]) {
      float* lower = &stack[static_cast<size_t>((depth - 2) * width)];
      const float* upper = &stack[static_cast<size_t>((depth - 1) * width)];
      for (int64_t d = 0; d < width; ++d) lower[d] = add(lower[d], upper[d]);
      stack_size[depth - 2] *= 2;
      --depth;
    }
    std::fill(lanes.begin(), lanes.end(), 0.0f);
  };
  for (int64_t j = 0; j < m; ++j) {
    int64_t lane = (j % kReduceLeaf) % kReduceLanes;
    float* acc = &lanes[static_cast<size_t>(lane * width)];
    const float* row = grad + positions[j] * width;
    for (int64_t d = 0; d < width; ++d) acc[d] = add(acc[d], row[d]);
    if ((j + 1) % kReduceLeaf == 0) fold_and_push();
  }
  if (m % kReduceLeaf != 0) fold_and_push();
  if (depth == 0) {
    for (int64_t d = 0; d < width; ++d) out[d] = 0.0f;
    return;
  }
  for (int64_t d = 0; d < width; ++d) {
    float acc = stack[static_cast<size_t>((depth - 1) * width + d)];
    for (int k = depth - 2; k >= 0; --k) acc = add(stack[static_cast<size_t>(k * width + d)], acc);
    out[d] = canonicalize(acc);
  }
}

template <typename I>
int64_t embedding_backward_typed(const float* grad, const I* ids, int64_t n, int64_t width,
                                 int64_t rows, float* out, ThreadPool& pool) {
  std::vector<int64_t> start, positions;
  int64_t bad = group_by_row(ids, n, rows, start, positions);
  if (bad >= 0) return bad;
  constexpr int64_t kRowsPerTask = 16;
  int64_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  auto body = [&](int64_t t) {
    std::vector<float> lanes, stack;
    int64_t end = std::min(rows, (t + 1) * kRowsPerTask);
    for (int64_t v = t * kRowsPerTask; v < end; ++v)
      sum_row(grad, width, positions.data() + start[v], start[v + 1] - start[v], out + v * width,
              lanes, stack);
  };
  if (tasks == 1) body(0);
  else if (tasks > 1) pool.parallel_for(tasks, body);
  return -1;
}

}  // namespace

int64_t embedding_backward_cpu(DType index_dtype, const float* grad, const void* ids, int64_t n,
                               int64_t width, int64_t rows, float* out, ThreadPool& pool) {
  if (index_dtype == DType::i64)
    return embedding_backward_typed(grad, static_cast<const int64_t*>(ids), n, width, rows, out, pool);
  return embedding_backward_typed(grad, static_cast<const int32_t*>(ids), n, width, rows, out, pool);
}

}  // namespace bl
