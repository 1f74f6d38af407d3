#include "verify/device_data.h"

namespace bl::verify {

Device core_device(const CheckContext& ctx) {
  return ctx.on_cuda() ? Device::cuda(ctx.device().index) : Device::cpu();
}

void select_device(const CheckContext& ctx) { use_device(core_device(ctx), "verify"); }

DeviceFloats device_empty(const CheckContext& ctx, int64_t n) {
  DeviceFloats d;
  d.size = n;
  d.buffer = allocate_buffer(static_cast<size_t>(n > 0 ? n : 1) * sizeof(float), core_device(ctx),
                             "verify");
  d.data = static_cast<float*>(d.buffer->ptr);
  return d;
}

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

std::vector<float> to_host(const DeviceFloats& d) {
  std::vector<float> v(static_cast<size_t>(d.size));
  if (!v.empty())
    copy_bytes(v.data(), Device::cpu(), d.data, d.buffer->device, v.size() * sizeof(float));
  return v;
}

DeviceI64 device_empty_i64(const CheckContext& ctx, int64_t n) {
  DeviceI64 d;
  d.size = n;
  d.buffer = allocate_buffer(static_cast<size_t>(n > 0 ? n : 1) * sizeof(int64_t), core_device(ctx),
                             "verify");
  d.data = static_cast<int64_t*>(d.buffer->ptr);
  return d;
}

std::vector<int64_t> to_host(const DeviceI64& d) {
  std::vector<int64_t> v(static_cast<size_t>(d.size));
  if (!v.empty())
    copy_bytes(v.data(), Device::cpu(), d.data, d.buffer->device, v.size() * sizeof(int64_t));
  return v;
}

}  // namespace bl::verify
