// index_cuda.cu: CUDA entry points of index_select, gather, scatter and embedding backward.
//
// Indices are validated by a kernel that keeps the smallest bad position with an integer atomicMin
// (integer atomics are exact; no float atomics anywhere). Scatter runs one thread per line and
// walks the line in ascending order along dim: the last write in order wins, as on the CPU.
// Embedding backward groups positions by row on the host (a stable counting sort), then one
// thread per (row, column) sums its contributions with the contract's streaming schedule.
#include <vector>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/index.h"

namespace bl {

// The shared launch helpers of the CUDA backend (kernels/cuda/*.cuh) live in bl::cuda.
using namespace cuda;

namespace {

constexpr unsigned long long kNoBad = ~0ull;

// Device scratch for one unsigned long long from the caching allocator, given back at scope exit.
struct DeviceFlag {
  unsigned long long* ptr = nullptr;
  int device = 0;
  DeviceFlag() {
    BL_CUDA_CHECK(cudaGetDevice(&device));
    ptr = static_cast<unsigned long long*>(
        cuda_allocate(sizeof(unsigned long long), device, "index validation"));
    unsigned long long init = kNoBad;
    try {
      BL_CUDA_CHECK(cudaMemcpy(ptr, &init, sizeof init, cudaMemcpyHostToDevice));
    } catch (...) {
      cuda_free(ptr, device);
      throw;
    }
  }
  ~DeviceFlag() { cuda_free(ptr, device); }
  int64_t read(const char* op) {
    cuda_sync_check(op);
    unsigned long long v = 0;
    BL_CUDA_CHECK(cudaMemcpy(&v, ptr, sizeof v, cudaMemcpyDeviceToHost));
    return v == kNoBad ? -1 : static_cast<int64_t>(v);
  }
};

// Position t reads index at offset(lines, t / count) + (t % count) * dim_stride; count == 1 with
// a full view and dim_stride 0 gives plain row-major validation.
template <typename I>
__global__ void validate_kernel(const I* index, StridedView lines, int64_t count, int64_t dim_stride,
                                int64_t extent, int64_t n, unsigned long long* bad) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += step) {
    I j = index[strided_offset(lines, t / count) + (t % count) * dim_stride];
    if (j < 0 || j >= extent) atomicMin(bad, static_cast<unsigned long long>(t));
  }
}

template <typename I>
int64_t validate(const I* index, const StridedView& lines, int64_t count, int64_t dim_stride,
                 int64_t extent, int64_t n, const LaunchConfig& cfg, const char* op) {
  DeviceFlag flag;
  GridShape g = grid_for(n, cfg);
  validate_kernel<<<g.blocks, g.threads>>>(index, lines, count, dim_stride, extent, n, flag.ptr);
  return flag.read(op);
}

template <typename T, typename I>
__global__ void index_select_kernel(const T* x, int64_t extent, int64_t inner, const I* index,
                                    int64_t count, T* out, int64_t n) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    int64_t i = e % inner;
    int64_t r = e / inner;
    int64_t k = r % count, o = r / count;
    out[e] = x[(o * extent + static_cast<int64_t>(index[k])) * inner + i];
  }
}

template <typename T, typename I>
__global__ void gather_kernel(const T* x, StridedView xv, int64_t dim_stride, const I* index,
                              StridedView iv, T* out, int64_t n) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    I j = index[strided_offset(iv, p)];
    out[p] = x[strided_offset(xv, p) + static_cast<int64_t>(j) * dim_stride];
  }
}

template <typename T, typename I>
__global__ void scatter_kernel(T* out, StridedView ol, int64_t out_dim_stride, const I* index,
                               StridedView il, int64_t index_dim_stride, const T* src,
                               StridedView sl, int64_t src_dim_stride, int64_t count,
                               int64_t n_lines) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < n_lines;
       l += step) {
    const I* line_index = index + strided_offset(il, l);
    const T* line_src = src + strided_offset(sl, l);
    T* line_out = out + strided_offset(ol, l);
    for (int64_t j = 0; j < count; ++j)
      line_out[static_cast<int64_t>(line_index[j * index_dim_stride]) * out_dim_stride] =
          line_src[j * src_dim_stride];
  }
}

template <typename T, typename I>
int64_t index_select_typed(const void* x, int64_t outer, int64_t extent, int64_t inner,
                           const void* index, int64_t count, void* out, const LaunchConfig& cfg) {
  const I* idx = static_cast<const I*>(index);
  int64_t bad = validate(idx, flat_view(count), 1, 0, extent, count, cfg, "index_select");
  if (bad >= 0) return bad;
  int64_t n = outer * count * inner;
  if (n == 0) return -1;
  GridShape g = grid_for(n, cfg);
  index_select_kernel<<<g.blocks, g.threads>>>(static_cast<const T*>(x), extent, inner, idx, count,
                                               static_cast<T*>(out), n);
  cuda_sync_check("index_select");
  return -1;
}

template <typename T, typename I>
int64_t gather_typed(const void* x, const StridedView& xv, int64_t dim_stride, int64_t extent,
                     const void* index, const StridedView& iv, void* out, int64_t n,
                     const LaunchConfig& cfg) {
  const I* idx = static_cast<const I*>(index);
  int64_t bad = validate(idx, iv, 1, 0, extent, n, cfg, "gather");
  if (bad >= 0) return bad;
  GridShape g = grid_for(n, cfg);
  gather_kernel<<<g.blocks, g.threads>>>(static_cast<const T*>(x), xv, dim_stride, idx, iv,
                                         static_cast<T*>(out), n);
  cuda_sync_check("gather");
  return -1;
}

template <typename T, typename I>
int64_t scatter_typed(void* out, const StridedView& ol, int64_t out_dim_stride, int64_t extent,
                      const void* index, const StridedView& il, int64_t index_dim_stride,
                      const void* src, const StridedView& sl, int64_t src_dim_stride, int64_t count,
                      int64_t n_lines, const LaunchConfig& cfg) {
  const I* idx = static_cast<const I*>(index);
  int64_t bad = validate(idx, il, count, index_dim_stride, extent, n_lines * count, cfg, "scatter");
  if (bad >= 0) return bad;
  GridShape g = grid_for(n_lines, cfg);
  scatter_kernel<<<g.blocks, g.threads>>>(static_cast<T*>(out), ol, out_dim_stride, idx, il,
                                          index_dim_stride, static_cast<const T*>(src), sl,
                                          src_dim_stride, count, n_lines);
  cuda_sync_check("scatter");
  return -1;
}

}  // namespace

int64_t index_select_cuda(size_t element_size, DType index_dtype, const void* x, int64_t outer,
                          int64_t extent, int64_t inner, const void* index, int64_t count, void* out,
                          const LaunchConfig& cfg) {
  BL_INDEX_DISPATCH((index_select_typed<T, I>(x, outer, extent, inner, index, count, out, cfg)));
}

int64_t gather_cuda(size_t element_size, DType index_dtype, const void* x, const StridedView& x_view,
                    int64_t dim_stride, int64_t extent, const void* index, const StridedView& index_view,
                    void* out, int64_t n, const LaunchConfig& cfg) {
  BL_INDEX_DISPATCH(
      (gather_typed<T, I>(x, x_view, dim_stride, extent, index, index_view, out, n, cfg)));
}

int64_t scatter_cuda(size_t element_size, DType index_dtype, void* out, const StridedView& out_lines,
                     int64_t out_dim_stride, int64_t extent, const void* index,
                     const StridedView& index_lines, int64_t index_dim_stride, const void* src,
                     const StridedView& src_lines, int64_t src_dim_stride, int64_t count,
                     int64_t n_lines, const LaunchConfig& cfg) {
  BL_INDEX_DISPATCH((scatter_typed<T, I>(out, out_lines, out_dim_stride, extent, index, index_lines,
                                         index_dim_stride, src, src_lines, src_dim_stride, count,
                                         n_lines, cfg)));
}


namespace {

// One thread per (row that occurs, column): the contract sum of grad[positions[j]][d] over the
// row's j. plan holds the rows that occur (count of them), their first position index (count + 1
// entries, the last is n) and the positions grouped by row. Rows that occur nowhere are zero
// (cleared before): the empty sum's +0.
__global__ void embedding_backward_kernel(const float* grad, const int64_t* plan, int64_t count, int64_t width,
                                          float* out) {
  const int64_t* row = plan;
  const int64_t* first = plan + count;
  const int64_t* positions = plan + 2 * count + 1;
  int64_t n = count * width;
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    int64_t u = e / width, d = e - u * width;
    ScheduleSumState s;
    schedule_sum_begin(s);
    for (int64_t j = first[u]; j < first[u + 1]; ++j) schedule_sum_add(s, grad[positions[j] * width + d]);
    out[row[u] * width + d] = canonicalize(schedule_sum_end(s));
  }
}

template <typename I>
int64_t embedding_backward_typed(const float* grad, const void* ids, int64_t n, int64_t width,
                                 int64_t rows, float* out, const LaunchConfig& cfg) {
  // Grouping on the host: a stable counting sort of positions by row.
  std::vector<I> host_ids(static_cast<size_t>(n));
  if (n > 0)
    BL_CUDA_CHECK(cudaMemcpy(host_ids.data(), ids, static_cast<size_t>(n) * sizeof(I),
                             cudaMemcpyDeviceToHost));
  for (int64_t p = 0; p < n; ++p)
    if (host_ids[p] < 0 || host_ids[p] >= rows) return p;
  if (rows * width == 0) return -1;
  std::vector<int64_t> start(static_cast<size_t>(rows + 1), 0);
  for (int64_t p = 0; p < n; ++p) ++start[static_cast<size_t>(host_ids[p]) + 1];
  int64_t count = 0;
  for (int64_t v = 0; v < rows; ++v) {
    count += start[v + 1] > 0 ? 1 : 0;
    start[v + 1] += start[v];
  }
  // plan: the rows that occur, their first positions, then the positions grouped by row.
  std::vector<int64_t> plan(static_cast<size_t>(2 * count + 1 + n));
  int64_t u = 0;
  for (int64_t v = 0; v < rows; ++v)
    if (start[v + 1] > start[v]) {
      plan[u] = v;
      plan[count + u] = start[v];
      ++u;
    }
  plan[2 * count] = n;
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t p = 0; p < n; ++p) plan[2 * count + 1 + fill[host_ids[p]]++] = p;
  BL_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(rows * width) * sizeof(float)));
  if (count == 0) {
    cuda_sync_check("embedding_backward");
    return -1;
  }
  cuda::DeviceScratch<int64_t> d_plan(static_cast<int64_t>(plan.size()), "embedding_backward");
  BL_CUDA_CHECK(cudaMemcpy(d_plan.ptr, plan.data(), plan.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  GridShape g = grid_for(count * width, cfg);
  embedding_backward_kernel<<<g.blocks, g.threads>>>(grad, d_plan.ptr, count, width, out);
  cuda_sync_check("embedding_backward");
  return -1;
}

}  // namespace

int64_t embedding_backward_cuda(DType index_dtype, const float* grad, const void* ids, int64_t n,
                                int64_t width, int64_t rows, float* out, const LaunchConfig& cfg) {
  if (index_dtype == DType::i64)
    return embedding_backward_typed<int64_t>(grad, ids, n, width, rows, out, cfg);
  return embedding_backward_typed<int32_t>(grad, ids, n, width, rows, out, cfg);
}

}  // namespace bl
