// allocator.cpp: host allocation and the device-independent parts of Buffer.
#include "core/allocator.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "core/error.h"

namespace bl {

namespace {
constexpr size_t kHostAlignment = 64;

// A cache of freed host blocks, keyed by rounded size. Fresh pages cost a page fault each; ops
// that allocate their outputs would spend more time there than computing. Blocks are reused only
// at their exact rounded size, and the cache holds at most kCacheLimit bytes. (CUDA blocks go
// through the caching allocator of src/core/cuda/allocator_cuda.cu instead.)
constexpr size_t kCacheLimit = size_t(1) << 31;

struct BlockCache {
  std::mutex mutex;
  std::multimap<std::pair<int, size_t>, void*> blocks;  // (device code, bytes) -> block
  size_t cached_bytes = 0;
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache();  // never destroyed: buffers may die at exit
  return *cache;
}

int device_code(Device d) { return d.is_cpu() ? -1 : d.index; }

size_t rounded_size(size_t bytes) {
  size_t request = bytes == 0 ? kHostAlignment : bytes;
  return (request + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
}

void* take_cached(Device d, size_t rounded) {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.blocks.find({device_code(d), rounded});
  if (it == c.blocks.end()) return nullptr;
  void* p = it->second;
  c.blocks.erase(it);
  c.cached_bytes -= rounded;
  return p;
}

bool give_cached(Device d, size_t rounded, void* p) {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.cached_bytes + rounded > kCacheLimit) return false;
  c.blocks.emplace(std::make_pair(device_code(d), rounded), p);
  c.cached_bytes += rounded;
  return true;
}
}  // namespace

Buffer::~Buffer() {
  if (ptr == nullptr) return;
  if (device.is_cpu()) {
    if (!give_cached(device, rounded_size(bytes), ptr)) std::free(ptr);
    return;
  }
#if defined(BITLEARN_HAS_CUDA)
  try {
    cuda_free(ptr, device.index);  // the CUDA caching allocator keeps the block for reuse
  } catch (...) {
    // A destructor must not throw; a failed free at shutdown is not recoverable anyway.
  }
#endif
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

bool cuda_backend_built() {
#if defined(BITLEARN_HAS_CUDA)
  return true;
#else
  return false;
#endif
}

void use_device(Device device, const char* op) {
  check_device_usable(device, op);
#if defined(BITLEARN_HAS_CUDA)
  if (device.is_cuda()) cuda_set_device(device.index);
#endif
}

std::shared_ptr<Buffer> allocate_buffer(size_t bytes, Device device, const char* op) {
  check_device_usable(device, op);
  auto buffer = std::make_shared<Buffer>();
  buffer->device = device;
  buffer->bytes = bytes;
  // Zero-byte tensors still get a distinct, valid block so pointers are never null.
  if (device.is_cuda()) {
#if defined(BITLEARN_HAS_CUDA)
    buffer->ptr = cuda_allocate(bytes, device.index, op);  // has its own cache and size classes
#endif
    return buffer;
  }
  size_t rounded = rounded_size(bytes);
  buffer->ptr = take_cached(device, rounded);
  if (buffer->ptr != nullptr) return buffer;
  buffer->ptr = std::aligned_alloc(kHostAlignment, rounded);
  BL_CHECK(buffer->ptr != nullptr, op, ": host allocation of ", bytes, " bytes failed");
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
  if (src_device.is_cuda() && dst_device.is_cuda() && src_device.index != dst_device.index) {
    // A copy between two devices does not wait for the host, and it is ordered on one device's
    // stream only; wait for both so that neither block can be freed and reused under it.
    cuda_synchronize_device(dst_device.index);
    cuda_synchronize_device(src_device.index);  // leaves src current, as before
  }
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

void synchronize(Device device) {
  if (device.is_cpu()) return;
#if defined(BITLEARN_HAS_CUDA)
  cuda_synchronize_device(device.index);
#else
  throw Error("synchronize: CUDA requested but bitlearn was built without CUDA");
#endif
}

}  // namespace bl
