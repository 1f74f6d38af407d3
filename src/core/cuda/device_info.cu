// CUDA device listing through the runtime API (compiled only in CUDA builds).
#include <cuda_runtime.h>

#include "core/device_info.h"

namespace bl {

CudaStatus cuda_status() {
  CudaStatus s;
  s.built = true;
  cudaRuntimeGetVersion(&s.runtime_version);
  if (cudaDriverGetVersion(&s.driver_version) != cudaSuccess) s.driver_version = 0;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    s.error = cudaGetErrorString(err);
    cudaGetLastError();  // clear the recorded error so later runtime calls do not report it
    return s;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, i);
    if (err != cudaSuccess) {
      s.error = cudaGetErrorString(err);
      cudaGetLastError();
      continue;
    }
    CudaDeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.total_memory_bytes = static_cast<uint64_t>(prop.totalGlobalMem);
    d.multiprocessors = prop.multiProcessorCount;
    s.devices.push_back(d);
  }
  if (count == 0 && s.error.empty()) s.error = "no CUDA device";
  return s;
}

}  // namespace bl
