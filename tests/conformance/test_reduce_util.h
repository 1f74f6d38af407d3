// test_reduce_util.h: pieces shared by the conformance tests of reduce, softmax, norm, cumsum, sort.
#pragma once

#include <memory>
#include <vector>

#include "conformance/harness.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"

namespace bl::conformance {

// One pool per thread count of kThreadCounts, made once.
inline ThreadPool& pool_with(int threads) {
  static std::unique_ptr<ThreadPool> pools[4];
  if (!pools[threads]) pools[threads].reset(new ThreadPool(threads));
  return *pools[threads];
}

// Runs body(pool, label) for every thread count, with SIMD on and off.
template <class Body>
void for_each_cpu_config(Body body) {
  for (int simd = 1; simd >= 0; --simd) {
    cpu::simd_enabled() = simd != 0;
    for (int t : kThreadCounts)
      body(pool_with(t), std::string("threads=") + std::to_string(t) + (simd ? " simd" : " scalar"));
  }
  cpu::simd_enabled() = true;
}

// Test data: plain, and with a special value every 37 elements.
inline std::vector<std::vector<float>> data_variants(int64_t n, uint64_t seed) {
  return {generate_floats(n, seed, 1.0f, 0), generate_floats(n, seed + 1, 100.0f, 37)};
}

}  // namespace bl::conformance
