// exp_f64_simd.h: the raw entry points behind exp_f64_cpu.h, one per instruction set. No argument
// checks here: exp_f64_cpu.cpp (baseline ISA) checks and dispatches.
#pragma once

#include <cstdint>

namespace bl {
namespace exp_f64_simd {

// The table-driven evaluation (simd/exp_f64_table.h, instantiated by exp_f64_table_avx2.cpp and
// exp_f64_table_avx512.cpp), fixed here (not taken from contract/math/exp_f64.h, whose device
// evaluation may be retuned independently). Constants and every term of the bound below are
// printed by scripts/exp_f64_table_constants.py (mpmath, 300 bits). For x in [kLow, kHigh], exact
// in binary64:
//   reduction  t = fma(x, kTableInvStep, 1.5*2^52), N = t - 1.5*2^52 = the integer nearest to
//              x * kTableInvStep (|N| <= 2056); j = N mod 16, k = N >> 4 (arithmetic);
//              r = fma(-N, kTableStepLo, fma(-N, kTableStepHi, x)) with kTableStepHi + kTableStepLo
//              within 2^-114 of ln2/16. For N != 0, |x| > 2^-6, so x is a multiple of 2^-29; N times
//              kTableStepHi is a multiple of 2^-57 and |x - N kTableStepHi| < 2^-5, so the inner fma
//              is exact; the outer rounds once. |r| <= 0.021661 (ln2/32 and a hair), absolute error
//              of r below 2^-58.5, so relative error of e^r below 2^-58.5.
//   table      Ts = kTable[j] * 2^k, kTable[j] = RN(2^(j/16)) (relative error below 2^-53.4); the
//              scaling adds k to the exponent field (exact: 2^k * kTable[j] is a normal binary64).
//   polynomial p = Horner in fma of kTableTaylor[6..1] (1/i! rounded; c_1 = 1), p ~ (e^r - 1)/r;
//              y = fma(Ts * r, p, Ts). Truncation (Taylor degree 6): |r|^7/7! e^(2|r|) < 2^-50.9
//              relative; the roundings of Horner, of Ts * r and of the final fma, and the rounded
//              coefficients: below 2^-52.8 relative.
//   total      below 2^-50.4 relative (|y - e^x| < 6.1 binary64 ulps of y).
// The rounding test then works on y's bits: y rounds to binary32 by dropping its 29 low mantissa
// bits L; a rounding boundary (a midpoint between binary32 neighbours) lies at L = 2^28 in y's
// binade, and the nearest one outside it is more than 2^27 ulps away. The lane is in doubt when
// |L - 2^28| <= W with W = 2^(53 - margin_bits) ulps (margin 2^-44: W = 512 > 2^-44 * y / ulp(y));
// otherwise e^x and y lie on the same side of every boundary and round alike. Degree 4 (error
// 2^-34.5, about 2^18.5 ulps) trusted with margin 2^-44 is the sabotage arm the tests must catch;
// with margin 2^-32 (W = 2^21 ulps) it stays correct. Degree 5 (2^-42.7) rounded without the test
// is the other sabotage arm. (Degree 6 without the test happens to round all 2^32 binary32 inputs
// right; the kernel keeps the test, so its proof does not rest on that.) The fused multiply-adds
// are part of the operations counted above (one rounding each); the binary64 value never becomes
// the result without the rounding test, so fusing is allowed here, while the float paths of the
// contract stay unfused.
constexpr int kTableDegree = 6;
constexpr int kTableMarginBits = 44;
constexpr double kTableInvStep = 0x1.71547652b82fep+4;  // RN(16/ln2)
constexpr double kTableStepHi = 0x1.62e42fefa39efp-5;   // RN(ln2/16)
constexpr double kTableStepLo = 0x1.abc9e3b39803fp-60;  // RN(ln2/16 - kTableStepHi)
// RN(2^(j/16)), j = 0..15.
alignas(64) constexpr double kTable[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};
// RN(1/i!), i = 0..6.
constexpr double kTableTaylor[7] = {0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p-1,
                                    0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7,
                                    0x1.6c16c16c16c17p-10};

// out[i] = canonicalize(bl::exp(x[i])) for i < n by the table-driven evaluation with Taylor degree
// 4, 5 or kTableDegree and the window of margin_bits (25..52; <= 0: no test). Adds the number of
// lanes recomputed by the scalar bl::exp to *fallbacks when it is not null.
void run_table_avx2(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks);
void run_table_avx512(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks);

// The table-driven kernel (degree 6, margin 2^-44) writing whole aligned blocks of out with
// non-temporal stores (then sfence): for outputs far larger than the caches. Same bits.
void run_table_stream_avx2(const float* x, float* out, int64_t n);
void run_table_stream_avx512(const float* x, float* out, int64_t n);

// One leaf of the softmax denominator: e[i] = canonicalize(bl::exp(bl::sub(x[i], m))) for
// i < len <= kReduceLeaf by the table-driven kernel (degree 6, margin 2^-44), and the leaf's value
// on the sum schedule (lane i mod 32 = lane + e[i] in ascending i, lanes folded by halving).
// `next` (may be null): len floats to prefetch meanwhile (the same leaf of the next row).
float run_table_shift_leaf_avx2(const float* x, float m, float* e, int64_t len, const float* next);
float run_table_shift_leaf_avx512(const float* x, float m, float* e, int64_t len, const float* next);

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
