// pow_rsqrt.h: internals of bl::rsqrt (a correctly rounded 1/sqrt(x)).
//
// div(1, sqrt(x)) rounds twice and is off by up to 1.49 ulp (26% of positive inputs are not
// correctly rounded), so rsqrt is defined as 1/sqrt(x) rounded once: a Newton correction in
// float-float picks the result, and the rare candidates within 2^-12 ulp of a rounding midpoint
// are settled by an exact integer comparison.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/trig_reduce.h"

namespace bl {
namespace rsqrt_detail {

// True when the midpoint (2*y_int + side) * 2^-25 is at least 1/sqrt(xs), for xs = mx * 2^(e-23)
// in [1, 4) (e = 0 or 1) and y_int = y * 2^24. Exact: compares (2*y_int+side)^2 * mx with 2^(73-e).
BL_HD bool midpoint_at_or_above(uint32_t y_int, int side, uint32_t mx, int e) {
  uint64_t m = 2u * static_cast<uint64_t>(y_int) + static_cast<uint64_t>(static_cast<int64_t>(side));
  uint64_t m2 = m * m;  // < 2^51
  uint64_t lo = (m2 & 0xFFFFFFFFu) * mx;
  uint64_t hi = (m2 >> 32) * mx + (lo >> 32);  // value = hi * 2^32 + (lo mod 2^32)
  // m^2 * xs >= 1  <=>  value >= 2^(73-e)  <=>  hi >= 2^(41-e)
  return hi >= (static_cast<uint64_t>(1) << (41 - e));
}

// 1/sqrt(xs) correctly rounded for xs in [1, 4).
BL_HD float rsqrt_core(float xs) {
  float y = div(1.0f, sqrt(xs));  // within 1.5 ulp
  // e = 1 - y^2 * xs to about 2^-46; 1/sqrt(xs) = y * (1 + e/2 + 3e^2/8 + ...).
  ff y2 = two_prod(y, y);
  float e = fma(neg(y2.hi), xs, 1.0f);
  e = fma(neg(y2.lo), xs, e);
  float delta = mul(y, mul(e, fma(0.375f, e, 0.5f)));
  float y1 = add(y, delta);
  // Offset of the exact value from y1 in units of ulp(y1) (y1 in [0.5, 1]: ulp 2^-24).
  float off = mul(add(sub(y, y1), delta), 16777216.0f);
  if (abs(off) > 0.4998f) {  // rare: decide against the exact midpoints
    uint32_t mx = (bits_of(xs) & 0x007FFFFFu) | 0x00800000u;
    int ex = static_cast<int>(bits_of(xs) >> 23) - 127;
    uint32_t yi = static_cast<uint32_t>(mul(y1, 16777216.0f));
    if (midpoint_at_or_above(yi, -1, mx, ex)) {
      y1 = float_of(bits_of(y1) - 1u);  // exact value below the lower midpoint
    } else if (y1 < 1.0f && !midpoint_at_or_above(yi, 1, mx, ex)) {
      y1 = float_of(bits_of(y1) + 1u);  // exact value above the upper midpoint
    }
  }
  return y1;
}

// 1/sqrt(x) correctly rounded for finite x > 0: scales x by an even power of two into [1, 4).
BL_HD float rsqrt_positive(float x) {
  int shift = 0;
  if (bits_of(x) < 0x00800000u) {  // subnormal: scale by 2^24 (exact)
    x = mul(x, 16777216.0f);
    shift = -24;
  }
  int ex = static_cast<int>(bits_of(x) >> 23) - 127 + shift;
  int half = ex >= 0 ? ex / 2 : -((1 - ex) / 2);  // floor(ex / 2)
  int e_small = ex - 2 * half;                    // 0 or 1
  float xs = float_of((bits_of(x) & 0x007FFFFFu) | (static_cast<uint32_t>(e_small + 127) << 23));
  return mul(rsqrt_core(xs), trig_detail::pow2i(-half));
}

}  // namespace rsqrt_detail
}  // namespace bl
