// The CUDA side of the sweep: device buffers and math_map_cuda over one chunk.
#include <cuda_runtime.h>

#include <cstdio>

#include "core/cuda_check.h"
#include "kernels/launch.h"
#include "sweep_device.h"

namespace mathcheck {

CudaSweepDevice::CudaSweepDevice(int64_t max_n) : max_n_(max_n) {
  const size_t bytes = static_cast<size_t>(max_n) * sizeof(float);
  BL_CUDA_CHECK(cudaMalloc(&x_, bytes));
  BL_CUDA_CHECK(cudaMalloc(&y_, bytes));
  BL_CUDA_CHECK(cudaMalloc(&out_, bytes));
}

CudaSweepDevice::~CudaSweepDevice() {
  cudaFree(x_);
  cudaFree(y_);
  cudaFree(out_);
}

void CudaSweepDevice::set_inputs(const float* x, const float* y, int64_t n) {
  BL_CHECK(n <= max_n_, "sweep: chunk of ", n, " inputs exceeds the device buffer of ", max_n_);
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  BL_CUDA_CHECK(cudaMemcpy(x_, x, bytes, cudaMemcpyHostToDevice));
  if (y) BL_CUDA_CHECK(cudaMemcpy(y_, y, bytes, cudaMemcpyHostToDevice));
  n_ = n;
}

void CudaSweepDevice::map(bl::MathFn fn, float* out) {
  bl::LaunchConfig config;
  if (bl::math_arity(fn) == 2)
    bl::math_map_cuda(fn, x_, y_, out_, n_, config);
  else
    bl::math_map_cuda(fn, x_, out_, n_, config);
  BL_CUDA_CHECK(cudaMemcpy(out, out_, static_cast<size_t>(n_) * sizeof(float),
                           cudaMemcpyDeviceToHost));
}

const char* CudaSweepDevice::describe() {
  static char buf[256];
  int n = 0;
  BL_CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n > 0, "sweep: no CUDA device present");
  cudaDeviceProp p;
  BL_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  std::snprintf(buf, sizeof buf, "%s, sm_%d%d", p.name, p.major, p.minor);
  return buf;
}

}  // namespace mathcheck
