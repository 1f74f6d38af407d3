// CUDA softmax / log-softmax: row maximum and denominator through reduce_totals, then one pass.
// Softmax computes each e_i = exp(x_i - m) once: the denominator pass stores e_i in y, and the last
// pass divides y in place (softmax_element's bits: canonicalize(div(e_i, s))).
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/softmax.h"

namespace bl {
namespace {

struct FinishLog {
  BL_HD float operator()(float v) const { return log(v); }
};

// The softmax denominator's element, kept in y: e = exp(x - m).
struct MapExpShift {
  BL_HD static float map(float x, float m) { return exp(sub(x, m)); }
};

// y_i = e_i / s of its row, in place (long rows: blocks over rows, threads over the row).
__global__ void softmax_divide_rows_kernel(float* y, int64_t rows, int64_t n, const float* s) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float sr = s[r];
    float* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = canonicalize(div(yr[i], sr));
  }
}

// y_i = e_i / s of its row, in place (short rows: a flat grid-stride loop).
__global__ void softmax_divide_flat_kernel(float* y, int64_t rows, int64_t n, const float* s) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[g] = canonicalize(div(y[g], s[g / n]));
}

// Long rows: blocks stride over rows, threads over the row (no per-element index division).
__global__ void softmax_apply_rows_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
                                          bool log_form, float* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float mr = m[r], sr = s[r];
    const float* xr = x + r * n;
    float* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      yr[i] = log_form ? log_softmax_element(xr[i], mr, sr) : softmax_element(xr[i], mr, sr);
  }
}

// Short rows: a flat grid-stride loop over all elements.
__global__ void softmax_apply_flat_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
                                          bool log_form, float* y) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / n;
    y[g] = log_form ? log_softmax_element(x[g], m[r], s[r]) : softmax_element(x[g], m[r], s[r]);
  }
}

}  // namespace

void softmax_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form, const LaunchConfig& config) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  const ReduceShape shape{rows, n, 1};
  cuda::DeviceScratch<float> m(rows), s(rows);
  cuda::reduce_totals<StepMax>(x, shape, nullptr, m.ptr, config);
  const bool rows_kernel = n >= 256 && n <= 65536;  // shape-only choice; both kernels give the same bits
  if (!log_form) {
    cuda::reduce_totals<StepAdd, MapExpShift>(x, shape, m.ptr, s.ptr, config, y);
    if (rows_kernel) {
      const int block = cuda::fitted_block(softmax_divide_rows_kernel, config);
      softmax_divide_rows_kernel<<<cuda::grid_size(rows, config), block>>>(y, rows, n, s.ptr);
    } else {
      const int block = cuda::fitted_block(softmax_divide_flat_kernel, config);
      softmax_divide_flat_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(y, rows, n,
                                                                                                     s.ptr);
    }
    BL_CUDA_CHECK(cudaGetLastError());
    cuda::finish_sync();
    return;
  }
  cuda::reduce_totals<StepExpShift>(x, shape, m.ptr, s.ptr, config);
  cuda::map_totals(s.ptr, rows, FinishLog(), config);
  if (rows_kernel) {
    const int block = cuda::fitted_block(softmax_apply_rows_kernel, config);
    softmax_apply_rows_kernel<<<cuda::grid_size(rows, config), block>>>(x, rows, n, m.ptr, s.ptr, log_form, y);
  } else {
    const int block = cuda::fitted_block(softmax_apply_flat_kernel, config);
    softmax_apply_flat_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(x, rows, n, m.ptr,
                                                                                                s.ptr, log_form, y);
  }
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl
