// CUDA layer norm and RMS norm: row statistics through reduce_totals, then one elementwise pass.
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/norm.h"

namespace bl {
namespace {

struct FinishMean {
  int64_t n;
  BL_HD float operator()(float v) const { return finish_mean(v, n); }
};
// Q -> den = sqrt(Q / n + eps) (layer norm), or SQ -> sqrt(SQ / n + eps) (RMS norm).
struct FinishDenominator {
  int64_t n;
  float eps;
  bool centered;
  BL_HD float operator()(float v) const {
    return norm_denominator(centered ? finish_var(v, n, 0) : finish_mean(v, n), eps);
  }
};

__global__ void layer_norm_apply_kernel(const float* x, int64_t rows, int64_t n, const float* mean,
                                        const float* den, const float* gamma, const float* beta, float* y) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / n, i = g % n;
    y[g] = layer_norm_element(x[g], mean[r], den[r], gamma ? gamma[i] : 1.0f, beta ? beta[i] : 0.0f,
                              gamma != nullptr, beta != nullptr);
  }
}

// Long rows: blocks stride over rows, threads over the row (no per-element index division).
__global__ void layer_norm_apply_rows_kernel(const float* x, int64_t rows, int64_t n, const float* mean,
                                             const float* den, const float* gamma, const float* beta, float* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float mr = mean[r], dr = den[r];
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      y[r * n + i] = layer_norm_element(x[r * n + i], mr, dr, gamma ? gamma[i] : 1.0f, beta ? beta[i] : 0.0f,
                                        gamma != nullptr, beta != nullptr);
  }
}

__global__ void rms_norm_apply_rows_kernel(const float* x, int64_t rows, int64_t n, const float* den,
                                           const float* gamma, float* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float dr = den[r];
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      y[r * n + i] = rms_norm_element(x[r * n + i], dr, gamma ? gamma[i] : 1.0f, gamma != nullptr);
  }
}

__global__ void rms_norm_apply_kernel(const float* x, int64_t rows, int64_t n, const float* den,
                                      const float* gamma, float* y) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / n, i = g % n;
    y[g] = rms_norm_element(x[g], den[r], gamma ? gamma[i] : 1.0f, gamma != nullptr);
  }
}

__global__ void row_stats_out_kernel(const float* mean, const float* den, int64_t rows, float* mean_out,
                                     float* rstd_out) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (mean_out) mean_out[r] = mean[r];
    if (rstd_out) rstd_out[r] = canonicalize(div(1.0f, den[r]));
  }
}

void check_norm_args(const char* name, const float* x, int64_t rows, int64_t n, const float* y) {
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(rows * n == 0 || (x != nullptr && y != nullptr), name, ": input or output pointer is null");
}

}  // namespace

void layer_norm_cuda(const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta, float eps,
                     float* y, float* mean_out, float* rstd_out, const LaunchConfig& config) {
  check_norm_args("layer_norm", x, rows, n, y);
  if (rows == 0) return;
  const ReduceShape shape{rows, n, 1};
  cuda::DeviceScratch<float> mean(rows), den(rows);
  cuda::reduce_totals<StepAdd>(x, shape, nullptr, mean.ptr, config);
  cuda::map_totals(mean.ptr, rows, FinishMean{n}, config);
  cuda::reduce_totals<StepCenteredSquare>(x, shape, mean.ptr, den.ptr, config);
  cuda::map_totals(den.ptr, rows, FinishDenominator{n, eps, true}, config);
  if (n >= 256 && n <= 65536) {  // shape-only choice; both kernels give the same bits
    const int block = cuda::fitted_block(layer_norm_apply_rows_kernel, config);
    layer_norm_apply_rows_kernel<<<cuda::grid_size(rows, config), block>>>(x, rows, n, mean.ptr, den.ptr, gamma,
                                                                          beta, y);
    BL_CUDA_CHECK(cudaGetLastError());
  } else if (n > 0) {
    const int block = cuda::fitted_block(layer_norm_apply_kernel, config);
    layer_norm_apply_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(
        x, rows, n, mean.ptr, den.ptr, gamma, beta, y);
    BL_CUDA_CHECK(cudaGetLastError());
  }
  if (mean_out || rstd_out) {
    const int block = cuda::fitted_block(row_stats_out_kernel, config);
    row_stats_out_kernel<<<cuda::grid_size((rows + block - 1) / block, config), block>>>(mean.ptr, den.ptr, rows,
                                                                                         mean_out, rstd_out);
    BL_CUDA_CHECK(cudaGetLastError());
  }
  cuda::finish_sync();
}

void rms_norm_cuda(const float* x, int64_t rows, int64_t n, const float* gamma, float eps, float* y,
                   float* rstd_out, const LaunchConfig& config) {
  check_norm_args("rms_norm", x, rows, n, y);
  if (rows == 0) return;
  const ReduceShape shape{rows, n, 1};
  cuda::DeviceScratch<float> den(rows);
  cuda::reduce_totals<StepSquare>(x, shape, nullptr, den.ptr, config);
  cuda::map_totals(den.ptr, rows, FinishDenominator{n, eps, false}, config);
  if (n >= 256 && n <= 65536) {  // shape-only choice; both kernels give the same bits
    const int block = cuda::fitted_block(rms_norm_apply_rows_kernel, config);
    rms_norm_apply_rows_kernel<<<cuda::grid_size(rows, config), block>>>(x, rows, n, den.ptr, gamma, y);
    BL_CUDA_CHECK(cudaGetLastError());
  } else if (n > 0) {
    const int block = cuda::fitted_block(rms_norm_apply_kernel, config);
    rms_norm_apply_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(x, rows, n, den.ptr,
                                                                                              gamma, y);
    BL_CUDA_CHECK(cudaGetLastError());
  }
  if (rstd_out) {
    const int block = cuda::fitted_block(row_stats_out_kernel, config);
    row_stats_out_kernel<<<cuda::grid_size((rows + block - 1) / block, config), block>>>(den.ptr, den.ptr, rows,
                                                                                         nullptr, rstd_out);
    BL_CUDA_CHECK(cudaGetLastError());
  }
  cuda::finish_sync();
}

}  // namespace bl
