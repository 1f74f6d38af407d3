// block_pool.h: the caching allocator behind CUDA memory, written against an abstract source of
// raw memory so that its size classes, free lists and out-of-memory handling run on any machine.
//
// A request is rounded to a size class (512-byte steps up to 1 MiB, 2 MiB steps above). A freed
// block is kept on the pool's free list instead of going back to the source; the next request
// takes the smallest cached block that fits it without wasting too much (best fit). A block is
// never split or merged, so every block a caller sees starts at an address the source returned
// (for cudaMalloc: 256-byte aligned, as without the cache). When the source is out of memory, the
// pool returns every cached block to it and tries once more; if that fails too it throws
// bl::Error naming the op and the size. All members are thread-safe (one mutex per pool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

namespace bl {

// Where a pool gets its memory from (cudaMalloc / cudaFree for CUDA; a fake in tests).
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  // A new block of exactly bytes bytes, or nullptr when the source is out of memory. Any other
  // failure throws bl::Error.
  virtual void* allocate(size_t bytes) = 0;
  // Returns a block obtained from allocate (its size given back for bookkeeping). Never throws.
  virtual void release(void* ptr, size_t bytes) = 0;
};

// Counters of one pool; bytes are block sizes (rounded), not the sizes callers asked for.
struct BlockPoolStats {
  size_t bytes_in_use = 0;       // blocks handed out and not yet freed
  size_t bytes_cached = 0;       // blocks on the free list, ready for reuse
  size_t peak_bytes_in_use = 0;  // highest bytes_in_use so far
  uint64_t source_allocations = 0;  // calls that reached the source (cudaMalloc count)
  uint64_t source_releases = 0;     // blocks given back to the source (cudaFree count)
  uint64_t cache_hits = 0;          // requests served from the free list
  uint64_t oom_releases = 0;        // times an out-of-memory source made the pool empty its cache
};

constexpr size_t kBlockSmallLimit = size_t(1) << 20;  // requests up to 1 MiB are "small"
constexpr size_t kBlockSmallStep = 512;                // size-class step of small requests
constexpr size_t kBlockLargeStep = size_t(2) << 20;    // size-class step of larger requests
constexpr size_t kBlockMaxRequest = size_t(1) << 60;   // larger requests are refused outright

// The size class of a request of bytes bytes: 0 and 1..512 give 512, then multiples of 512 up to
// 1 MiB, then multiples of 2 MiB. bytes must be at most kBlockMaxRequest.
size_t block_size_class(size_t bytes);

// True when a cached block of block_bytes may serve a request of size class rounded: it is at
// least as large, and at most twice as large (small) or a quarter larger (large requests).
bool block_fits(size_t block_bytes, size_t rounded);

class BlockPool {
 public:
  // source must outlive the pool. With caching false, every free goes straight back to the
  // source (no free list); name ("cuda:0") appears in error messages.
  BlockPool(BlockSource& source, bool caching, std::string name);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A block of at least bytes bytes (never nullptr, also for 0 bytes). Throws bl::Error naming op
  // when the source cannot supply it even after the cache was emptied.
  void* allocate(size_t bytes, const char* op);
  // Takes back a block from allocate: onto the free list, or to the source when caching is off.
  // Returns false (and does nothing) for a pointer this pool did not hand out.
  bool free(void* ptr);
  // Gives every cached free block back to the source; returns the bytes released. Blocks in use
  // are not touched.
  size_t release_cached();
  // A snapshot of the counters.
  BlockPoolStats stats() const;
  bool caching() const { return caching_; }

 private:
  size_t release_cached_locked();
  void* source_allocate_locked(size_t rounded, const char* op, size_t bytes);

  BlockSource& source_;
  const bool caching_;
  const std::string name_;
  mutable std::mutex mutex_;
  std::set<std::pair<size_t, void*>> free_blocks_;  // (block size, block), smallest first
  std::unordered_map<void*, size_t> live_blocks_;   // block -> block size
  BlockPoolStats stats_;
};

}  // namespace bl
