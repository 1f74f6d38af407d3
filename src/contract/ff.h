// ff.h: float-float (double-word) arithmetic in binary32.
//
// A value is the unevaluated sum hi + lo with |lo| <= ulp(hi)/2. These error-free transformations
// give about 48 bits of precision using binary32 operations only, which is what the contract's
// math functions use where a binary32 intermediate is not precise enough (no float64 on devices).
#pragma once

#include "contract/arith.h"

namespace bl {

struct ff {
  float hi;
  float lo;
};

// s + e == a + b exactly (any a, b).
BL_HD ff two_sum(float a, float b) {
  float s = add(a, b);
  float bb = sub(s, a);
  float e = add(sub(a, sub(s, bb)), sub(b, bb));
  return ff{s, e};
}

// s + e == a + b exactly, given |a| >= |b| or a == 0.
BL_HD ff fast_two_sum(float a, float b) {
  float s = add(a, b);
  float e = sub(b, sub(s, a));
  return ff{s, e};
}

// p + e == a * b exactly (barring underflow).
BL_HD ff two_prod(float a, float b) {
  float p = mul(a, b);
  float e = fma(a, b, neg(p));
  return ff{p, e};
}

BL_HD ff ff_add(ff a, ff b) {
  ff s = two_sum(a.hi, b.hi);
  ff t = two_sum(a.lo, b.lo);
  s.lo = add(s.lo, t.hi);
  s = fast_two_sum(s.hi, s.lo);
  s.lo = add(s.lo, t.lo);
  return fast_two_sum(s.hi, s.lo);
}

BL_HD ff ff_add_f(ff a, float b) {
  ff s = two_sum(a.hi, b);
  s.lo = add(s.lo, a.lo);
  return fast_two_sum(s.hi, s.lo);
}

BL_HD ff ff_mul(ff a, ff b) {
  ff p = two_prod(a.hi, b.hi);
  p.lo = fma(a.hi, b.lo, p.lo);
  p.lo = fma(a.lo, b.hi, p.lo);
  return fast_two_sum(p.hi, p.lo);
}

BL_HD ff ff_mul_f(ff a, float b) {
  ff p = two_prod(a.hi, b);
  p.lo = fma(a.lo, b, p.lo);
  return fast_two_sum(p.hi, p.lo);
}

}  // namespace bl
