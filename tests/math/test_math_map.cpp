// Conformance of the CPU math map: every function, thread counts 1/2/3, both chunk loops
// (baseline and AVX2), lengths around the chunk size, special values and a bit-pattern sweep
// that touches every exponent; all compared with the scalar reference by memcmp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "core/error.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "kernels/math_map.h"

namespace {

using bl::MathFn;

// Inputs for one function: special values, a stride through all 2^32 bit patterns, and uniform
// values at a few scales, interleaved so that every chunk holds a mix.
std::vector<float> math_inputs(int64_t n, uint64_t seed) {
  std::vector<float> v = bl::conformance::generate_floats(n, seed, 1.0f, 5);
  bl::test_rng::SplitMix64 rng(seed ^ 0x5EEDull);
  const float scales[] = {1.0f, 4.0f, 30.0f, 120.0f, 1e5f};
  for (int64_t i = 0; i < n; ++i) {
    if (i % 3 == 0) {
      v[i] = bl::float_of(static_cast<uint32_t>(rng.next() >> 32));  // any bit pattern
    } else if (i % 5 != 4) {
      v[i] = v[i] * scales[i % 5];
    }
  }
  return v;
}

std::vector<float> reference(MathFn fn, const std::vector<float>& x, const std::vector<float>* y) {
  std::vector<float> out(x.size());
  bl::math_map_reference(fn, x.data(), y ? y->data() : nullptr, out.data(),
                         static_cast<int64_t>(x.size()));
  return out;
}

std::vector<float> cpu_map(MathFn fn, const std::vector<float>& x, const std::vector<float>* y,
                           bl::ThreadPool& pool) {
  std::vector<float> out(x.size(), 12345.0f);
  if (y)
    bl::math_map_cpu(fn, x.data(), y->data(), out.data(), static_cast<int64_t>(x.size()), pool);
  else
    bl::math_map_cpu(fn, x.data(), out.data(), static_cast<int64_t>(x.size()), pool);
  return out;
}

const int64_t kLengths[] = {0, 1, 7, 33, 4097, bl::kMathMapChunk - 1, bl::kMathMapChunk,
                            bl::kMathMapChunk + 1, 3 * bl::kMathMapChunk + 17, 200003};

TEST(MathMapCpu, EveryFunctionMatchesReferenceAtThreads123) {
  for (MathFn fn : bl::all_math_fns()) {
    const bool binary = bl::math_arity(fn) == 2;
    for (int64_t n : kLengths) {
      std::vector<float> x = math_inputs(n, 1000 + n);
      std::vector<float> y = math_inputs(n, 2000 + n);
      std::vector<float> ref = reference(fn, x, binary ? &y : nullptr);
      for (int threads : bl::conformance::kThreadCounts) {
        bl::ThreadPool pool(threads);
        std::vector<float> got = cpu_map(fn, x, binary ? &y : nullptr, pool);
        ASSERT_TRUE(bl::conformance::bits_equal(
            ref, got,
            std::string(bl::math_fn_name(fn)) + " n=" + std::to_string(n) +
                " threads=" + std::to_string(threads)));
      }
    }
  }
}

TEST(MathMapCpu, BaselineAndAvx2ChunkLoopsMatchReference) {
  const int64_t n = 65537;
  for (MathFn fn : bl::all_math_fns()) {
    std::vector<float> x = math_inputs(n, 77);
    std::vector<float> y = math_inputs(n, 78);
    const float* yp = bl::math_arity(fn) == 2 ? y.data() : nullptr;
    std::vector<float> ref(n), got(n);
    bl::math_map_reference(fn, x.data(), yp, ref.data(), n);
    bl::math_map_chunk_baseline(fn, x.data(), yp, got.data(), n);
    ASSERT_TRUE(bl::conformance::bits_equal(ref, got, std::string(bl::math_fn_name(fn)) + " baseline"));
    if (bl::cpu_has_avx2_fma()) {
      bl::math_map_chunk_avx2(fn, x.data(), yp, got.data(), n);
      ASSERT_TRUE(bl::conformance::bits_equal(ref, got, std::string(bl::math_fn_name(fn)) + " avx2"));
    }
  }
}

TEST(MathMapCpu, SpecialValuesAndCanonicalNan) {
  std::vector<float> x = bl::conformance::special_values();
  for (uint32_t b : {0x7FC00001u, 0xFFFFFFFFu, 0x7F800001u, 0xFF800001u, 0x00000002u, 0x80400000u})
    x.push_back(bl::float_of(b));
  bl::ThreadPool pool(2);
  for (MathFn fn : bl::all_math_fns()) {
    const bool binary = bl::math_arity(fn) == 2;
    // For pow, every special value against every special value.
    std::vector<float> xs, ys;
    for (float a : x) {
      if (binary) {
        for (float b : x) { xs.push_back(a); ys.push_back(b); }
      } else {
        xs.push_back(a);
      }
    }
    std::vector<float> ref = reference(fn, xs, binary ? &ys : nullptr);
    std::vector<float> got = cpu_map(fn, xs, binary ? &ys : nullptr, pool);
    ASSERT_TRUE(bl::conformance::bits_equal(ref, got, bl::math_fn_name(fn)));
    for (size_t i = 0; i < got.size(); ++i)
      if (bl::is_nan(got[i])) ASSERT_EQ(bl::bits_of(got[i]), bl::kCanonicalNanBits) << bl::math_fn_name(fn);
  }
}

TEST(MathMapCpu, NamesRoundTripAndUnknownNameIsNamed) {
  for (MathFn fn : bl::all_math_fns()) EXPECT_EQ(bl::math_fn_from_name(bl::math_fn_name(fn)), fn);
  EXPECT_EQ(bl::all_math_fns().size(), static_cast<size_t>(bl::kMathFnCount));
  EXPECT_EQ(bl::math_arity(MathFn::pow), 2);
  EXPECT_EQ(bl::math_arity(MathFn::exp), 1);
  try {
    bl::math_fn_from_name("expf");
    FAIL() << "expected bl::Error";
  } catch (const bl::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'expf'"), std::string::npos) << m;
    EXPECT_NE(m.find("gelu_tanh"), std::string::npos) << m;
  }
}

TEST(MathMapCpu, BadArgumentsThrow) {
  bl::ThreadPool pool(1);
  float a[4] = {1, 2, 3, 4}, out[4];
  EXPECT_THROW(bl::math_map_cpu(MathFn::pow, a, out, 4, pool), bl::Error);
  EXPECT_THROW(bl::math_map_cpu(MathFn::exp, a, a, out, 4, pool), bl::Error);
  EXPECT_THROW(bl::math_map_cpu(MathFn::exp, a, out, -1, pool), bl::Error);
  EXPECT_THROW(bl::math_map_cpu(MathFn::exp, nullptr, out, 4, pool), bl::Error);
  EXPECT_NO_THROW(bl::math_map_cpu(MathFn::exp, nullptr, nullptr, 0, pool));
}

// Sabotage arm 1: tanh computed by another (mathematically equal) formula from bl::exp. The same
// memcmp comparison must see the difference.
TEST(MathMapCpu, SabotageOtherTanhFormulaIsCaught) {
  const int64_t n = 4097;
  std::vector<float> x = math_inputs(n, 5);
  std::vector<float> ref = reference(MathFn::tanh, x, nullptr);
  std::vector<float> bad(n);
  for (int64_t i = 0; i < n; ++i) {
    float e = bl::exp(bl::mul(2.0f, x[i]));
    bad[i] = bl::canonicalize(bl::div(bl::sub(e, 1.0f), bl::add(e, 1.0f)));
  }
  EXPECT_FALSE(bl::conformance::bits_equal(ref, bad, "sabotage tanh"));
}

// Sabotage arm 2: the CPU map's output with one element, at a chunk boundary, moved by one ulp.
TEST(MathMapCpu, SabotageOneUlpAtChunkBoundaryIsCaught) {
  const int64_t n = 2 * bl::kMathMapChunk + 5;
  std::vector<float> x = math_inputs(n, 9);
  for (int64_t i = 0; i < n; ++i) x[i] = bl::abs(x[i]) + 1.0f;  // finite, positive results
  bl::ThreadPool pool(3);
  std::vector<float> got = cpu_map(MathFn::log, x, nullptr, pool);
  std::vector<float> ref = reference(MathFn::log, x, nullptr);
  ASSERT_TRUE(bl::conformance::bits_equal(ref, got, "log"));
  got[bl::kMathMapChunk] = bl::float_of(bl::bits_of(got[bl::kMathMapChunk]) + 1u);
  EXPECT_FALSE(bl::conformance::bits_equal(ref, got, "sabotage log one ulp"));
}

}  // namespace
