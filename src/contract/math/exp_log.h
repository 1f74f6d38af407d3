// exp_log.h: the contract's exponential and logarithm family on binary32.
//
// Each function evaluates its result in float-float (exp_log_core.h), rounds it once to binary32 and
// settles the rare inputs whose rounding is in doubt from a table of exceptions found exhaustively
// with MPFR (exp_log_exceptions.h). Result: correctly rounded (round to nearest even) over all 2^32
// inputs for every function here; figures in docs/contract.md. NaN in -> canonical NaN out,
// subnormals are kept, special values follow IEEE 754 / C99 Annex F.
//
// Vectorized callers may use the split form: y = bl::exp_log_detail::exp_fast(x, &hard) is
// branch-free (selects only); where hard is true, y = bl::exp_log_detail::exp_exception(x, y).
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/exp_log_core.h"
#include "contract/math/exp_log_exceptions.h"
#include "contract/math/exp_f64.h"

// 1: CUDA/HIP device code evaluates exp in binary64 with a rounding test and the float-float path
// as fallback (exp_f64.h); same bits, since both are correctly rounded. 0: float-float everywhere.
#ifndef BL_EXP_F64_DEVICE
#define BL_EXP_F64_DEVICE 1
#endif

namespace bl {
namespace exp_log_detail {

// Relative error bounds (as -log2) of the float-float results, measured exhaustively with margin;
// they only decide which inputs go to the exception table.
constexpr int kErrBitsExp = 44;
constexpr int kErrBitsExpm1 = 44;
constexpr int kErrBitsLog = 44;
constexpr int kErrBitsLog1p = 44;
constexpr int kErrBitsLog2 = 44;
constexpr int kErrBitsTanh = 44;
constexpr int kErrBitsSigmoid = 44;
constexpr int kErrBitsSilu = 44;
constexpr int kErrBitsSoftplus = 44;
constexpr int kErrBitsGelu = 44;

BL_EXP_LOG_INLINE float exp_fast(float x, bool* hard) {
  // Outside [-104.5, 89] the result is 0 or +inf; the clamped input still rounds to it.
  float xc = select_f(is_nan(x), 0.0f, clamp_float(x, -104.5f, 89.0f));
  exp_parts e = exp_reduce(xc, 0.0f);
  float y = round_scaled(exp_mantissa(e), e.m, kErrBitsExp, hard);
  return select_f(is_nan(x), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float expm1_fast(float x, bool* hard) {
  float xc = select_f(is_nan(x), 0.0f, clamp_float(x, -30.0f, 89.0f));
  exp_parts e = exp_reduce(xc, 0.0f);
  // Large results are computed as (e^x - 1) * 2^-s with s = max(m - 60, 0), then scaled back.
  int s = e.m > 60 ? e.m - 60 : 0;
  float y = round_scaled(expm1_from_parts(e, s), s, kErrBitsExpm1, hard);
  // |x| < 2^-25: e^x - 1 = x + x^2/2 rounds to x (this also keeps -0).
  bool tiny = abs(x) < 2.98023224e-08f;
  *hard = *hard & !tiny & !is_nan(x);
  y = select_f(tiny, x, y);
  return select_f(is_nan(x), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float log_fast(float x, bool* hard) {
  bool regular = (x > 0.0f) & (x < float_of(0x7F800000u));
  ff v = log_ff(select_f(regular, x, 1.0f));
  float y = round_scaled(v, 0, kErrBitsLog, hard);
  *hard = *hard & regular;
  y = select_f(x == 0.0f, float_of(0xFF800000u), y);  // log(+-0) = -inf
  y = select_f(x == float_of(0x7F800000u), x, y);      // log(+inf) = +inf
  return select_f(is_nan(x) | (x < 0.0f), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float log2_fast(float x, bool* hard) {
  bool regular = (x > 0.0f) & (x < float_of(0x7F800000u));
  ff v = log2_ff(select_f(regular, x, 1.0f));
  float y = round_scaled(v, 0, kErrBitsLog2, hard);
  *hard = *hard & regular;
  y = select_f(x == 0.0f, float_of(0xFF800000u), y);
  y = select_f(x == float_of(0x7F800000u), x, y);
  return select_f(is_nan(x) | (x < 0.0f), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float log1p_fast(float x, bool* hard) {
  bool regular = (x > -1.0f) & (x < float_of(0x7F800000u));
  ff v = log1p_ff(ff{select_f(regular, x, 0.0f), 0.0f});
  float y = round_scaled(v, 0, kErrBitsLog1p, hard);
  // |x| < 2^-25: log(1 + x) = x - x^2/2 rounds to x (this also keeps -0).
  bool tiny = abs(x) < 2.98023224e-08f;
  *hard = *hard & regular & !tiny;
  y = select_f(tiny, x, y);
  y = select_f(x == -1.0f, float_of(0xFF800000u), y);
  y = select_f(x == float_of(0x7F800000u), x, y);
  return select_f(is_nan(x) | (x < -1.0f), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float tanh_fast(float x, bool* hard) {
  // tanh|x| = expm1(2|x|) / (expm1(2|x|) + 2); above 10 it rounds to 1, below 2^-13 to |x|.
  float a = abs(x);
  float ac = select_f(is_nan(x), 1.0f, clamp_float(a, 0.0f, 10.0f));
  exp_parts e = exp_reduce(mul(2.0f, ac), 0.0f);
  ff em1 = expm1_from_parts(e, 0);
  ff q = ff_div(em1, ff_add_f(em1, 2.0f));
  float y = round_scaled(q, 0, kErrBitsTanh, hard);
  bool tiny = a < 1.22070312e-04f;
  *hard = *hard & !tiny & !is_nan(x);
  y = select_f(tiny, a, y);
  y = copysign(y, x);
  return select_f(is_nan(x), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float sigmoid_fast(float x, bool* hard) {
  // Above 40 the result rounds to 1, below -120 to +0.
  float xc = select_f(is_nan(x), 0.0f, clamp_float(x, -120.0f, 40.0f));
  ffm r = scaled_sigmoid(1.0f, ff{xc, 0.0f});
  float y = round_scaled(r.v, r.m, kErrBitsSigmoid, hard);
  *hard = *hard & !is_nan(x);
  return select_f(is_nan(x), canonical_nan(), y);
}

// x * sigmoid(x) for |x| < 2^-20, and the tiny part of gelu: x/2 + c*x^2/4 (the next term is
// below 2^-60 relative), computed on x * 2^64 so that subnormal results round once.
BL_EXP_LOG_INLINE ffm half_x_plus(float x, float c) {
  float xs = mul(x, 1.84467441e+19f);  // 2^64
  ffm r;
  r.v = fast_two_sum(mul(xs, 0.5f), mul(mul(mul(xs, xs), c), 1.35525272e-20f));  // * 2^-66
  r.m = -64;
  return r;
}

// Rounds half_x_plus(x, c) once. The c*x^2/4 term underflows for very small x, but it is positive,
// so where x/2 falls exactly between two subnormals (|x| < 2^-125 and odd) it rounds toward +inf.
BL_EXP_LOG_INLINE float round_half_x_plus(float x, float c, int err_bits, bool* hard) {
  ffm t = half_x_plus(x, c);
  float y = round_scaled(t.v, t.m, err_bits, hard);
  bool odd = (bits_of(x) | 0xFFFFFFFEu) == 0xFFFFFFFFu;  // lowest bit set (vectorizes better than & 1)
  bool odd_subnormal = (abs(x) < 2.35098870e-38f) & odd;  // |x| < 2^-125
  *hard = *hard & !odd_subnormal;
  return select_f(odd_subnormal, mul(add(x, float_of(1u)), 0.5f), y);
}

BL_EXP_LOG_INLINE float silu_fast(float x, bool* hard) {
  // Above 40 the result rounds to x, below -120 to -0.
  float xc = select_f(is_nan(x), 0.0f, clamp_float(x, -120.0f, 40.0f));
  ffm r = scaled_sigmoid(xc, ff{xc, 0.0f});
  bool tiny = abs(x) < 9.53674316e-07f;  // 2^-20
  bool hard_tiny;
  float y_tiny = round_half_x_plus(select_f(tiny, x, 0.0f), 1.0f, kErrBitsSilu, &hard_tiny);
  float y = round_scaled(r.v, r.m, kErrBitsSilu, hard);
  y = select_f(tiny, y_tiny, y);
  *hard = (tiny & hard_tiny) | (!tiny & *hard);
  *hard = *hard & !is_nan(x) & (x <= 40.0f) & (x != 0.0f);
  y = select_f(x > 40.0f, x, y);
  y = select_f(x == 0.0f, x, y);
  y = copysign(y, x);  // x * sigmoid(x) has the sign of x, also when it rounds to zero
  return select_f(is_nan(x), canonical_nan(), y);
}

BL_EXP_LOG_INLINE float softplus_fast(float x, bool* hard) {
  // log(1 + e^x) = max(x, 0) + log1p(e^-|x|). Above 16 the result rounds to x.
  float ac = select_f(is_nan(x), 0.0f, clamp_float(abs(x), 0.0f, 120.0f));
  exp_parts e = exp_reduce(neg(ac), 0.0f);
  ff big_e = exp_mantissa(e);
  bool near = e.m >= -30;
  ff l = log1p_ff(ff_scale(big_e, pow2i(clamp_int(e.m, -126, 0))));  // only used when near
  ff v_near = select_ff(x > 0.0f, ff_add_f(l, x), l);
  // Far (x < -20): log1p(E) = E - E^2/2 with E = e^x < 2^-29; the E^3 term is below 2^-58 relative.
  int mc = clamp_int(e.m - 1, -126, 0);
  float corr_scale = select_f(e.m - 1 < -126, 0.0f, pow2i(mc));
  ff corr = ff_scale(ff_mul(big_e, big_e), corr_scale);
  ff v_far = ff_add(big_e, ff_negate(corr));
  int m_out = e.m & (0 - static_cast<int>(!near));  // near ? 0 : e.m
  float y = round_scaled(select_ff(near, v_near, v_far), m_out, kErrBitsSoftplus, hard);
  *hard = *hard & !is_nan(x) & (x < 16.0f);
  y = select_f(x >= 16.0f, x, y);
  return select_f(is_nan(x), canonical_nan(), y);
}

BL_HD ff k_gelu_c1() { return ff{float_of(0x3FCC422Au), float_of(0xB342BC9Bu)}; }  // 2*sqrt(2/pi)
BL_HD ff k_gelu_c2() { return ff{float_of(0x3D922279u), float_of(0x3124D8B5u)}; }  // c1*0.044715

BL_EXP_LOG_INLINE float gelu_tanh_fast(float x, bool* hard) {
  // 0.5*x*(1 + tanh(u)) = x * sigmoid(2u), 2u = x*(c1 + c2*x^2). Above 6 it rounds to x,
  // below -11 to -0.
  float xc = select_f(is_nan(x), 0.0f, clamp_float(x, -11.0f, 6.0f));
  ff inner = ff_add(k_gelu_c1(), ff_mul(k_gelu_c2(), two_prod(xc, xc)));
  ff w = ff_mul_f(inner, xc);
  ffm r = scaled_sigmoid(xc, w);
  bool tiny = abs(x) < 9.53674316e-07f;
  bool hard_tiny;
  float y_tiny = round_half_x_plus(select_f(tiny, x, 0.0f), k_gelu_c1().hi, kErrBitsGelu, &hard_tiny);
  float y = round_scaled(r.v, r.m, kErrBitsGelu, hard);
  y = select_f(tiny, y_tiny, y);
  *hard = (tiny & hard_tiny) | (!tiny & *hard);
  *hard = *hard & !is_nan(x) & (x <= 6.0f) & (x >= -11.0f) & (x != 0.0f);
  y = select_f(x > 6.0f, x, y);
  y = select_f(x < -11.0f, float_of(0x80000000u), y);
  y = select_f(x == 0.0f, x, y);
  y = copysign(y, x);  // x * sigmoid(2u) has the sign of x, also when it rounds to zero
  return select_f(is_nan(x), canonical_nan(), y);
}

// The body of the function `name` of this family (argument x): the float-float result of
// name_fast, or name_exception's where name_fast reports its rounding in doubt.
#define BL_EXP_LOG_SETTLED(name)                   \
  bool hard;                                       \
  float y = exp_log_detail::name##_fast(x, &hard); \
  return exp_log_detail::select_f(hard, exp_log_detail::name##_exception(x, y), y)

// e^x by the float-float path: the definition, and the path of every device without binary64.
BL_EXP_LOG_INLINE float exp_float_float(float x) { BL_EXP_LOG_SETTLED(exp); }

}  // namespace exp_log_detail

// e^x, correctly rounded. exp(-inf) = +0, exp(+inf) = +inf, exp(+-0) = 1.
BL_EXP_LOG_INLINE float exp(float x) {
#if BL_DEVICE_PASS && BL_EXP_F64_DEVICE && BL_HAS_F64
  bool hard_f64;
  const float y64 = exp_f64_detail::exp_f64_fast(x, exp_f64_detail::kExpF64Degree,
                                                 exp_f64_detail::kExpF64MarginBits, &hard_f64);
  if (!hard_f64) return y64;  // rare otherwise (about 2^-19 of inputs): float-float decides
#endif
  return exp_log_detail::exp_float_float(x);
}

// Split form of bl::exp for callers that handle several elements at once: y = exp_split(x, &hard)
// has no branch; where hard is true (rare: about 2^-19 of inputs in CUDA/HIP device code), the
// result is exp_settle(x) instead. Together they give bl::exp's bits on every device.
BL_EXP_LOG_INLINE float exp_split(float x, bool* hard) {
#if BL_DEVICE_PASS && BL_EXP_F64_DEVICE && BL_HAS_F64
  return exp_f64_detail::exp_f64_fast(x, exp_f64_detail::kExpF64Degree,
                                      exp_f64_detail::kExpF64MarginBits, hard);
#else
  return exp_log_detail::exp_fast(x, hard);
#endif
}
BL_EXP_LOG_INLINE float exp_settle(float x) { return exp_log_detail::exp_float_float(x); }

// e^x - 1, correctly rounded, accurate near 0. expm1(+-0) = +-0, expm1(-inf) = -1.
BL_EXP_LOG_INLINE float expm1(float x) { BL_EXP_LOG_SETTLED(expm1); }

// Natural logarithm, correctly rounded. log(+-0) = -inf, log(x < 0) = NaN, log(1) = +0.
BL_EXP_LOG_INLINE float log(float x) { BL_EXP_LOG_SETTLED(log); }

// log(1 + x), correctly rounded. log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(+-0) = +-0.
BL_EXP_LOG_INLINE float log1p(float x) { BL_EXP_LOG_SETTLED(log1p); }

// Base-2 logarithm, correctly rounded; log2(2^k) = k exactly. log2(+-0) = -inf, log2(x < 0) = NaN.
BL_EXP_LOG_INLINE float log2(float x) { BL_EXP_LOG_SETTLED(log2); }

// Hyperbolic tangent, correctly rounded. tanh(+-0) = +-0, tanh(+-inf) = +-1.
BL_EXP_LOG_INLINE float tanh(float x) { BL_EXP_LOG_SETTLED(tanh); }

// Logistic function 1 / (1 + e^-x), correctly rounded. sigmoid(-inf) = +0, sigmoid(+inf) = 1.
BL_EXP_LOG_INLINE float sigmoid(float x) { BL_EXP_LOG_SETTLED(sigmoid); }

// x * sigmoid(x) with the exact product rounded once. silu(-inf) = -0, silu(+inf) = +inf.
BL_EXP_LOG_INLINE float silu(float x) { BL_EXP_LOG_SETTLED(silu); }

// log(1 + e^x) rounded once. softplus(-inf) = +0, softplus(+inf) = +inf.
BL_EXP_LOG_INLINE float softplus(float x) { BL_EXP_LOG_SETTLED(softplus); }

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) with exact constants, rounded once.
// gelu_tanh(-inf) = -0, gelu_tanh(+inf) = +inf.
BL_EXP_LOG_INLINE float gelu_tanh(float x) { BL_EXP_LOG_SETTLED(gelu_tanh); }

}  // namespace bl

#undef BL_EXP_LOG_SETTLED
