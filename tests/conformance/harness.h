// harness.h: shared pieces of the conformance tests (tests/conformance/).
//
// A conformance test computes an op with the scalar reference (the specification) and with every
// backend, over generated cases, and demands equal bits (memcmp). Cases cover random shapes
// (0, 1, primes, large), special values (NaN, +-inf, +-0, subnormals, huge), CPU thread counts 1, 2
// and 3, and the launch shapes of kConformanceLaunchConfigs on CUDA.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "contract/compat.h"
#include "conformance/test_rng_splitmix.h"

namespace bl::conformance {

// CPU thread counts every CPU conformance test runs with.
inline const int kThreadCounts[] = {1, 2, 3};

// Lengths worth testing: empty, tiny, primes, around the reduction leaf and lane sizes, large.
inline std::vector<int64_t> interesting_lengths(bool include_large = true) {
  std::vector<int64_t> v = {0, 1, 2, 3, 7, 31, 32, 33, 97, 255, 256, 257, 1021, 4095, 4096, 4097,
                            8191, 12289, 65537};
  if (include_large) v.push_back(1000003);  // >= 10^6 and prime
  return v;
}

// Special values mixed into generated data.
inline std::vector<float> special_values() {
  return {0.0f, -0.0f, float_of(0x7F800000u), float_of(0xFF800000u), float_of(0x7FC00000u),
          float_of(0xFFC00001u), float_of(0x00000001u), float_of(0x80000001u), float_of(0x007FFFFFu),
          float_of(0x00800000u), float_of(0x7F7FFFFFu), float_of(0xFF7FFFFFu), 1.0f, -1.0f, 1e30f,
          -1e30f, 1e-30f};
}

// n floats, deterministic in seed: mostly uniform in [-scale, scale), with a special value every
// `special_every` positions (0 = none).
inline std::vector<float> generate_floats(int64_t n, uint64_t seed, float scale = 1.0f,
                                          int special_every = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  test_rng::SplitMix64 rng(seed);
  auto specials = special_values();
  for (int64_t i = 0; i < n; ++i) {
    if (special_every > 0 && i % special_every == special_every - 1) {
      v[i] = specials[rng.next() % specials.size()];
    } else {
      v[i] = rng.uniform_pm1() * scale;
    }
  }
  return v;
}

// Bitwise equality with a message naming the first differing element.
inline ::testing::AssertionResult bits_equal(const void* expected, const void* actual,
                                             size_t n_elements, size_t element_size,
                                             const std::string& context) {
  if (n_elements == 0 || std::memcmp(expected, actual, n_elements * element_size) == 0)
    return ::testing::AssertionSuccess();
  const unsigned char* a = static_cast<const unsigned char*>(expected);
  const unsigned char* b = static_cast<const unsigned char*>(actual);
  size_t i = 0;
  while (std::memcmp(a + i * element_size, b + i * element_size, element_size) == 0) ++i;
  uint32_t ea = 0, eb = 0;
  std::memcpy(&ea, a + i * element_size, element_size < 4 ? element_size : 4);
  std::memcpy(&eb, b + i * element_size, element_size < 4 ? element_size : 4);
  char buf[128];
  std::snprintf(buf, sizeof buf, "first difference at element %zu: expected bits 0x%08X, got 0x%08X", i,
                ea, eb);
  return ::testing::AssertionFailure() << context << ": " << buf;
}

inline ::testing::AssertionResult bits_equal(const std::vector<float>& expected,
                                             const std::vector<float>& actual,
                                             const std::string& context) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << context << ": sizes differ (" << expected.size()
                                         << " vs " << actual.size() << ")";
  return bits_equal(expected.data(), actual.data(), expected.size(), sizeof(float), context);
}

}  // namespace bl::conformance
