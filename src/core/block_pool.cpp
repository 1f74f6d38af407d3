// block_pool.cpp: size classes, best-fit free list and the out-of-memory retry of BlockPool.
#include "core/block_pool.h"

#include <algorithm>

#include "core/error.h"

namespace bl {

size_t block_size_class(size_t bytes) {
  if (bytes <= kBlockSmallLimit) {
    size_t request = std::max<size_t>(bytes, 1);
    return (request + kBlockSmallStep - 1) / kBlockSmallStep * kBlockSmallStep;
  }
  return (bytes + kBlockLargeStep - 1) / kBlockLargeStep * kBlockLargeStep;
}

bool block_fits(size_t block_bytes, size_t rounded) {
  if (block_bytes < rounded) return false;
  size_t slack = rounded <= kBlockSmallLimit ? rounded : rounded / 4;
  return block_bytes - rounded <= slack;
}

BlockPool::BlockPool(BlockSource& source, bool caching, std::string name)
    : source_(source), caching_(caching), name_(std::move(name)) {}

void* BlockPool::allocate(size_t bytes, const char* op) {
  BL_CHECK(bytes <= kBlockMaxRequest, op, ": cannot allocate ", bytes, " bytes on ", name_,
           " (more than any device holds)");
  const size_t rounded = block_size_class(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* ptr = nullptr;
  size_t block_bytes = rounded;
  auto it = free_blocks_.lower_bound({rounded, nullptr});
  if (it != free_blocks_.end() && block_fits(it->first, rounded)) {
    block_bytes = it->first;
    ptr = it->second;
    free_blocks_.erase(it);
    stats_.bytes_cached -= block_bytes;
    ++stats_.cache_hits;
  } else {
    ptr = source_allocate_locked(rounded, op, bytes);
  }
  live_blocks_.emplace(ptr, block_bytes);
  stats_.bytes_in_use += block_bytes;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return ptr;
}

void* BlockPool::source_allocate_locked(size_t rounded, const char* op, size_t bytes) {
  void* ptr = source_.allocate(rounded);
  if (ptr == nullptr && !free_blocks_.empty()) {
    ++stats_.oom_releases;
    release_cached_locked();
    ptr = source_.allocate(rounded);
  }
  if (ptr == nullptr) {
    release_cached_locked();  // empty already unless the retry failed after a release
    throw Error(detail::concat(op, ": out of memory on ", name_, ": could not allocate ", bytes,
                               " bytes (", rounded, " with rounding); ", stats_.bytes_in_use,
                               " bytes are in use by live tensors, the cache was released"));
  }
  ++stats_.source_allocations;
  return ptr;
}

bool BlockPool::free(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_blocks_.find(ptr);
  if (it == live_blocks_.end()) return false;
  const size_t block_bytes = it->second;
  live_blocks_.erase(it);
  stats_.bytes_in_use -= block_bytes;
  if (caching_) {
    free_blocks_.emplace(block_bytes, ptr);
    stats_.bytes_cached += block_bytes;
  } else {
    source_.release(ptr, block_bytes);
    ++stats_.source_releases;
  }
  return true;
}

size_t BlockPool::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  return release_cached_locked();
}

size_t BlockPool::release_cached_locked() {
  size_t released = 0;
  for (const auto& block : free_blocks_) {
    source_.release(block.second, block.first);
    released += block.first;
    ++stats_.source_releases;
  }
  free_blocks_.clear();
  stats_.bytes_cached = 0;
  return released;
}

BlockPoolStats BlockPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace bl
