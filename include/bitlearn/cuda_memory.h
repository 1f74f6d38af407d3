// cuda_memory.h: the caching allocator that holds the memory of CUDA tensors and scratch buffers.
//
// Freed CUDA blocks are kept per device and handed to the next request of a similar size, so ops
// do not pay for cudaMalloc / cudaFree (cudaFree waits for the whole device) on every temporary.
// All CUDA work runs in order on the default stream, so a freed block can be reused at once. When
// cudaMalloc runs out of memory, the cache is released and the allocation retried once; if that
// fails, bl::Error names the op and the size. BITLEARN_CUDA_CACHE=0 in the environment turns the
// cache off (every free is a cudaFree), for debugging with compute-sanitizer. Like
// torch.cuda.memory_stats / torch.cuda.empty_cache.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bl {

// What the allocator of one CUDA device holds. Bytes are block sizes (requests rounded up to
// 512 bytes, or to 2 MiB above 1 MiB), so they are at least what tensors asked for.
struct CudaMemoryStats {
  size_t bytes_in_use = 0;        // blocks held by live tensors and scratch buffers
  size_t bytes_cached = 0;        // freed blocks kept for reuse (not returned to CUDA)
  size_t peak_bytes_in_use = 0;   // highest bytes_in_use since the process started
  uint64_t cuda_malloc_count = 0; // cudaMalloc calls made by the allocator
  uint64_t cuda_free_count = 0;   // cudaFree calls made by the allocator
  uint64_t cache_hits = 0;        // requests served from cached blocks
  uint64_t oom_releases = 0;      // times an out-of-memory cudaMalloc emptied the cache
  bool caching = false;           // false when BITLEARN_CUDA_CACHE=0 (or without CUDA)
};

// Counters of CUDA device `device` (all zero in a build without CUDA or for a device the process
// has not allocated on yet). Throws bl::Error for a negative device.
CudaMemoryStats cuda_memory_stats(int device = 0);

// Returns every cached free block of every CUDA device to CUDA (cudaFree) and the bytes released,
// including the scratch that ops keep between calls (the leaf-parallel GEMM's partial sums; taken
// again on the next such call); memory of live tensors is untouched. 0 in a build without CUDA.
size_t cuda_empty_cache();

}  // namespace bl
