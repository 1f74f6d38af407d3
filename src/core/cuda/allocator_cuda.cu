// allocator_cuda.cu: cudaMalloc-backed buffers and copies for Tensor storage.
#include "core/allocator.h"
#include "core/cuda_check.h"

#include <cstdlib>
#include <string>

namespace bl {

void cuda_set_device(int device_index) { BL_CUDA_CHECK(cudaSetDevice(device_index)); }

void* cuda_allocate(size_t bytes, int device_index) {
  cuda_set_device(device_index);
  void* ptr = nullptr;
  BL_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  return ptr;
}

void cuda_free(void* ptr, int device_index) {
  cudaSetDevice(device_index);
  cudaFree(ptr);
}

void cuda_copy(void* dst, const void* src, size_t bytes, int kind) {
  cudaMemcpyKind k = kind == 0 ? cudaMemcpyHostToDevice
                               : (kind == 1 ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
  BL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, k));
}

void cuda_zero(void* dst, size_t bytes, int device_index) {
  cuda_set_device(device_index);
  BL_CUDA_CHECK(cudaMemset(dst, 0, bytes));
  if (cuda_sync_each_op()) BL_CUDA_CHECK(cudaDeviceSynchronize());
}

int cuda_count_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

bool cuda_sync_each_op() {
  static const bool each = [] {
    const char* env = std::getenv("BITLEARN_CUDA_SYNC");
    return env != nullptr && std::string(env) == "1";
  }();
  return each;
}

void cuda_sync_check(const char* op) {
  cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess)
    throw Error(detail::concat(op, ": CUDA kernel launch failed: ", cudaGetErrorString(launch)));
  if (!cuda_sync_each_op()) return;
  cudaError_t run = cudaDeviceSynchronize();
  if (run != cudaSuccess)
    throw Error(detail::concat(op, ": CUDA kernel failed: ", cudaGetErrorString(run)));
}

}  // namespace bl
