// exp_log_core.h: float-float building blocks of the exp/log family (src/contract/math/exp_log.h).
//
// Every function of the family computes its result as a float-float value v = hi + lo (times 2^m),
// with a relative error far below 2^-40, rounds it once to binary32 (round_scaled), and reports
// whether the rounding could depend on that error ("hard"). Hard inputs are rare; the public
// functions settle them with an exception table that was found by an exhaustive search against MPFR.
// Only binary32 operations of arith.h/ff.h, integer bit operations and selects are used.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/exp_log_tables.h"

// The fast paths are large; vectorizing compilers need them inlined into the caller's loop, so
// on host GCC/Clang they are forced inline (device compilers already force BL_HD inline).
#if !BL_GPU_COMPILER && (defined(__GNUC__) || defined(__clang__))
#define BL_EXP_LOG_INLINE inline __attribute__((always_inline))
#else
#define BL_EXP_LOG_INLINE BL_HD
#endif

namespace bl {
namespace exp_log_detail {

// A float-float value scaled by a power of two: (v.hi + v.lo) * 2^m.
struct ffm {
  ff v;
  int m;
};

// 2^m for m in [-126, 127] (no check: callers clamp).
BL_EXP_LOG_INLINE float pow2i(int m) { return float_of(static_cast<uint32_t>(m + 127) << 23); }

BL_EXP_LOG_INLINE int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// c ? a : b on the bit patterns. Both operands are always evaluated and no floating-point operation
// sits in a branch, so compilers can if-convert and vectorize even with -ftrapping-math.
BL_EXP_LOG_INLINE float select_f(bool c, float a, float b) {
  uint32_t mask = 0u - static_cast<uint32_t>(c);
  return float_of((bits_of(a) & mask) | (bits_of(b) & ~mask));
}

BL_EXP_LOG_INLINE ff select_ff(bool c, ff a, ff b) { return ff{select_f(c, a.hi, b.hi), select_f(c, a.lo, b.lo)}; }

BL_EXP_LOG_INLINE float clamp_float(float x, float lo, float hi) {
  bool below = x < lo;
  bool above = x > hi;
  return select_f(below, lo, select_f(above, hi, x));
}

BL_EXP_LOG_INLINE ff ff_scale(ff a, float power_of_two) {
  return ff{mul(a.hi, power_of_two), mul(a.lo, power_of_two)};
}

BL_EXP_LOG_INLINE ff ff_negate(ff a) { return ff{neg(a.hi), neg(a.lo)}; }

// a / b in float-float: one binary32 quotient, then the exact remainder (fma) gives the low part.
BL_EXP_LOG_INLINE ff ff_div(ff a, ff b) {
  float qh = div(a.hi, b.hi);
  float rem = fma(neg(qh), b.hi, a.hi);  // exact
  rem = add(rem, a.lo);
  rem = fma(neg(qh), b.lo, rem);
  return fast_two_sum(qh, div(rem, b.hi));
}

// ---- constants (binary32 bit patterns of MPFR-rounded values) ----
BL_EXP_LOG_INLINE float k_inv_ln2_x64() { return float_of(0x42B8AA3Bu); }  // 64/ln2
BL_EXP_LOG_INLINE float k_ln2_div64_1() { return float_of(0x3C317218u); }  // ln2/64 = c1 + c2 + c3
BL_EXP_LOG_INLINE float k_ln2_div64_2() { return float_of(0xAE02E308u); }
BL_EXP_LOG_INLINE float k_ln2_div64_3() { return float_of(0xA1CA86C4u); }
BL_EXP_LOG_INLINE ff k_ln2() { return ff{float_of(0x3F317218u), float_of(0xB102E308u)}; }
BL_EXP_LOG_INLINE ff k_inv_ln2() { return ff{float_of(0x3FB8AA3Bu), float_of(0x32A57060u)}; }
BL_EXP_LOG_INLINE ff k_one_sixth() { return ff{float_of(0x3E2AAAABu), float_of(0xB1AAAAABu)}; }
BL_EXP_LOG_INLINE ff k_one_third() { return ff{float_of(0x3EAAAAABu), float_of(0xB22AAAABu)}; }

// The shared end of expm1_poly and log1p_poly: r + r^2 * (half + q) as a normalized float-float,
// with q = c3 * r + tail (c3 the float-float coefficient of r^3, tail the float terms from r^4 on).
// The c3 * r term and the product with r^2 stay in float-float so that the error stays relative to r.
BL_EXP_LOG_INLINE ff series_finish(float r, ff c3, float half, float tail) {
  ff q = ff_add_f(ff_mul_f(c3, r), tail);
  ff q2 = fast_two_sum(half, q.hi);
  q2.lo = add(q2.lo, q.lo);
  ff rq = ff_mul(two_prod(r, r), q2);
  ff p = fast_two_sum(r, rq.hi);
  p.lo = add(p.lo, rq.lo);
  return fast_two_sum(p.hi, p.lo);
}

// e^r - 1 for a binary32 r with |r| <= 0.0055, relative error below 2^-49.
// Taylor series to r^6 (the r^7 term is below 2^-57 relative); the r/6 term and the product with
// r^2 are kept in float-float so that the error stays relative to r, not to 1.
BL_EXP_LOG_INLINE ff expm1_poly(float r) {
  float tail = mul(mul(r, r), fma(fma(r, 1.0f / 720.0f, 1.0f / 120.0f), r, 1.0f / 24.0f));
  return series_finish(r, k_one_sixth(), 0.5f, tail);  // q = r/6 + r^2/24 + r^3/120 + r^4/720
}

// Reduction of e^(xh + xl): e^x = 2^m * t * (1 + p) with t = 2^(j/64) from the table and
// p = e^r - 1, r = x - k*ln2/64, k = round(x*64/ln2) = 64*m + j. Requires |xh| <= 120, |xl| tiny.
struct exp_parts {
  ff t;
  ff p;
  int m;
};

BL_EXP_LOG_INLINE exp_parts exp_reduce(float xh, float xl) {
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float kf = sub(fma(xh, k_inv_ln2_x64(), shifter), shifter);
  int k = static_cast<int>(kf);
  // r = x - k*(c1 + c2 + c3): the first step is exact (the result fits in 24 bits), the
  // product with c2 is split exactly, the c3 term is far below the final error.
  float r1 = fma(neg(kf), k_ln2_div64_1(), xh);
  ff kc = two_prod(kf, k_ln2_div64_2());
  ff s = two_sum(r1, neg(kc.hi));
  float rl = add(sub(s.lo, kc.lo), fma(neg(kf), k_ln2_div64_3(), xl));
  ff r = two_sum(s.hi, rl);
  ff p = expm1_poly(r.hi);
  // e^(rh + rl) - 1 = p + rl * (1 + p); the rl^2 term is below 2^-60.
  p = ff_add_f(p, fma(r.lo, p.hi, r.lo));
  int j = static_cast<int>(static_cast<uint32_t>(k) & 63u);
  exp_parts e;
  e.t = ff{float_of(exp2_table_bits(2 * j)), float_of(exp2_table_bits(2 * j + 1))};
  e.p = p;
  e.m = (k - j) / 64;  // exact division
  return e;
}

// t * (1 + p) as a normalized float-float value in [0.69, 1.43].
BL_EXP_LOG_INLINE ff exp_mantissa(exp_parts e) {
  ff tp = ff_mul(e.t, e.p);
  ff s = fast_two_sum(e.t.hi, tp.hi);
  s.lo = add(s.lo, add(e.t.lo, tp.lo));
  return fast_two_sum(s.hi, s.lo);
}

// (e^x - 1) * 2^-s = 2^(m-s) * t - 2^-s + 2^(m-s) * t * p, for 0 <= s <= 100 and m - s <= 60:
// e^x - 1 without cancellation in the error (s > 0 only keeps large results in range).
BL_EXP_LOG_INLINE ff expm1_from_parts(exp_parts e, int s) {
  float scale = pow2i(clamp_int(e.m - s, -126, 60));
  ff ts = ff_scale(e.t, scale);
  ff a = ff_add_f(ts, neg(pow2i(-s)));
  ff b = ff_mul(ts, e.p);
  return ff_add(a, b);
}

// ln(1 + r) for a binary32 r with |r| <= 0.0055, relative error below 2^-48.
// Series to r^7 (the r^8 term is below 2^-56 relative); r/3 and the product with r^2 in float-float.
BL_EXP_LOG_INLINE ff log1p_poly(float r) {
  float tail = mul(mul(r, r), fma(fma(fma(r, 1.0f / 7.0f, -1.0f / 6.0f), r, 1.0f / 5.0f), r, -0.25f));
  return series_finish(r, k_one_third(), -0.5f, tail);  // q = r/3 - r^2/4 + r^3/5 - r^4/6 + r^5/7
}

// Reduction of a positive finite x: x = 2^k * z with z in [0.748, 1.496), z in sub-interval i,
// r = z*c_i - 1 exact, |r| <= 0.0053. Subnormal x is scaled by 2^24 first.
struct log_parts {
  float k;  // integer-valued
  int i;
  float r;
};

BL_EXP_LOG_INLINE log_parts log_reduce(float x) {
  bool subnormal = x < 1.17549435e-38f;
  float xs = select_f(subnormal, mul(x, 16777216.0f), x);
  const uint32_t off = 0x3F3F8000u;  // sub-interval 64 is centred on 1.0
  uint32_t tmp = bits_of(xs) - off;
  int i = static_cast<int>((tmp >> 16) & 127u);
  int k = static_cast<int>(tmp >> 23) - static_cast<int>((tmp & 0x80000000u) >> 22);  // signed tmp >> 23
  float z = float_of(bits_of(xs) - (tmp & 0xFF800000u));
  log_parts lp;
  int k_adjust = subnormal ? 24 : 0;
  lp.k = static_cast<float>(k - k_adjust);
  lp.i = i;
  lp.r = fma(z, float_of(log_table_bits(5 * i)), -1.0f);  // exact by the choice of c_i
  return lp;
}

// ln(x) for positive finite x as a normalized float-float value.
BL_EXP_LOG_INLINE ff log_ff(float x) {
  log_parts lp = log_reduce(x);
  ff p = log1p_poly(lp.r);
  ff l = ff{float_of(log_table_bits(5 * lp.i + 1)), float_of(log_table_bits(5 * lp.i + 2))};
  ff kl = two_prod(lp.k, k_ln2().hi);
  kl.lo = fma(lp.k, k_ln2().lo, kl.lo);
  return ff_add(ff_add(kl, l), p);
}

// log2(x) for positive finite x as a normalized float-float value (exact k for x = 2^k).
BL_EXP_LOG_INLINE ff log2_ff(float x) {
  log_parts lp = log_reduce(x);
  ff p = ff_mul(log1p_poly(lp.r), k_inv_ln2());
  ff l = ff{float_of(log_table_bits(5 * lp.i + 3)), float_of(log_table_bits(5 * lp.i + 4))};
  return ff_add_f(ff_add(l, p), lp.k);
}

// ln(1 + a) for a float-float a with a.hi > -1 (finite): 1 + a = s + t with s binary32 and t a
// float-float remainder, then ln(s) + ln(1 + t/s), where |t/s| <= 2^-24 needs three terms.
BL_EXP_LOG_INLINE ff log1p_ff(ff a) {
  ff s = two_sum(1.0f, a.hi);
  ff t = two_sum(s.lo, a.lo);
  float qh = div(t.hi, s.hi);
  float ql = div(add(fma(neg(qh), s.hi, t.hi), t.lo), s.hi);
  float corr = mul(mul(qh, qh), fma(qh, 1.0f / 3.0f, -0.5f));
  ff y = fast_two_sum(qh, add(ql, corr));
  return ff_add(log_ff(s.hi), y);
}

// s * sigmoid(w) = s / (1 + e^-w) for |w.hi| <= 120 (callers clamp w >= 0 to at most 40).
// Near: q = (w < 0 ? E : 1) / (1 + E) with E = e^-|w| >= 2^-61. Far (w < -41): s * E, the
// dropped factor 1/(1+E) is within 2^-60 of 1.
BL_EXP_LOG_INLINE ffm scaled_sigmoid(float s, ff w) {
  bool negative = w.hi < 0.0f;
  ff a = select_ff(negative, w, ff_negate(w));  // -|w|
  exp_parts e = exp_reduce(a.hi, a.lo);
  ff big_e = exp_mantissa(e);
  bool far = e.m < -60;
  ff es = ff_scale(big_e, pow2i(clamp_int(e.m, -126, 0)));  // only used when not far
  ff den = ff_add_f(es, 1.0f);
  ff num = select_ff(negative, es, ff{1.0f, 0.0f});
  ff near_v = ff_mul_f(ff_div(num, den), s);
  ffm out;
  out.v = select_ff(far, ff_mul_f(big_e, s), near_v);
  out.m = e.m & (0 - static_cast<int>(far));  // far ? e.m : 0
  return out;
}

// Round (v.hi + v.lo) * 2^m to binary32 once (round to nearest even, gradual underflow, overflow
// to infinity), for normalized v with |v.hi| in [2^-60, 2^60] and m in [-200, 126]. Sets *hard
// when a relative error of 2^-err_bits in v could change the result.
BL_EXP_LOG_INLINE float round_scaled(ff v, int m, int err_bits, bool* hard) {
  uint32_t hb = bits_of(v.hi) & 0x7FFFFFFFu;
  int exp_hi = static_cast<int>(hb >> 23) - 127;
  float err_scale = pow2i(clamp_int(25 - err_bits, -126, 0));
  // Normal result: scale hi exactly (two steps cover |m| up to 200); hi is already hi + lo
  // rounded, so the only doubt is |lo| close to half an ulp of hi.
  int m1 = clamp_int(m / 2, -100, 100);
  int m2 = clamp_int(m - m / 2, -100, 100);
  float y_normal = mul(mul(v.hi, pow2i(m1)), pow2i(m2));
  float half_ulp = mul(float_of(hb & 0x7F800000u), 5.96046448e-08f);  // 2^e * 2^-24
  bool toward_smaller = ((hb & 0x007FFFFFu) == 0) & (sign_bit(v.lo) != sign_bit(v.hi));
  float mid = select_f(toward_smaller, mul(half_ulp, 0.5f), half_ulp);  // below a power of two
  float dist_normal = abs(sub(abs(v.lo), mid));
  float thr = mul(half_ulp, err_scale);
  // Subnormal result (below 2^-125): the grid step is 2^-149, which is g = 2^(-149-m) in the
  // unscaled domain. H = hi rounded on that grid; d = (hi - H) + lo decides one step up or down.
  // Scaling by 2^m in two steps (m = first + second); only the second step rounds.
  int first = m < -100 ? clamp_int(m + 100, -126, 0) : clamp_int(m, -126, 0);
  int second = m < -100 ? -100 : 0;
  float h_sub = mul(mul(v.hi, pow2i(first)), pow2i(second));
  float h_back = mul(mul(h_sub, pow2i(-second)), pow2i(-first));  // exact
  float half_g = pow2i(clamp_int(-150 - m, -126, 127));
  float d = add(sub(v.hi, h_back), v.lo);
  float tiny = float_of(1u);  // 2^-149
  bool step_up = d > half_g;
  bool step_down = d < neg(half_g);
  float y_sub = select_f(step_up, add(h_sub, tiny), select_f(step_down, sub(h_sub, tiny), h_sub));
  float dist_sub = abs(sub(abs(d), half_g));
  bool subnormal = exp_hi + m < -125;
  float dist = select_f(subnormal, dist_sub, dist_normal);
  *hard = dist < thr;
  return select_f(subnormal, y_sub, y_normal);
}

// One step of the branch-free search below: advance base by step while the key is larger.
BL_EXP_LOG_INLINE int lower_bound_step(const uint32_t* keys, int n, uint32_t key, int base, int step) {
  int probe = base + step;
  int excess = probe - n;
  int over = excess & ~(excess >> 31);  // max(probe - n, 0) without a branch
  int index = probe - 1 - over;          // always inside the table
  bool advance = (over == 0) & (keys[index] < key);
  return advance ? probe : base;
}

// Search of a sorted exception table (at most 1023 entries plus a sentinel) of (input bits, result bits); returns
// y when absent. Ten fixed steps and no loop, so a loop over many x still vectorizes (the table
// reads become gathers).
BL_EXP_LOG_INLINE float exception_lookup(const uint32_t* keys, const uint32_t* values, int n, float x,
                                         float y) {
  if (n == 0) return y;
  uint32_t key = bits_of(x);
  int base = 0;
  base = lower_bound_step(keys, n, key, base, 512);
  base = lower_bound_step(keys, n, key, base, 256);
  base = lower_bound_step(keys, n, key, base, 128);
  base = lower_bound_step(keys, n, key, base, 64);
  base = lower_bound_step(keys, n, key, base, 32);
  base = lower_bound_step(keys, n, key, base, 16);
  base = lower_bound_step(keys, n, key, base, 8);
  base = lower_bound_step(keys, n, key, base, 4);
  base = lower_bound_step(keys, n, key, base, 2);
  base = lower_bound_step(keys, n, key, base, 1);
  // base = number of keys below key; entry n is a sentinel (0xFFFFFFFF, a NaN, never hard).
  bool found = keys[base] == key;
  return select_f(found, float_of(values[base]), y);
}

}  // namespace exp_log_detail
}  // namespace bl
