// pow_rsqrt.h: internals of bl::rsqrt (a correctly rounded 1/sqrt(x)).
//
// div(1, sqrt(x)) rounds twice and is off by up to 1.49 ulp (26% of positive inputs are not
// correctly rounded), so rsqrt is defined as 1/sqrt(x) rounded once: a Newton correction in
// float-float picks the result, and candidates within 2^-12 ulp of a rounding midpoint are
// settled by an exact integer comparison.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/pow_exp2_log2.h"
#include "contract/math/trig_reduce.h"

namespace bl {
namespace rsqrt_detail {

// True when the midpoint (2*y_int + side) * 2^-25 is at least 1/sqrt(xs), for xs = mx * 2^(e-23)
// in [1, 4) (e = 0 or 1) and y_int = y * 2^24. Exact: compares (2*y_int+side)^2 * mx with 2^(73-e).
BL_POW_INLINE bool midpoint_at_or_above(uint32_t y_int, int side, uint32_t mx, int e) {
  // Written as 32 x 32 -> 64-bit products (m < 2^26, m^2 < 2^52) so that vector units can do them.
  uint32_t m = 2u * y_int + static_cast<uint32_t>(side);
  uint64_t m2 = static_cast<uint64_t>(m) * m;
  uint64_t lo = static_cast<uint64_t>(static_cast<uint32_t>(m2)) * mx;
  uint64_t hi = static_cast<uint64_t>(static_cast<uint32_t>(m2 >> 32)) * mx + (lo >> 32);
  // m^2 * xs >= 1  <=>  value >= 2^(73-e)  <=>  hi >= 2^(41-e)
  // (Signed compare with a selected constant: both have vector forms, unlike unsigned 64-bit ones.)
  int64_t threshold = e != 0 ? (static_cast<int64_t>(1) << 40) : (static_cast<int64_t>(1) << 41);
  return static_cast<int64_t>(hi) >= threshold;
}

// 1/sqrt(xs) correctly rounded for xs in [1, 4). Straight-line code: the exact midpoint test is
// always computed and only used when the Newton estimate is within 2^-12 ulp of a midpoint.
BL_POW_INLINE float rsqrt_core(float xs) {
  float y = div(1.0f, sqrt(xs));  // within 1.5 ulp
  // e = 1 - y^2 * xs to about 2^-46; 1/sqrt(xs) = y * (1 + e/2 + 3e^2/8 + ...).
  ff y2 = two_prod(y, y);
  float e = fma(neg(y2.hi), xs, 1.0f);
  e = fma(neg(y2.lo), xs, e);
  float delta = mul(y, mul(e, fma(0.375f, e, 0.5f)));
  float y1 = add(y, delta);
  // Offset of the exact value from y1 in units of ulp(y1) (y1 in [0.5, 1]: ulp 2^-24).
  float off = mul(add(sub(y, y1), delta), 16777216.0f);
  bool near_midpoint = (bits_of(off) & 0x7FFFFFFFu) > 0x3EFFE5C9u;  // |off| > 0.4998
  uint32_t mx = (bits_of(xs) & 0x007FFFFFu) | 0x00800000u;
  int ex = static_cast<int>(bits_of(xs) >> 23) - 127;
  uint32_t yb = bits_of(y1);
  uint32_t yi = ((yb & 0x007FFFFFu) | 0x00800000u) << ((yb >> 23) - 126u);  // y1 * 2^24
  bool down = midpoint_at_or_above(yi, -1, mx, ex);                        // below the lower midpoint
  bool up = (yb < 0x3F800000u) & !midpoint_at_or_above(yi, 1, mx, ex);    // above the upper one
  yb = yb - static_cast<uint32_t>(near_midpoint & down) + static_cast<uint32_t>(near_midpoint & !down & up);
  return float_of(yb);
}

// 1/sqrt(x) correctly rounded for finite x > 0: scales x by an even power of two into [1, 4).
BL_POW_INLINE float rsqrt_positive(float x) {
  bool subnormal = bits_of(x) < 0x00800000u;  // scale by 2^24 (exact)
  x = pow_detail::select(subnormal, mul(x, 16777216.0f), x);
  int ex = static_cast<int>(bits_of(x) >> 23) - 127 - (subnormal ? 24 : 0);
  int half = (ex + 256) / 2 - 128;  // floor(ex / 2)
  int e_small = ex - 2 * half;      // 0 or 1
  float xs = float_of((bits_of(x) & 0x007FFFFFu) | (static_cast<uint32_t>(e_small + 127) << 23));
  return mul(rsqrt_core(xs), trig_detail::pow2i(-half));
}

}  // namespace rsqrt_detail
}  // namespace bl
