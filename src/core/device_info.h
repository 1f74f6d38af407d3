// device_info.h: the CUDA devices this process can see, for `bitlearn doctor` and device checks.
//
// Built with CUDA (BITLEARN_HAS_CUDA), cuda_status() asks the CUDA runtime
// (src/core/cuda/device_info.cu); in a CPU-only build it reports that CUDA is not built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;  // compute capability, e.g. 9.0 for H100/H200
  int cc_minor = 0;
  uint64_t total_memory_bytes = 0;
  int multiprocessors = 0;
};

struct CudaStatus {
  bool built = false;        // the library was compiled with CUDA
  int runtime_version = 0;   // e.g. 13000 for CUDA 13.0; 0 when unknown
  int driver_version = 0;    // the newest CUDA version the driver supports; 0 when none
  std::string error;         // why no device is usable (e.g. "no CUDA-capable device"), or ""
  std::vector<CudaDeviceInfo> devices;
};

#if defined(BITLEARN_HAS_CUDA)
// Lists the CUDA devices. Never throws: runtime errors are reported in CudaStatus::error.
CudaStatus cuda_status();
#else
// CPU-only build: no CUDA, no devices.
inline CudaStatus cuda_status() { return CudaStatus{}; }
#endif

}  // namespace bl
