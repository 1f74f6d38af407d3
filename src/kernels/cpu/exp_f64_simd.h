// exp_f64_simd.h: the raw entry points behind exp_f64_cpu.h, one per instruction set. No argument
// checks here: exp_f64_cpu.cpp (baseline ISA) checks and dispatches.
#pragma once

#include <cstdint>

namespace bl {
namespace exp_f64_simd {

// The evaluation, fixed here (not taken from contract/math/exp_f64.h, whose device evaluation may be
// retuned independently). For x in [kLow, kHigh] (u = 2^-53):
//   reduction  k = rint(x / ln2) via t = fma(x, 1/ln2, 1.5*2^52), kd = t - 1.5*2^52;
//              r = fma(-kd, L_lo, fma(-kd, L_hi, x)) with ln2 = L_hi + L_lo. For k != 0, |x| > 0.34,
//              so x is a multiple of 2^-25 and the first fma is exact; the second rounds once;
//              |ln2 - L_hi - L_lo| * |k| < 2^-98. |r| <= 0.3467, absolute error below 2^-54.4.
//   polynomial Taylor of degree 12 in Horner form with fma: truncation |r|^13/13! * e^|r| below
//              2^-51.4 relative; 12 roundings of partial sums below 1.5, damped by |r|^i, and the
//              rounded coefficients: below 2^-50 relative.
//   scaling    by 2^k built from the low bits of t: exact (2^k is a normal binary64).
//   total      below 2^-49 relative. The rounding test's margin 2^-44 is 32 times that: when
//              y(1 - 2^-44) and y(1 + 2^-44) round to the same binary32, e^x (between them) rounds
//              to it too, rounding being monotonic.
// The fused multiply-adds are part of the operations counted above (one rounding each); the binary64
// value never becomes the result without the rounding test, so fusing is allowed here, while the
// float paths of the contract stay unfused.
constexpr int kDegree = 12;
constexpr int kMarginBits = 44;
// 1/i! rounded to binary64, i = 0..12.
constexpr double kTaylor[13] = {1.0,
                                1.0,
                                0.5,
                                0.16666666666666666,
                                0.041666666666666664,
                                0.008333333333333333,
                                0.001388888888888889,
                                0.0001984126984126984,
                                2.48015873015873e-05,
                                2.7557319223985893e-06,
                                2.755731922398589e-07,
                                2.505210838544172e-08,
                                2.08767569878681e-09};

// out[i] = canonicalize(bl::exp(x[i])) for i < n with Taylor degree 7, 11 or kDegree and the rounding
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
