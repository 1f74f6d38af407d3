// exp_f64_simd.h: the raw entry points behind exp_f64_cpu.h, one per instruction set. No argument
// checks here: exp_f64_cpu.cpp (baseline ISA) checks and dispatches.
#pragma once

#include <cstdint>

namespace bl {
namespace exp_f64_simd {

// out[i] = canonicalize(bl::exp(x[i])) for i < n with Taylor degree 7, 11 or 12 and the rounding
// test's margin 2^-margin_bits (<= 0: no test). Adds the number of lanes recomputed by the scalar
// bl::exp to *fallbacks when it is not null.
void run_avx2(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks);
void run_avx512(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks);

// The input range evaluated in SIMD; inputs between it and the +0 / +inf ranges below, and NaN,
// go to the scalar bl::exp. e^-87
// is above the smallest normal binary32 and e^88 below the largest, so no lane kept from SIMD is
// subnormal, infinite or NaN.
constexpr float kLow = -87.0f;
constexpr float kHigh = 88.0f;
// Below kZeroBelow (including -inf) e^x < 2^-150 rounds to +0; above kInfAbove (including +inf)
// e^x > 2^128 rounds to +inf: the kernels store these directly (e^-104 < 7.0e-46 < 2^-150).
constexpr float kZeroBelow = -104.0f;
constexpr float kInfAbove = 89.0f;

}  // namespace exp_f64_simd
}  // namespace bl
