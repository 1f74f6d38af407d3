// exact_gemm.h: the exact-integer matrix product (contract profile bitlearn.exact_gemm.v1), its
// raw-pointer API and its scalar reference.
//
// The default GEMM (kernels/matmul.h) fixes a summation order. This profile needs none: every
// output is computed exactly in integers and rounded once, so any order, tiling, thread count,
// integer width or device gives the same bits. The definition (docs/contract.md, "The exact GEMM
// profile"):
//
//   1. Row exponent. For row m of op(A), Ea(m) is the largest binary exponent e of its finite
//      non-zero entries, where 2^(e-1) <= |x| < 2^e (Ea = 0 for a row without such entries);
//      likewise Eb(n) for column n of op(B).
//   2. Integers. Every finite entry x of the row becomes X = round_half_even(x * 2^(S - Ea(m)))
//      with S = kExactGemmBits = 28, so |X| < 2^28 (the largest entries of a row keep all their 24
//      bits; entries more than 2^4 times smaller lose low bits). Non-finite entries give X = 0.
//   3. Exact dot. T(m, n) = sum over k of X(m, k) * Y(k, n), an exact integer (|T| < 2^56 * K,
//      held in 128 bits).
//   4. One rounding. C(m, n) = round_half_even(T * 2^(Ea(m) + Eb(n) - 2S)) to binary32, with
//      gradual underflow and overflow to +-inf; T == 0 gives +0.0 (a non-zero T too small for a
//      subnormal rounds to a zero of its own sign).
//   5. Special values. When row m or column n holds a non-finite entry, C(m, n) is decided by the
//      products with a non-finite factor alone: the canonical NaN when one of them is NaN (a NaN
//      factor, or inf * 0) or when they hold both +inf and -inf, else the infinity they share.
//
// The result depends only on row m of op(A) and column n of op(B): batch-invariant like the default
// profile. The layouts and argument rules are those of MatmulArgs (kernels/matmul.h).
#pragma once

#include <stdint.h>

#include "contract/arith.h"
#include "kernels/matmul.h"

namespace bl {

// Bits kept per row (the S of the definition) and the largest K a product may have (the exact sums
// are held in 128 bits, far more than K <= 2^31 needs).
constexpr int kExactGemmBits = 28;
constexpr int64_t kExactGemmMaxK = int64_t(1) << 31;

// The frexp-style exponent of a finite non-zero float (2^(e-1) <= |x| < 2^e); 0 for zero.
BL_HD int exact_gemm_exponent(float x) {
  const uint32_t u = bits_of(x) & 0x7FFFFFFFu;
  const int biased = int(u >> 23);
  if (biased != 0) return biased - 126;
  int e = -149;  // subnormal: the position of the highest set mantissa bit
  for (uint32_t m = u; m != 0; m >>= 1) ++e;
  return u == 0 ? 0 : e;
}

// X = round_half_even(x * 2^(kExactGemmBits - row_exp)) for a finite x of a row whose exponent is
// row_exp (so |X| < 2^28); 0 for a non-finite x.
BL_HD int32_t exact_gemm_integer(float x, int row_exp) {
  const uint32_t bits = bits_of(x);
  const uint32_t u = bits & 0x7FFFFFFFu;
  if (u == 0 || u >= 0x7F800000u) return 0;
  const int biased = int(u >> 23);
  // x = mant * 2^(q), mant an integer < 2^24.
  const uint32_t mant = biased != 0 ? ((u & 0x7FFFFFu) | 0x800000u) : u;
  const int q = (biased != 0 ? biased : 1) - 150;
  const int shift = q + kExactGemmBits - row_exp;  // X = mant * 2^shift
  uint32_t mag;
  if (shift >= 0) {
    mag = mant << shift;  // shift <= 4 here: the row's largest entry has exponent row_exp
  } else if (shift <= -26) {
    mag = 0;  // below half of the last kept unit
  } else {
    const int s = -shift;
    const uint32_t q0 = mant >> s, rem = mant & ((uint32_t(1) << s) - 1u), half = uint32_t(1) << (s - 1);
    mag = q0 + ((rem > half || (rem == half && (q0 & 1u))) ? 1u : 0u);
  }
  return (bits >> 31) ? -int32_t(mag) : int32_t(mag);
}

// A signed 128-bit integer as two 64-bit words (every backend has 64-bit integers; not every one
// has a 128-bit type).
struct ExactSum {
  uint64_t lo = 0;
  int64_t hi = 0;
};

// s += v * 2^shift, 0 <= shift < 64, exactly (two's complement with carry).
BL_HD void exact_sum_add(ExactSum& s, int64_t v, int shift = 0) {
  const uint64_t add_lo = uint64_t(v) << shift;
  const int64_t add_hi = shift == 0 ? (v < 0 ? -1 : 0) : (v >> (64 - shift));
  const uint64_t lo = s.lo + add_lo;
  s.hi = int64_t(uint64_t(s.hi) + uint64_t(add_hi) + (lo < s.lo ? 1u : 0u));
  s.lo = lo;
}

// round_half_even(s * 2^exp2) as a binary32 (the definition's step 4).
BL_HD float exact_sum_round(ExactSum s, int exp2) {
  const bool neg = s.hi < 0;
  uint64_t hi = uint64_t(s.hi), lo = s.lo;
  if (neg) {  // magnitude: two's complement negation of 128 bits
    lo = ~lo + 1u;
    hi = ~hi + (lo == 0 ? 1u : 0u);
  }
  if (hi == 0 && lo == 0) return 0.0f;
  const uint64_t top_word = hi != 0 ? hi : lo;  // bit length of the magnitude:
#if BL_DEVICE_PASS
  int nbits = 64 - __clzll(static_cast<long long>(top_word));
#else
  int nbits = 64 - __builtin_clzll(top_word);
#endif
  if (hi != 0) nbits += 64;
  // Keep the bits from 2^(nbits-24) down, but none below 2^-149 (subnormals).
  int shift = nbits - 24;
  if (-149 - exp2 > shift) shift = -149 - exp2;
  uint64_t q;
  if (shift <= 0) {
    q = lo << (-shift);  // nbits <= 24: the magnitude is in lo
  } else if (shift > 128) {
    q = 0;  // far below half of the smallest subnormal
  } else {
    // q = mag >> shift; the rounding looks at the bits shifted out.
    bool above_half, at_half;
    if (shift >= 64) {
      const int s2 = shift - 64;
      q = s2 == 64 ? 0 : (hi >> s2);
      const uint64_t rem_hi = s2 == 0 ? 0 : (s2 == 64 ? hi : (hi & ((uint64_t(1) << s2) - 1u)));
      const uint64_t half_hi = s2 == 0 ? 0 : (uint64_t(1) << (s2 - 1));
      if (s2 == 0) {
        above_half = lo > (uint64_t(1) << 63);
        at_half = lo == (uint64_t(1) << 63);
      } else {
        above_half = rem_hi > half_hi || (rem_hi == half_hi && lo != 0);
        at_half = rem_hi == half_hi && lo == 0;
      }
    } else {
      q = (lo >> shift) | (hi << (64 - shift));
      const uint64_t rem = lo & ((uint64_t(1) << shift) - 1u), half = uint64_t(1) << (shift - 1);
      above_half = rem > half;
      at_half = rem == half;
    }
    if (above_half || (at_half && (q & 1u))) ++q;
  }
  int p = shift + exp2;  // value = q * 2^p, q < 2^25
  if (q >= (uint64_t(1) << 24)) {
    q >>= 1;  // the rounding carried into a new bit: q was 2^24, exact
    ++p;
  }
  uint32_t out;
  if (q == 0) {
    out = 0;
  } else if (q >= (uint64_t(1) << 23)) {
    const int biased = p + 23 + 127;
    out = biased >= 255 ? 0x7F800000u : (uint32_t(biased) << 23) | uint32_t(q - (uint64_t(1) << 23));
  } else {
    out = uint32_t(q);  // subnormal: p == -149
  }
  return float_of(out | (neg ? 0x80000000u : 0u));
}

// The special-value rule (step 5) for the products a * b with a non-finite factor, folded one at a
// time: state 0 none yet, 1 +inf, 2 -inf, 3 NaN.
BL_HD int exact_gemm_special(int state, float a, float b) {
  if (is_finite(a) && is_finite(b)) return state;
  if (state == 3 || is_nan(a) || is_nan(b)) return 3;
  if ((bits_of(a) & 0x7FFFFFFFu) == 0 || (bits_of(b) & 0x7FFFFFFFu) == 0) return 3;  // inf * 0
  const int sign = (sign_bit(a) != sign_bit(b)) ? 2 : 1;
  return state == 0 || state == sign ? sign : 3;
}

BL_HD float exact_gemm_special_value(int state) {
  return state == 1 ? float_of(0x7F800000u) : state == 2 ? float_of(0xFF800000u) : canonical_nan();
}

// One output of the exact profile, spelled out: the specification every backend reproduces.
BL_HD float exact_matmul_reference_element(const float* a, int64_t lda, bool trans_a, const float* b,
                                           int64_t ldb, bool trans_b, int64_t k_total, int64_t m,
                                           int64_t n) {
  int ea = 0, eb = 0, special = 0;
  bool ea_set = false, eb_set = false;
  for (int64_t k = 0; k < k_total; ++k) {
    const float x = matmul_load_a(a, lda, trans_a, m, k), y = matmul_load_b(b, ldb, trans_b, k, n);
    if (is_finite(x) && x != 0.0f) {
      const int e = exact_gemm_exponent(x);
      if (!ea_set || e > ea) ea = e;
      ea_set = true;
    }
    if (is_finite(y) && y != 0.0f) {
      const int e = exact_gemm_exponent(y);
      if (!eb_set || e > eb) eb = e;
      eb_set = true;
    }
    special = exact_gemm_special(special, x, y);
  }
  if (special != 0) return exact_gemm_special_value(special);
  // A non-finite entry elsewhere in the row (paired with a finite one here) gives special != 0, so
  // from here on every entry is finite.
  ExactSum t;
  for (int64_t k = 0; k < k_total; ++k)
    exact_sum_add(t, int64_t(exact_gemm_integer(matmul_load_a(a, lda, trans_a, m, k), ea)) *
                         int64_t(exact_gemm_integer(matmul_load_b(b, ldb, trans_b, k, n), eb)));
  return exact_sum_round(t, ea + eb - 2 * kExactGemmBits);
}

// The scalar reference for the whole (batched) product. Slow and obviously right.
inline void exact_matmul_reference(const MatmulArgs& args, const float* a, const float* b, float* c) {
  gemm_reference_each(args, a, b, c, exact_matmul_reference_element);
}

// Fast CPU version on pool (the process pool when null): the rows and columns turned into integers
// once, then blocked integer dot products. Bitwise equal to exact_matmul_reference.
void exact_matmul_cpu(const MatmulArgs& args, const float* a, const float* b, float* c,
                      ThreadPool* pool = nullptr);

// CUDA version (device pointers, current device). config.variant picks a tile (any value gives the
// same bits); asynchronous on stream (null = default); errors are thrown as bl::Error.
void exact_matmul_cuda(const MatmulArgs& args, const float* a, const float* b, float* c,
                       const LaunchConfig& config, void* stream = nullptr);

}  // namespace bl
