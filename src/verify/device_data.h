// device_data.h: moving a check's inputs to its device and its outputs back (host code only).
//
// Uses the core allocator (src/core/allocator.h), so this file needs no CUDA headers; in a
// CPU-only build asking for a CUDA device throws bl::Error.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/allocator.h"
#include "verify/check.h"

namespace bl::verify {

// An array of T on a device (host memory for cpu), owning its buffer.
template <typename T>
struct DeviceArray {
  std::shared_ptr<Buffer> buffer;
  T* data = nullptr;
  int64_t size = 0;
};

// A float array on a device.
using DeviceFloats = DeviceArray<float>;
// An int64 array on a device (indices written by arg-reductions, sort, top-k).
using DeviceI64 = DeviceArray<int64_t>;

// The bl::Device a check's context names.
Device core_device(const CheckContext& ctx);

// Makes the context's CUDA device the current one (no-op on cpu); a device that cannot run work
// (no CUDA in this build, no such GPU) throws the core's named error, which run_suite records.
void select_device(const CheckContext& ctx);

// Copies v to the context's device.
DeviceFloats to_device(const CheckContext& ctx, const std::vector<float>& v);
// An uninitialized array of n floats on the context's device.
DeviceFloats device_empty(const CheckContext& ctx, int64_t n);
// n floats set to +0.0 on the context's device.
DeviceFloats device_zeros(const CheckContext& ctx, int64_t n);
// Copies a device array back to the host.
std::vector<float> to_host(const DeviceFloats& d);
// An uninitialized int64 array on the context's device, and its copy back to the host.
DeviceI64 device_empty_i64(const CheckContext& ctx, int64_t n);
std::vector<int64_t> to_host(const DeviceI64& d);

}  // namespace bl::verify
