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
//   reduction  k = rint(x / ln2) (the shifter add: t = x * (1/ln2) + 1.5 * 2^52 holds k in its
//              low word; k may be off by one from rint near a half, which only widens |r| a
//              little), r = x - k*ln2 with ln2 = L_hi + L_lo (two binary64 numbers).
//              For k != 0, |x| > 0.34, so x is a multiple of 2^-25 and x - k*L_hi a multiple of
//              2^-53 below 1/2 in magnitude: the first fma is exact. The second fma rounds once
//              (|error| <= u*|r|) and |ln2 - L_hi - L_lo| * |k| < 2^-98. |r| <= 0.3467, so the
//              reduced argument carries an absolute error below 2^-54.4: relative error of e^r
//              below 2^-54.
//   polynomial degree 10, interpolating e^r at the Chebyshev nodes of [-0.3467, 0.3467]: the
//              interpolation error is below 2 (0.3467/2)^11 / 11! * e^0.3467, that is below
//              2^-51.0 relative to e^r >= e^-0.3467; rounding the 11 coefficients to binary64
//              adds below 2^-52.4 (the largest relative error of the rounded polynomial found
//              in 40-digit arithmetic at 60,001 points of the interval is 2^-51.37). (A Taylor
//              polynomial needs degree 12 for about the same bound.)
//   evaluation Horner in fma, 10 roundings; every partial sum is below 1.5 and is damped by
//              |r|^i: total below 8u = 2^-50 relative.
//   scaling    by 2^k as an integer add to the exponent field, exact (2^-152 .. 2^129 are normal
//              binary64 numbers).
//   total      below 2^-51.0 + 2^-52.4 + 2^-50 + 2^-54 < 2^-49 relative.
// Rounding test (exp_f64_round, on the integer bits of y): binary32 keeps the top 24 of y's 53
// significand bits; the 29 dropped bits D say where y lies between two binary32 neighbours, and
// D = 2^28 is the rounding boundary (the midpoint). With a margin of 2^-44 relative (32 times the
// bound), e^x lies within y * 2^-44 < 2^9 units of y's last place (y's significand is below 2^53).
// So when |D - 2^28| > 2^9, no boundary lies between y and e^x, and y's rounding (round half up
// on the bits; exact halves always count as in doubt) is e^x's. Results below 2^-126 are first
// moved into [2^-126, 2^-125) by one binary64 add (see exp_f64_round), so the same test covers
// subnormal results; at the overflow threshold the boundary is the midpoint of FLT_MAX and 2^128,
// also D = 2^28. The fallback then fires for about 2^-19 of the inputs (those near a boundary).
// Device cost: no conversion instruction (binary32 <-> binary64 conversions run at a quarter of the
// binary64 fma rate on sm_90): x goes to binary64 on its bits, k comes from t's bits, the result
// and the test come from y's bits: 14 binary64 fma/add (one more for results below 2^-126) and
// about 30 integer operations per element; the coefficients come from constant memory.
// Exhaustive evidence: tests/math/test_exp_f64.cpp (CPU, same binary64 operations) and the CPU =
// GPU sweep over all 2^32 inputs (scripts/gpu-check.sh --exhaustive).
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
  return BL_DEVICE_OR_HOST(__fma_rn(a, b, c), __builtin_fma(a, b, c));
}

BL_HD double f64_add(double a, double b) {
  return BL_DEVICE_OR_HOST(__dadd_rn(a, b), a + b);
}

// The bits of `from` as a To of the same size, in host code (memcpy: no aliasing rule broken).
template <class To, class From>
BL_HD To host_bit_cast(From from) {
  To to;
  memcpy(&to, &from, sizeof to);
  return to;
}

BL_HD double f64_of_bits(uint64_t u) {
  return BL_DEVICE_OR_HOST(__longlong_as_double(static_cast<long long>(u)), host_bit_cast<double>(u));
}

BL_HD uint64_t bits_of_f64(double d) {
  return BL_DEVICE_OR_HOST(static_cast<uint64_t>(__double_as_longlong(d)), host_bit_cast<uint64_t>(d));
}

// Taylor coefficient 1/i! rounded to binary64, i = 0..12 (the sabotage and control variants).
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

// Degree of the shipped polynomial behind the error bound in the header comment.
constexpr int kExpF64Degree = 10;
// The rounding test's relative margin, as -log2; the proven error bound is 2^-49.
constexpr int kExpF64MarginBits = 44;

// The shipped polynomial: e^r interpolated at the 11 Chebyshev nodes of [-0.3467, 0.3467]
// (computed in 50-digit arithmetic), coefficients rounded to binary64, lowest degree first.
#define BL_EXP_F64_COEFFICIENTS                                                            \
  1.0, 1.0000000000000067, 0.5000000000000006, 0.16666666666554075, 0.04166666666657287, \
      0.008333333385782495, 0.0013888888932584156, 0.00019841170124960627,                \
      2.4801504225811066e-05, 2.7640241334861507e-06, 2.762640767090547e-07

#if BL_GPU_COMPILER
// Device code reads each coefficient with one constant-memory load instead of building the
// 64-bit immediate with two moves (instruction issue is what limits exp on the GPU).
static __constant__ double kExpF64DeviceCoefficients[kExpF64Degree + 1] = {BL_EXP_F64_COEFFICIENTS};
#endif
constexpr double kExpF64HostCoefficients[kExpF64Degree + 1] = {BL_EXP_F64_COEFFICIENTS};

// Coefficient i of the polynomial of the given degree: the shipped one for kExpF64Degree, the
// Taylor polynomial otherwise.
BL_HD double exp_coefficient(int degree, int i) {
  if (degree != kExpF64Degree) return exp_taylor(i);
  return BL_DEVICE_OR_HOST(kExpF64DeviceCoefficients, kExpF64HostCoefficients)[i];
}

// binary32 -> binary64 on the integer bits (exact; no conversion instruction, which runs at a
// quarter of the binary64 fma rate on GPUs): the exponent is rebiased (+896) and the mantissa moves
// up 29 bits. Zero and subnormal x give a signed zero: e^x rounds to 1 for them, as for 0.
BL_HD double f64_of_f32(float x) {
  const uint32_t u = bits_of(x);
  const uint32_t sign = u & 0x80000000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  const bool normal = a >= 0x00800000u;
  const uint32_t hi = normal ? sign | ((a >> 3) + (896u << 20)) : sign;
  const uint32_t lo = normal ? u << 29 : 0u;
  return f64_of_bits((static_cast<uint64_t>(hi) << 32) | lo);
}

// e^xc in binary64 for a clamped, non-NaN xc in [-104.5, 89], using the shipped polynomial
// (degree kExpF64Degree, the bound above) or, for other degrees (sabotage and control tests only),
// the Taylor polynomial of that degree.
// k = rint(x / ln2) comes from the shifter add (t = x / ln2 + 1.5 * 2^52 holds k in its low word),
// and 2^k is applied by an integer add to the exponent field (exact: the result is normal).
BL_HD double exp_f64_approx(float xc, int degree) {
  const double x = f64_of_f32(xc);
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double t = f64_fma(x, 1.4426950408889634, shifter);
  const double kd = f64_add(t, -shifter);
  const double r1 = f64_fma(-kd, 0.6931471805599453, x);    // L_hi = ln2 rounded: exact, see above
  const double r = f64_fma(-kd, 2.3190468138462996e-17, r1);  // L_lo = ln2 - L_hi
  double p = exp_coefficient(degree, degree);
#if BL_GPU_COMPILER
#pragma unroll
#endif
  for (int i = 11; i >= 0; --i)  // 11: the highest degree of a variant (12) less one
    if (i < degree) p = f64_fma(p, r, exp_coefficient(degree, i));
  const uint32_t k = static_cast<uint32_t>(bits_of_f64(t));  // two's complement k, |k| < 2^8
  return f64_of_bits(bits_of_f64(p) + (static_cast<uint64_t>(k << 20) << 32));
}

// The rounding test's tolerance in units of the last place of y (binary64): a relative margin of
// 2^-margin_bits is at most 2^(53 - margin_bits) such units, since y's significand is below 2^53.
BL_HD uint32_t exp_f64_margin_ulps(int margin_bits) {
  if (margin_bits <= 25) return 1u << 28;  // every input in doubt
  return margin_bits >= 53 ? 1u : 1u << (53 - margin_bits);
}

// y (binary64, 2^-152 < y, not NaN) rounded to binary32 on its integer bits, and whether that
// rounding is in doubt: true when the 29 bits that binary32 drops lie within margin_ulps of the
// half-way pattern 0x10000000, i.e. a rounding boundary lies within margin_ulps units of y.
// Normal results: the float's bits are y's bits shifted right by 29 (exponent rebiased by -896),
// plus the round bit (round half up; exact halves are always in doubt, so ties never decide); a
// carry into the exponent is right, and results from 2^128 on saturate to +inf. Results below
// 2^-126 are first moved by z = y + 2^-126 into [2^-126, 2^-125), where binary32's spacing is
// 2^-149 as for subnormals; that add rounds once (at most 2^-179, a 2^-3 unit of z) and the
// binary32 rounding of z less 2^-126 (one exponent step off the bits) is that of y.
BL_HD float exp_f64_round(double y, uint32_t margin_ulps, bool test, bool* hard) {
  const bool small = static_cast<uint32_t>(bits_of_f64(y) >> 32) < (897u << 20);  // y < 2^-126
  const double v = small ? f64_add(y, 0x1p-126) : y;
  const uint64_t b = bits_of_f64(v);
  const uint32_t hi = static_cast<uint32_t>(b >> 32), lo = static_cast<uint32_t>(b);
  uint32_t f = ((hi - (896u << 20)) << 3) | (lo >> 29);
  f += (lo >> 28) & 1u;
  f = f > 0x7F800000u ? 0x7F800000u : f;
  f -= small ? 0x00800000u : 0u;
  const uint32_t dropped = lo & 0x1FFFFFFFu;
  *hard = test && dropped - (0x10000000u - margin_ulps) <= 2u * margin_ulps;
  return float_of(f);
}

// The binary32 rounding of e^x and whether it is in doubt (*hard): true where a rounding boundary
// lies within y * 2^-margin_bits of the binary64 value y (exp_f64_round). margin_bits <= 0
// switches the test off (sabotage tests only). NaN in -> canonical NaN out, never hard.
BL_HD float exp_f64_fast(float x, int degree, int margin_bits, bool* hard) {
  const bool nan = is_nan(x);
  float xc = nan ? 0.0f : x;
  xc = xc < -104.5f ? -104.5f : xc;  // e^-104.5 < 2^-150 rounds to +0, e^89 > 2^128 to +inf
  xc = xc > 89.0f ? 89.0f : xc;
  const double y = exp_f64_approx(xc, degree);
  const bool test = margin_bits > 0;
  const float f = exp_f64_round(y, test ? exp_f64_margin_ulps(margin_bits) : 0u, test, hard);
  *hard = *hard && !nan;
  return nan ? canonical_nan() : f;
}

}  // namespace exp_f64_detail
}  // namespace bl

#endif  // BL_HAS_F64
