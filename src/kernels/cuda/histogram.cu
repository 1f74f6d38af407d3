// histogram.cu: CUDA gradient histograms (see kernels/histogram.h). Blocks own a group of up to
// kFeatureGroup features and a strided share of the listed rows; each builds the group's
// histogram in shared memory with 64-bit integer atomics, then adds it to global memory the same
// way. Integer addition is associative, so the launch shape never changes the bits.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/histogram.h"

namespace bl {
namespace {

constexpr int kFeatureGroup = 8;  // 8 * 256 * 3 * 8 bytes = 48 KiB of shared memory

__global__ void histogram_kernel(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                                 const int64_t* gq, const int64_t* hq, unsigned long long* hist) {
  __shared__ unsigned long long local[kFeatureGroup * kHistBins * kHistStats];
  const int64_t f0 = static_cast<int64_t>(blockIdx.y) * kFeatureGroup;
  const int64_t nf = (d - f0) < kFeatureGroup ? (d - f0) : kFeatureGroup;
  for (int64_t i = threadIdx.x; i < nf * kHistBins * kHistStats; i += blockDim.x) local[i] = 0ull;
  __syncthreads();
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_rows; i += stride) {
    const int64_t r = rows ? rows[i] : i;
    const unsigned long long g = static_cast<unsigned long long>(gq[r]);
    const unsigned long long h = static_cast<unsigned long long>(hq[r]);
    const uint8_t* b = bins + r * d + f0;
    for (int64_t f = 0; f < nf; ++f) {
      unsigned long long* cell = local + (f * kHistBins + b[f]) * kHistStats;
      atomicAdd(cell, g);
      atomicAdd(cell + 1, h);
      atomicAdd(cell + 2, 1ull);
    }
  }
  __syncthreads();
  unsigned long long* out = hist + f0 * kHistBins * kHistStats;
  for (int64_t i = threadIdx.x; i < nf * kHistBins * kHistStats; i += blockDim.x) {
    if (local[i] != 0ull) atomicAdd(out + i, local[i]);
  }
}

}  // namespace

void histogram_cuda(const uint8_t* bins, int64_t d, const int32_t* rows, int64_t n_rows,
                    const int64_t* gq, const int64_t* hq, int64_t* hist, const LaunchConfig& config) {
  BL_CUDA_CHECK(cudaMemset(hist, 0, static_cast<size_t>(histogram_size(d)) * sizeof(int64_t)));
  if (n_rows == 0 || d == 0) return;
  cuda::GridShape shape = cuda::grid_for(n_rows, config);
  const int64_t groups = (d + kFeatureGroup - 1) / kFeatureGroup;
  BL_CHECK(groups < 65536, "histogram_cuda: at most ", 65535 * kFeatureGroup, " features");
  dim3 grid(shape.blocks, static_cast<unsigned>(groups));
  histogram_kernel<<<grid, shape.threads>>>(bins, d, rows, n_rows, gq, hq,
                                            reinterpret_cast<unsigned long long*>(hist));
  cuda_sync_check("histogram");
}

}  // namespace bl
