// boost_chunks.h: the fixed row chunks of histogram boosting's row passes. The cut depends on the
// row count only, so per-chunk partial results combined in chunk order do not depend on threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/thread_pool.h"

namespace bl::ml {

constexpr int64_t kBoostRowChunk = 4096;

// Runs fn(c, begin, end) for the fixed chunks [begin, end) of kBoostRowChunk in [0, n) on the default
// pool; returns the number of chunks.
template <typename Fn>
int64_t for_chunk_ranges(int64_t n, Fn fn) {
  const int64_t chunks = (n + kBoostRowChunk - 1) / kBoostRowChunk;
  default_pool().parallel_for(chunks, [&](int64_t c) {
    fn(c, c * kBoostRowChunk, std::min(n, (c + 1) * kBoostRowChunk));
  });
  return chunks;
}

// Runs fn(i) for i in [0, n) as the fixed chunks on the default pool.
template <typename Fn>
void for_row_chunks(int64_t n, Fn fn) {
  for_chunk_ranges(n, [&](int64_t, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

}  // namespace bl::ml
