// per_device_once.h: host-side setup done once per CUDA device, such as raising a kernel's
// dynamic shared-memory limit (a function attribute belongs to the device's context and keeps its
// value), instead of repeating the runtime call before every launch.
#pragma once

#include <cuda_runtime.h>

#include <mutex>

#include "core/cuda_check.h"
#include "core/error.h"

namespace bl::cuda {

constexpr int kMaxOnceDevices = 64;  // device indices 0..63, as the CUDA allocator's pools

// One std::once_flag per device index. run(f) calls f on the current device the first time it is
// asked for that device, from whichever host thread comes first; the others wait for it. If f
// throws, the flag stays unset and the next call tries again.
struct PerDeviceOnce {
  std::once_flag flags[kMaxOnceDevices];

  template <class F>
  void run(const char* op, F&& f) {
    int device = 0;
    BL_CUDA_CHECK(cudaGetDevice(&device));
    BL_CHECK(device >= 0 && device < kMaxOnceDevices, op, ": device index ", device, " outside 0..",
             kMaxOnceDevices - 1);
    std::call_once(flags[device], f);
  }
};

// Sets kernel's dynamic shared-memory limit to bytes on the current device, once per device for
// each `once` (one static PerDeviceOnce per kernel instantiation, held by the caller).
template <class Kernel>
void set_max_dynamic_smem_once(PerDeviceOnce& once, Kernel kernel, int bytes, const char* op) {
  once.run(op, [&] {
    BL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  });
}

}  // namespace bl::cuda
