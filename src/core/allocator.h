// allocator.h: device memory blocks behind Tensor storage, and byte copies between devices.
//
// Host blocks are 64-byte aligned (a cache line, and the widest SIMD load). CUDA blocks come from
// the per-device caching allocator (src/core/block_pool.h, bitlearn/cuda_memory.h): whole
// cudaMalloc blocks, 256-byte aligned, reused after they are freed. A request for CUDA in a build without CUDA, or for a device that does not exist,
// throws bl::Error naming the op; there is no fallback to the host.
#pragma once

#include <cstddef>
#include <memory>

#include "bitlearn/tensor.h"

namespace bl {

struct Buffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  Device device = Device::cpu();
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();
};

// A new block of at least bytes bytes on device (contents undefined). op names the caller in errors.
std::shared_ptr<Buffer> allocate_buffer(size_t bytes, Device device, const char* op);

// Throws bl::Error unless device can run work: "<op>: CUDA requested but bitlearn was built without
// CUDA" or "<op>: no CUDA device <n>".
void check_device_usable(Device device, const char* op);

// check_device_usable, then makes a CUDA device the calling thread's current one (no-op on cpu):
// what every op does before it runs a kernel on device.
void use_device(Device device, const char* op);

// Copies bytes between any two devices (host<->cuda, cuda<->cuda, host<->host); synchronous.
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

// Sets bytes to zero on device; synchronous.
void zero_bytes(void* dst, Device device, size_t bytes);

// Waits until all work queued on device has finished (nothing to wait for on the CPU).
void synchronize(Device device);

#if defined(BITLEARN_HAS_CUDA)
// CUDA side (src/core/cuda/allocator_cuda.cu).
// A block of at least bytes bytes on device_index from its caching pool; also makes device_index
// the current device. Out of memory (even after releasing the cache): bl::Error naming op.
void* cuda_allocate(size_t bytes, int device_index, const char* op);
// Gives a block from cuda_allocate back to the pool of device_index (cached, or cudaFree when
// BITLEARN_CUDA_CACHE=0). Never throws for a valid block.
void cuda_free(void* ptr, int device_index);
void cuda_copy(void* dst, const void* src, size_t bytes, int kind);  // kind: 0 h2d, 1 d2h, 2 d2d
// Waits for all work on device_index (and makes it current).
void cuda_synchronize_device(int device_index);
void cuda_zero(void* dst, size_t bytes, int device_index);
int cuda_count_devices();
// Selects the current device for the calling thread.
void cuda_set_device(int device_index);
// Throws bl::Error naming op if its kernel launch failed. All work runs in order on the default
// stream, and every read back to the host waits for it, so ops do not wait for their kernels;
// with BITLEARN_CUDA_SYNC=1 each op waits and a failing kernel is named by its own op.
void cuda_sync_check(const char* op);
// True when BITLEARN_CUDA_SYNC=1 asks every CUDA op to wait for its kernels (debugging).
bool cuda_sync_each_op();
// Registers release as a holder of long-lived scratch blocks (from cuda_allocate) that a kernel
// keeps between calls: cuda_empty_cache() calls it first, so that it frees those blocks back to the
// pool, then returns them to CUDA with the rest of the cache. release may be called from any host
// thread and must not call cuda_empty_cache; registering the same function again does nothing.
void cuda_register_scratch_release(void (*release)());
#endif

}  // namespace bl
