// trig_erf_kernels.h: internals of bl::erf and bl::gelu.
//
// For a < 0.5, erf(a) = a * (2/sqrt(pi)) * sum (-1)^n a^(2n) / (n! (2n+1)) (Taylor to n = 9,
// truncation below 2^-45). For 0.5 <= a < 11, erfc(a) = exp(-a^2) * G(a) with G from the table
// in trig_erfc_table.h and exp(-a^2) from the float-float exp2 kernel, the exponent kept apart so
// gelu's tail (down to the subnormals) keeps its relative accuracy. The argument a may be a
// float-float (gelu uses a = |x|/sqrt(2)); a^2 is passed exactly by the caller.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/pow_exp2_log2.h"
#include "contract/math/trig_erfc_table.h"
#include "contract/math/trig_reduce.h"

namespace bl {
namespace erf_detail {

// erf(a) for 0 <= a < 0.5 + tiny, a = a.hi + a.lo, z = a^2 (float-float).
BL_HD ff erf_small(ff a, ff z) {
  float zh = z.hi;
  float t = fma(zh, fma(zh, fma(zh, fma(zh, fma(zh, -1.4503852223150468e-07f, 1.4589169000933706e-06f), -1.3227513227513228e-05f),
                                1.0683760683760684e-04f), -7.5757575757575758e-04f), 4.6296296296296296e-03f);
  ff u = trig_detail::ff_horner_step(ff{-0.02380952425301075f, 4.4348694161477908e-10f}, z, ff{t, 0.0f});
  u = trig_detail::ff_horner_step(ff{0.10000000149011612f, -1.4901161415892261e-09f}, z, u);
  u = trig_detail::ff_horner_step(ff{-0.3333333432674408f, 9.9341077586245774e-09f}, z, u);
  ff p = trig_detail::ff_add_big(ff{1.0f, 0.0f}, ff_mul(z, u));  // sum of the series
  ff s = ff_mul(p, ff{1.128379225730896f, -5.8635382771399236e-08f});
  return ff_mul(s, a);
}

// A float-float times 2^k with 1 <= m.hi < 2 after the call (the exponent moved into k).
BL_HD void normalize_scaled(ff& m, int& k) {
  int e = static_cast<int>((bits_of(m.hi) >> 23) & 0xFFu) - 127;
  float s = trig_detail::pow2i(-e);
  m.hi = mul(m.hi, s);
  m.lo = mul(m.lo, s);
  k += e;
}

// erfc(a) = m * 2^k for 0.5 <= a.hi < 11, z = a^2 (float-float), with 1 <= m.hi < 2.
BL_HD pow_detail::scaled erfc_scaled(ff a, ff z) {
  uint32_t ab = bits_of(a.hi);
  int idx = static_cast<int>((ab - 0x3F000000u) >> 20);
  const int base = idx * kErfcStride;
  float center = float_of(0x3F000000u + (static_cast<uint32_t>(idx) << 20) + 0x00080000u);
  float d = sub(a.hi, center);  // exact: same binade
  float t = erfc_coef(base + 12);
  for (int j = 11; j >= 6; --j) t = fma(t, d, erfc_coef(base + j));
  ff g = trig_detail::ff_add_big(ff{erfc_coef(base + 4), erfc_coef(base + 5)}, two_prod(d, t));
  g = trig_detail::ff_add_big(ff{erfc_coef(base + 2), erfc_coef(base + 3)}, ff_mul_f(g, d));
  g = trig_detail::ff_add_big(ff{erfc_coef(base + 0), erfc_coef(base + 1)}, ff_mul_f(g, d));
  // G(a.hi + a.lo) = G + a.lo * G'(a.hi), with G' = 2aG - 2/sqrt(pi) exactly.
  float slope = fma(add(a.hi, a.hi), g.hi, -1.1283791671f);
  g = fast_two_sum(g.hi, fma(a.lo, slope, g.lo));
  // exp(-a^2) = 2^(-a^2 * log2(e)).
  ff t2 = ff_mul(ff{neg(z.hi), neg(z.lo)}, ff{1.4426950216293335f, 1.9259630335000111e-08f});
  pow_detail::scaled e = pow_detail::exp2_ff(t2);
  e.m = ff_mul(e.m, g);
  normalize_scaled(e.m, e.k);
  return e;
}

}  // namespace erf_detail
}  // namespace bl
