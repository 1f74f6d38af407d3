// exp_f64_cases.h: inputs and variants for the tests of the binary64 exp (contract/math/exp_f64.h),
// shared by the CPU test (tests/math/test_exp_f64.cpp) and the CUDA test (tests/cuda/test_exp_f64_cuda.cu).
#pragma once

#include <stdint.h>

#include <vector>

#include "contract/math/exp_log.h"

namespace exp_f64_cases {

// Inputs whose e^x lies closest to a binary32 rounding boundary: the float-float path's exception
// table (exp_log_exceptions.h) and an input on which the binary64 rounding test fires.
inline std::vector<float> hard_inputs() {
  static const uint32_t kBits[] = {
      // exception table of the float-float path
      0x33800000u, 0x383A3EF1u, 0x39C6BE5Bu, 0x39E5BB1Du, 0x40315B33u, 0x4288942Bu, 0xBAE0E25Cu,
      0xBBF0EDF1u, 0xBCE017BBu, 0xBF81EADFu, 0xC13D6631u, 0xC16912CDu,
      // binary64 rounding test fires (value within 2^-44 of a rounding boundary)
      0x3F0D642Eu,
      // misrounded by the degree-11 polynomial without the rounding test (all 2^32 inputs scanned)
      0x4283070Fu,
  };
  std::vector<float> v;
  for (uint32_t b : kBits) v.push_back(bl::float_of(b));
  return v;
}

// A variant of the device exp: Taylor degree, rounding-test margin (as -log2; 0 = no test) and
// whether the float-float path decides where the test fires.
struct Variant {
  int degree;
  int margin_bits;
  bool fallback;
};

// The shipped variant (what bl::exp does in CUDA/HIP device code).
constexpr Variant kShipped = {bl::exp_f64_detail::kExpF64Degree,
                              bl::exp_f64_detail::kExpF64MarginBits, true};
// Sabotage: degree 7 (error about 2^-26) while claiming the 2^-44 margin.
constexpr Variant kTooSmallBound = {7, 44, true};
// Control: degree 8 (error about 2^-31) with an honest margin of 2^-28 (2^25 units of binary64);
// the fallback fires often and keeps every result correct.
constexpr Variant kLowDegreeHonest = {8, 28, true};
// Sabotage of the rounding test's bound: degree 11 (error about 2^-46) trusted with a margin of
// 2^-50 (8 units of binary64 instead of the 128 its error needs): wrong on a hard input.
constexpr Variant kTooSmallUlpMargin = {11, 50, true};
// Sabotage: binary64 rounded without a rounding test, with a degree-11 polynomial (error about
// 2^-46, "far below half an ulp of binary32"): wrong on an exception-table input.
constexpr Variant kNoRoundingTest = {11, 0, false};
// The shipped polynomial without the rounding test (reported by the all-inputs GPU test).
constexpr Variant kShippedWithoutTest = {bl::exp_f64_detail::kExpF64Degree, 0, false};

// e^x by the variant; *fell_back tells whether the float-float path decided.
BL_HD float exp_variant(float x, Variant v, bool* fell_back) {
  bool hard;
  const float y = bl::exp_f64_detail::exp_f64_fast(x, v.degree, v.margin_bits, &hard);
  *fell_back = hard && v.fallback;
  return *fell_back ? bl::exp_log_detail::exp_float_float(x) : y;
}

}  // namespace exp_f64_cases
