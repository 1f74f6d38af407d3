#include "core/cuda_check.h"
#include "core/fp_probe.h"

namespace bl {
namespace {
__global__ void probe_mul_add_kernel(const float* in, float* out) { out[0] = in[0] * in[1] + in[2]; }
}  // namespace

float probe_mul_add_cuda(float a, float b, float c) {
  float host[3] = {a, b, c};
  float* dev = nullptr;
  BL_CUDA_CHECK(cudaMalloc(&dev, 4 * sizeof(float)));
  float result = 0.0f;
  try {
    BL_CUDA_CHECK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    probe_mul_add_kernel<<<1, 1>>>(dev, dev + 3);
    BL_CUDA_CHECK(cudaGetLastError());
    BL_CUDA_CHECK(cudaMemcpy(&result, dev + 3, sizeof(float), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(dev);
    throw;
  }
  cudaFree(dev);
  return result;
}
}  // namespace bl
