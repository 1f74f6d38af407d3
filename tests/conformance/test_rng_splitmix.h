// rng_simple_for_tests.h: a tiny SplitMix64 used only to generate test inputs on the host.
// Library code uses Philox (contract/rng.h); this exists so test data does not depend on it.
#pragma once

#include <stdint.h>

namespace bl::test_rng {

struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1) with 24 random bits (exact in binary32).
  float uniform_pm1() { return static_cast<float>(static_cast<int32_t>(next() >> 40) - (1 << 23)) * 0x1p-23f; }
};

}  // namespace bl::test_rng
