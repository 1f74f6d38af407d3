// Sabotage arm, compiled with --fmad=true: a kernel built without the contract's flag fuses.
#include <cuda_runtime.h>

namespace bl {
namespace {
__global__ void contracted_kernel(const float* in, float* out) { out[0] = in[0] * in[1] + in[2]; }
}  // namespace

float sabotage_mul_add_contracted_cuda(float a, float b, float c) {
  float host[3] = {a, b, c};
  float* dev = nullptr;
  cudaMalloc(&dev, 4 * sizeof(float));
  cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  contracted_kernel<<<1, 1>>>(dev, dev + 3);
  float result = -1.0f;
  cudaMemcpy(&result, dev + 3, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  return result;
}
}  // namespace bl
