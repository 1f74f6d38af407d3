// allocator_cuda.cu: CUDA memory for Tensor storage and scratch buffers, through one caching
// BlockPool per device (src/core/block_pool.h), and byte copies.
//
// Reusing a freed block at once is safe because all CUDA work of bitlearn runs in order on the
// legacy default stream of its device, shared by every host thread: any kernel that used the
// block was enqueued before any kernel of its next owner. The pools are created on first use and
// never destroyed, so buffers that die during static destruction (after the CUDA runtime may be
// gone) only go back onto a free list; the cached memory is released by the driver at exit.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "bitlearn/cuda_memory.h"
#include "core/allocator.h"
#include "core/block_pool.h"
#include "core/cuda_check.h"

namespace bl {

namespace {

constexpr int kMaxCudaDevices = 64;

// BITLEARN_CUDA_CACHE=0 turns caching off (plain cudaMalloc / cudaFree per buffer).
bool cuda_cache_enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("BITLEARN_CUDA_CACHE");
    return env == nullptr || std::string(env) != "0";
  }();
  return enabled;
}

class CudaBlockSource final : public BlockSource {
 public:
  explicit CudaBlockSource(int device) : device_(device) {}

  void* allocate(size_t bytes) override {
    BL_CUDA_CHECK(cudaSetDevice(device_));
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // an out-of-memory status is not sticky; clear it for the next check
      return nullptr;
    }
    if (status != cudaSuccess)
      throw Error(detail::concat("cudaMalloc of ", bytes, " bytes on cuda:", device_, ": ",
                                 cudaGetErrorString(status)));
    return ptr;
  }

  void release(void* ptr, size_t) override {
    // cudaFree needs no particular current device; errors (a runtime already shut down at exit)
    // are dropped because nothing can be done about them.
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  int device_;
};

struct CudaPoolTable {
  std::mutex create_mutex;
  std::atomic<BlockPool*> pools[kMaxCudaDevices] = {};
  std::mutex release_mutex;                   // guards scratch_releases
  std::vector<void (*)()> scratch_releases;  // see cuda_register_scratch_release
};

CudaPoolTable& pool_table() {
  static CudaPoolTable* table = new CudaPoolTable();  // never destroyed (see the top of the file)
  return *table;
}

BlockPool& pool_for(int device) {
  BL_CHECK(device >= 0 && device < kMaxCudaDevices, "CUDA allocator: device index ", device,
           " out of range [0, ", kMaxCudaDevices, ")");
  CudaPoolTable& table = pool_table();
  BlockPool* pool = table.pools[device].load(std::memory_order_acquire);
  if (pool != nullptr) return *pool;
  std::lock_guard<std::mutex> lock(table.create_mutex);
  pool = table.pools[device].load(std::memory_order_acquire);
  if (pool == nullptr) {
    auto* source = new CudaBlockSource(device);
    pool = new BlockPool(*source, cuda_cache_enabled(), "cuda:" + std::to_string(device));
    table.pools[device].store(pool, std::memory_order_release);
  }
  return *pool;
}

}  // namespace

void cuda_set_device(int device_index) { BL_CUDA_CHECK(cudaSetDevice(device_index)); }

void* cuda_allocate(size_t bytes, int device_index, const char* op) {
  // Callers rely on the allocation selecting the device their kernels then run on.
  cuda_set_device(device_index);
  return pool_for(device_index).allocate(bytes, op);
}

void cuda_free(void* ptr, int device_index) {
  if (ptr == nullptr) return;
  if (!pool_for(device_index).free(ptr)) {
    // Not from the pool (cannot happen through Buffer or DeviceScratch); free it plainly.
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
  }
}

void cuda_copy(void* dst, const void* src, size_t bytes, int kind) {
  cudaMemcpyKind k = kind == 0 ? cudaMemcpyHostToDevice
                               : (kind == 1 ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
  BL_CUDA_CHECK(cudaMemcpy(dst, src, bytes, k));
}

void cuda_synchronize_device(int device_index) {
  cuda_set_device(device_index);
  BL_CUDA_CHECK(cudaDeviceSynchronize());
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

CudaMemoryStats cuda_memory_stats(int device) {
  BL_CHECK(device >= 0, "cuda_memory_stats: device must be >= 0, got ", device);
  CudaMemoryStats out;
  out.caching = cuda_cache_enabled();
  if (device >= kMaxCudaDevices) return out;
  BlockPool* pool = pool_table().pools[device].load(std::memory_order_acquire);
  if (pool == nullptr) return out;
  BlockPoolStats s = pool->stats();
  out.bytes_in_use = s.bytes_in_use;
  out.bytes_cached = s.bytes_cached;
  out.peak_bytes_in_use = s.peak_bytes_in_use;
  out.cuda_malloc_count = s.source_allocations;
  out.cuda_free_count = s.source_releases;
  out.cache_hits = s.cache_hits;
  out.oom_releases = s.oom_releases;
  return out;
}

void cuda_register_scratch_release(void (*release)()) {
  CudaPoolTable& table = pool_table();
  std::lock_guard<std::mutex> lock(table.release_mutex);
  for (void (*known)() : table.scratch_releases)
    if (known == release) return;
  table.scratch_releases.push_back(release);
}

size_t cuda_empty_cache() {
  // Scratch that kernels keep between calls goes back to the pools first (no pool lock is held
  // while a holder runs: a holder takes its own lock, then the pool's, as when it allocates).
  std::vector<void (*)()> releases;
  {
    std::lock_guard<std::mutex> lock(pool_table().release_mutex);
    releases = pool_table().scratch_releases;
  }
  for (void (*release)() : releases) release();
  size_t released = 0;
  for (auto& slot : pool_table().pools) {
    BlockPool* pool = slot.load(std::memory_order_acquire);
    if (pool != nullptr) released += pool->release_cached();
  }
  return released;
}

}  // namespace bl
