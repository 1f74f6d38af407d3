// allocator.cpp: host allocation and the device-independent parts of Buffer.
#include "core/allocator.h"

#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace bl {

namespace {
constexpr size_t kHostAlignment = 64;
}

Buffer::~Buffer() {
  if (ptr == nullptr) return;
  if (device.is_cpu()) {
    std::free(ptr);
  } else {
#if defined(BITLEARN_HAS_CUDA)
    try {
      cuda_free(ptr, device.index);
    } catch (...) {
      // A destructor must not throw; a failed free at shutdown is not recoverable anyway.
    }
#endif
  }
}

void check_device_usable(Device device, const char* op) {
  if (device.is_cpu()) return;
#if defined(BITLEARN_HAS_CUDA)
  int count = cuda_count_devices();
  BL_CHECK(count > 0, op, ": no CUDA device (", device.str(), " requested)");
  BL_CHECK(device.index >= 0 && device.index < count, op, ": no CUDA device ", device.index,
           " (", count, " present)");
#else
  throw Error(detail::concat("CUDA op ", op, " requested (", device.str(),
                             ") but bitlearn was built without CUDA"));
#endif
}

std::shared_ptr<Buffer> allocate_buffer(size_t bytes, Device device, const char* op) {
  check_device_usable(device, op);
  auto buffer = std::make_shared<Buffer>();
  buffer->device = device;
  buffer->bytes = bytes;
  // Zero-byte tensors still get a distinct, valid block so pointers are never null.
  size_t request = bytes == 0 ? kHostAlignment : bytes;
  if (device.is_cpu()) {
    size_t rounded = (request + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    buffer->ptr = std::aligned_alloc(kHostAlignment, rounded);
    BL_CHECK(buffer->ptr != nullptr, op, ": host allocation of ", bytes, " bytes failed");
  } else {
#if defined(BITLEARN_HAS_CUDA)
    buffer->ptr = cuda_allocate(request, device.index);
#endif
  }
  return buffer;
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if defined(BITLEARN_HAS_CUDA)
  int kind = src_device.is_cpu() ? 0 : (dst_device.is_cpu() ? 1 : 2);
  cuda_set_device(src_device.is_cuda() ? src_device.index : dst_device.index);
  cuda_copy(dst, src, bytes, kind);
#else
  throw Error("copy: CUDA requested but bitlearn was built without CUDA");
#endif
}

void zero_bytes(void* dst, Device device, size_t bytes) {
  if (bytes == 0) return;
  if (device.is_cpu()) {
    std::memset(dst, 0, bytes);
    return;
  }
#if defined(BITLEARN_HAS_CUDA)
  cuda_zero(dst, bytes, device.index);
#else
  throw Error("zeros: CUDA requested but bitlearn was built without CUDA");
#endif
}

}  // namespace bl
