// exp_f64.h: e^x for binary32 evaluated in binary64, with a rounding test and a fallback.
//
// The contract's exp (exp_log.h, float-float) is correctly rounded, so it has exactly one right
// answer per input: any other evaluation that is also correctly rounded gives the same bits. GPUs
// with fast binary64 (NVIDIA H100/H200, AMD CDNA) use this evaluation in device code: a binary64
// approximation with a proven error bound, rounded to binary32 only where the bound shows that the
// rounding cannot be in doubt; elsewhere (rarely) the float-float path decides. The float-float
// path stays the definition and the path of every other device (CPUs, Apple GPUs: no binary64).
//
// Error bound of exp_f64_approx(x) for the clamped x in [-104.5, 89] (u = 2^-53):
//   reduction  k = rint(x / ln2), r = x - k*ln2 with ln2 = L_hi + L_lo (two binary64 numbers).
//              For k != 0, |x| > 0.34, so x is a multiple of 2^-25 and x - k*L_hi a multiple of
//              2^-53 below 1/2 in magnitude: the first fma is exact. The second fma rounds once
//              (|error| <= u*|r|) and |ln2 - L_hi - L_lo| * |k| < 2^-98. |r| <= 0.3467, so the
//              reduced argument carries an absolute error below 2^-54.4: relative error of e^r
//              below 2^-54.
//   polynomial Taylor of degree 12: |e^r - T12(r)| <= |r|^13/13! * e^|r| < 2^-51.4 * e^r.
//   evaluation Horner in fma, 12 roundings plus the rounded coefficients; every partial sum is
//              below 1.5 and is damped by |r|^i: total below 8u = 2^-50 relative.
//   scaling    by 2^k, exact (2^-151 .. 2^129 are normal binary64 numbers).
//   total      below 2^-49 relative. The rounding test uses a margin of 2^-44 (32 times the bound):
//              if y*(1 - 2^-44) and y*(1 + 2^-44) round to the same binary32, so does e^x, which
//              lies between them, because rounding is monotonic. This also covers subnormal
//              results (binary64 keeps full precision there) and the overflow threshold.
// The fallback then fires for about 2^-19 of the inputs (those near a rounding boundary).
// Exhaustive evidence: tests/math/test_exp_f64.cpp (CPU, same binary64 operations) and the CPU =
// GPU sweep over all 2^32 inputs (scripts/gpu/cuda-math.sh).
#pragma once

#include "contract/arith.h"

// binary64 is available to CUDA/HIP device code and to host compilers; Metal has none.
#if !defined(__METAL_VERSION__)
#define BL_HAS_F64 1
#else
#define BL_HAS_F64 0
#endif

#if BL_HAS_F64

namespace bl {
namespace exp_f64_detail {

// Explicit binary64 operations, one rounding each (no contraction on any compiler).
BL_HD double f64_fma(double a, double b, double c) {
#if BL_DEVICE_PASS
  return __fma_rn(a, b, c);
#else
  return __builtin_fma(a, b, c);
#endif
}

BL_HD double f64_mul(double a, double b) {
#if BL_DEVICE_PASS
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

BL_HD double f64_add(double a, double b) {
#if BL_DEVICE_PASS
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

BL_HD float f64_to_f32(double a) {
#if BL_DEVICE_PASS
  return __double2float_rn(a);
#else
  return static_cast<float>(a);  // round to nearest even under the default rounding mode
#endif
}

BL_HD double f64_of_bits(uint64_t u) {
#if BL_DEVICE_PASS
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
#endif
}

BL_HD uint64_t bits_of_f64(double d) {
#if BL_DEVICE_PASS
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
#endif
}

// Taylor coefficient 1/i! rounded to binary64, i = 0..12.
BL_HD double exp_taylor(int i) {
  switch (i) {
    case 0: return 1.0;
    case 1: return 1.0;
    case 2: return 0.5;
    case 3: return 0.16666666666666666;
    case 4: return 0.041666666666666664;
    case 5: return 0.008333333333333333;
    case 6: return 0.001388888888888889;
    case 7: return 0.0001984126984126984;
    case 8: return 2.48015873015873e-05;
    case 9: return 2.7557319223985893e-06;
    case 10: return 2.755731922398589e-07;
    case 11: return 2.505210838544172e-08;
    default: return 2.08767569878681e-09;
  }
}

// Degree of the Taylor polynomial behind the error bound in the header comment.
constexpr int kExpF64Degree = 12;
// The rounding test's relative margin, as -log2; the proven error bound is 2^-49.
constexpr int kExpF64MarginBits = 44;

// e^xc in binary64 for a clamped, non-NaN xc in [-104.5, 89], using the Taylor polynomial of the
// given degree (kExpF64Degree for the bound above; lower degrees exist only for the sabotage tests).
BL_HD double exp_f64_approx(float xc, int degree) {
  const double x = static_cast<double>(xc);
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double t = f64_fma(x, 1.4426950408889634, shifter);
  const double kd = f64_add(t, -shifter);
  const double r1 = f64_fma(-kd, 0.6931471805599453, x);    // L_hi = ln2 rounded: exact, see above
  const double r = f64_fma(-kd, 2.3190468138462996e-17, r1);  // L_lo = ln2 - L_hi
  double p = exp_taylor(degree);
#if BL_GPU_COMPILER
#pragma unroll
#endif
  for (int i = kExpF64Degree - 1; i >= 0; --i)
    if (i < degree) p = f64_fma(p, r, exp_taylor(i));
  const int k = static_cast<int>(kd);
  const double scale = f64_of_bits(static_cast<uint64_t>(k + 1023) << 52);
  return f64_mul(p, scale);
}

// The binary32 rounding of e^x and whether it is in doubt (*hard): true where y*(1 -+ 2^-margin)
// round differently. margin_bits <= 0 switches the test off (sabotage tests only). NaN in ->
// canonical NaN out, never hard.
BL_HD float exp_f64_fast(float x, int degree, int margin_bits, bool* hard) {
  const bool nan = is_nan(x);
  float xc = nan ? 0.0f : x;
  xc = xc < -104.5f ? -104.5f : xc;  // e^-104.5 < 2^-150 rounds to +0, e^89 > 2^128 to +inf
  xc = xc > 89.0f ? 89.0f : xc;
  const double y = exp_f64_approx(xc, degree);
  const float f = f64_to_f32(y);
  if (margin_bits > 0) {
    const double d = f64_mul(y, f64_of_bits(static_cast<uint64_t>(1023 - margin_bits) << 52));
    const float f_lo = f64_to_f32(f64_add(y, -d));
    const float f_hi = f64_to_f32(f64_add(y, d));
    *hard = !nan && bits_of(f_lo) != bits_of(f_hi);
  } else {
    *hard = false;
  }
  return nan ? canonical_nan() : f;
}

}  // namespace exp_f64_detail
}  // namespace bl

#endif  // BL_HAS_F64
