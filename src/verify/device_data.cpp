#include "verify/device_data.h"

namespace bl::verify {
namespace {

// An uninitialized array of n elements of T on the context's device (one element's room for n = 0).
template <typename T>
DeviceArray<T> empty_array(const CheckContext& ctx, int64_t n) {
  DeviceArray<T> d;
  d.size = n;
  d.buffer = allocate_buffer(static_cast<size_t>(n > 0 ? n : 1) * sizeof(T), core_device(ctx), "verify");
  d.data = static_cast<T*>(d.buffer->ptr);
  return d;
}

// A device array copied back to the host.
template <typename T>
std::vector<T> array_to_host(const DeviceArray<T>& d) {
  std::vector<T> v(static_cast<size_t>(d.size));
  if (!v.empty()) copy_bytes(v.data(), Device::cpu(), d.data, d.buffer->device, v.size() * sizeof(T));
  return v;
}

}  // namespace

Device core_device(const CheckContext& ctx) {
  return ctx.on_cuda() ? Device::cuda(ctx.device().index) : Device::cpu();
}

void select_device(const CheckContext& ctx) { use_device(core_device(ctx), "verify"); }

DeviceFloats device_empty(const CheckContext& ctx, int64_t n) { return empty_array<float>(ctx, n); }

DeviceFloats device_zeros(const CheckContext& ctx, int64_t n) {
  DeviceFloats d = device_empty(ctx, n);
  if (n > 0) zero_bytes(d.data, d.buffer->device, static_cast<size_t>(n) * sizeof(float));
  return d;
}

DeviceFloats to_device(const CheckContext& ctx, const std::vector<float>& v) {
  DeviceFloats d = device_empty(ctx, static_cast<int64_t>(v.size()));
  if (!v.empty())
    copy_bytes(d.data, d.buffer->device, v.data(), Device::cpu(), v.size() * sizeof(float));
  return d;
}

std::vector<float> to_host(const DeviceFloats& d) { return array_to_host(d); }

DeviceI64 device_empty_i64(const CheckContext& ctx, int64_t n) { return empty_array<int64_t>(ctx, n); }

std::vector<int64_t> to_host(const DeviceI64& d) { return array_to_host(d); }

}  // namespace bl::verify
