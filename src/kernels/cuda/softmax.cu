// CUDA softmax / log-softmax: row maximum and denominator through reduce_totals, then one pass.
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/softmax.h"

namespace bl {
namespace {

struct FinishLog {
  BL_HD float operator()(float v) const { return log(v); }
};

__global__ void softmax_apply_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
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
  cuda::reduce_totals<StepExpShift>(x, shape, m.ptr, s.ptr, config);
  if (log_form) cuda::map_totals(s.ptr, rows, FinishLog(), config);
  const int block = cuda::block_size(config);
  softmax_apply_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(x, rows, n, m.ptr,
                                                                                           s.ptr, log_form, y);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl
