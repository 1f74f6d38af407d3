// The accuracy oracle: float64 fast path, MPFR at 256 bits near rounding boundaries.
#include "oracle.h"

#include <mpfr.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace mathcheck {

namespace {

using bl::MathFn;

constexpr mpfr_prec_t kPrec = 256;
// A float64 evaluation is trusted to decide the binary32 rounding when it lies farther than this
// relative distance from a rounding boundary. glibc's float64 functions are within a few float64
// ulps (2^-52); the composite formulas lose at most a factor of about 2^10 at the edges of the
// binary32 range (erfc and exp of arguments up to ~100), so 2^-36 keeps a wide safety factor.
constexpr double kMargin = 0x1p-36;

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

double sigmoid_d(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

// sqrt(2/pi) and the tanh-form constant as exact decimals (the function's definition).
const double kSqrt2OverPi = 0.79788456080286535587989211986876;
const double kGeluTanhCubic = 0.044715;

double double_value(MathFn fn, double x, double y) {
  switch (fn) {
    case MathFn::exp: return std::exp(x);
    case MathFn::expm1: return std::expm1(x);
    case MathFn::log: return std::log(x);
    case MathFn::log1p: return std::log1p(x);
    case MathFn::log2: return std::log2(x);
    case MathFn::tanh: return std::tanh(x);
    case MathFn::sigmoid: return sigmoid_d(x);
    case MathFn::silu:
      if (std::isinf(x)) return x > 0 ? x : -0.0;
      return x * sigmoid_d(x);
    case MathFn::softplus:
      if (x > 0) return x + std::log1p(std::exp(-x));
      return std::log1p(std::exp(x));
    case MathFn::gelu_tanh: {
      if (std::isinf(x)) return x > 0 ? x : -0.0;
      // 0.5 x (1 + tanh(u)) = x * sigmoid(2u): no cancellation for negative x.
      double u = kSqrt2OverPi * (x + kGeluTanhCubic * x * x * x);
      return x * sigmoid_d(2.0 * u);
    }
    case MathFn::sin: return std::sin(x);
    case MathFn::cos: return std::cos(x);
    case MathFn::erf: return std::erf(x);
    case MathFn::gelu:
      if (std::isinf(x)) return x > 0 ? x : -0.0;
      // 0.5 x (1 + erf(x/sqrt2)) = 0.5 x erfc(-x/sqrt2): no cancellation for negative x.
      return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
    case MathFn::pow: return std::pow(x, y);
    case MathFn::rsqrt: return 1.0 / std::sqrt(x);
  }
  return kNan;
}

// ---- MPFR ----------------------------------------------------------------------------------

struct Mp {
  mpfr_t v;
  Mp() { mpfr_init2(v, kPrec); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
};

// r = 1 / (1 + exp(-a))
void mp_sigmoid(mpfr_t r, const mpfr_t a) {
  Mp t;
  mpfr_neg(t.v, a, MPFR_RNDN);
  mpfr_exp(t.v, t.v, MPFR_RNDN);
  mpfr_add_ui(t.v, t.v, 1, MPFR_RNDN);
  mpfr_ui_div(r, 1, t.v, MPFR_RNDN);
}

// Exact composite or elementary value of fn at (x, y), at kPrec bits, into r.
void mpfr_value(MathFn fn, float xf, float yf, mpfr_t r) {
  Mp x, y, t, u;
  mpfr_set_flt(x.v, xf, MPFR_RNDN);
  mpfr_set_flt(y.v, yf, MPFR_RNDN);
  switch (fn) {
    case MathFn::exp: mpfr_exp(r, x.v, MPFR_RNDN); return;
    case MathFn::expm1: mpfr_expm1(r, x.v, MPFR_RNDN); return;
    case MathFn::log: mpfr_log(r, x.v, MPFR_RNDN); return;
    case MathFn::log1p: mpfr_log1p(r, x.v, MPFR_RNDN); return;
    case MathFn::log2: mpfr_log2(r, x.v, MPFR_RNDN); return;
    case MathFn::tanh: mpfr_tanh(r, x.v, MPFR_RNDN); return;
    case MathFn::sin: mpfr_sin(r, x.v, MPFR_RNDN); return;
    case MathFn::cos: mpfr_cos(r, x.v, MPFR_RNDN); return;
    case MathFn::erf: mpfr_erf(r, x.v, MPFR_RNDN); return;
    case MathFn::pow: mpfr_pow(r, x.v, y.v, MPFR_RNDN); return;
    case MathFn::rsqrt:
      // 1/sqrt(x) with 1/sqrt(-0) = -inf (the contract's definition), unlike mpfr_rec_sqrt(-0).
      if (mpfr_zero_p(x.v)) {
        mpfr_set_inf(r, mpfr_signbit(x.v) ? -1 : 1);
        return;
      }
      mpfr_rec_sqrt(r, x.v, MPFR_RNDN);
      return;
    case MathFn::sigmoid: mp_sigmoid(r, x.v); return;
    case MathFn::silu:
      if (mpfr_inf_p(x.v)) {
        if (mpfr_signbit(x.v)) mpfr_set_zero(r, -1); else mpfr_set_inf(r, 1);
        return;
      }
      mp_sigmoid(t.v, x.v);
      mpfr_mul(r, x.v, t.v, MPFR_RNDN);
      return;
    case MathFn::softplus:
      // log(1 + exp(x)) = x + log1p(exp(-x)) for x > 0.
      if (mpfr_sgn(x.v) > 0) {
        mpfr_neg(t.v, x.v, MPFR_RNDN);
        mpfr_exp(t.v, t.v, MPFR_RNDN);
        mpfr_log1p(t.v, t.v, MPFR_RNDN);
        mpfr_add(r, x.v, t.v, MPFR_RNDN);
      } else {
        mpfr_exp(t.v, x.v, MPFR_RNDN);
        mpfr_log1p(r, t.v, MPFR_RNDN);
      }
      return;
    case MathFn::gelu_tanh:
      if (mpfr_inf_p(x.v)) {
        if (mpfr_signbit(x.v)) mpfr_set_zero(r, -1); else mpfr_set_inf(r, 1);
        return;
      }
      // x * sigmoid(2 * sqrt(2/pi) * (x + 0.044715 x^3))
      mpfr_const_pi(t.v, MPFR_RNDN);
      mpfr_ui_div(t.v, 2, t.v, MPFR_RNDN);
      mpfr_sqrt(t.v, t.v, MPFR_RNDN);               // sqrt(2/pi)
      mpfr_pow_ui(u.v, x.v, 3, MPFR_RNDN);          // x^3
      {
        Mp c;
        mpfr_set_str(c.v, "0.044715", 10, MPFR_RNDN);
        mpfr_mul(u.v, u.v, c.v, MPFR_RNDN);
      }
      mpfr_add(u.v, u.v, x.v, MPFR_RNDN);
      mpfr_mul(u.v, u.v, t.v, MPFR_RNDN);
      mpfr_mul_2ui(u.v, u.v, 1, MPFR_RNDN);
      mp_sigmoid(t.v, u.v);
      mpfr_mul(r, x.v, t.v, MPFR_RNDN);
      return;
    case MathFn::gelu:
      if (mpfr_inf_p(x.v)) {
        if (mpfr_signbit(x.v)) mpfr_set_zero(r, -1); else mpfr_set_inf(r, 1);
        return;
      }
      // 0.5 x erfc(-x / sqrt 2)
      mpfr_sqrt_ui(t.v, 2, MPFR_RNDN);
      mpfr_div(t.v, x.v, t.v, MPFR_RNDN);
      mpfr_neg(t.v, t.v, MPFR_RNDN);
      mpfr_erfc(t.v, t.v, MPFR_RNDN);
      mpfr_mul(r, x.v, t.v, MPFR_RNDN);
      mpfr_div_2ui(r, r, 1, MPFR_RNDN);
      return;
  }
  mpfr_set_nan(r);
}

// Rounds v to the nearest binary32 (ties to even) on the binary32 grid: 24 significant bits for
// normal results, the fixed 2^-149 spacing for subnormal ones, infinity from 2^128 - 2^103 up.
float round_to_binary32(const mpfr_t v) {
  if (mpfr_nan_p(v)) return std::numeric_limits<float>::quiet_NaN();
  const bool neg = mpfr_signbit(v) != 0;
  if (mpfr_inf_p(v)) return neg ? -std::numeric_limits<float>::infinity()
                                : std::numeric_limits<float>::infinity();
  if (mpfr_zero_p(v)) return neg ? -0.0f : 0.0f;
  const mpfr_exp_t e = mpfr_get_exp(v);  // |v| in [2^(e-1), 2^e)
  if (e > 129) return neg ? -std::numeric_limits<float>::infinity()
                          : std::numeric_limits<float>::infinity();
  const long bits = static_cast<long>(e) + 149;  // grid bits from 2^(e-1) down to 2^-149
  if (bits < 0) return neg ? -0.0f : 0.0f;
  if (bits == 0) {
    // |v| in [2^-150, 2^-149): 2^-149 unless exactly the midpoint 2^-150 (ties to even: 0).
    Mp half;
    mpfr_set_ui_2exp(half.v, 1, -150, MPFR_RNDN);
    int c = mpfr_cmpabs(v, half.v);
    float m = c > 0 ? 0x1p-149f : 0.0f;
    return neg ? -m : m;
  }
  const mpfr_prec_t p = bits >= 24 ? 24 : static_cast<mpfr_prec_t>(bits);
  mpfr_t r;
  mpfr_init2(r, p);
  mpfr_set(r, v, MPFR_RNDN);
  float f = mpfr_get_flt(r, MPFR_RNDN);  // exact, or +-inf when the rounding reached 2^128
  mpfr_clear(r);
  return f;
}

// Whether the float64 value d is too close to a binary32 rounding boundary to round it directly.
bool near_boundary(double d) {
  if (!std::isfinite(d) || d == 0.0) return false;
  const double a = std::fabs(d);
  const double tol = a * kMargin;
  const double overflow_boundary = 0x1p128 - 0x1p103;
  if (std::fabs(a - overflow_boundary) <= tol) return true;
  if (a > overflow_boundary) return false;
  const float f = static_cast<float>(a);
  // The two midpoints around f (exact in float64).
  const double fd = f;
  const double below = std::nextafter(f, 0.0f);
  const double above = std::nextafter(f, std::numeric_limits<float>::infinity());
  const double mid_lo = (fd + below) * 0.5;
  const double mid_hi = (fd + above) * 0.5;
  if (std::fabs(a - mid_lo) <= tol) return true;
  if (f < FLT_MAX && std::fabs(a - mid_hi) <= tol) return true;
  // A value below the smallest subnormal midpoint: rounds to 0 unless close to 2^-150.
  return false;
}

}  // namespace

Exact exact_value(MathFn fn, float x, float y, bool force_mpfr) {
  Exact e;
  if (!force_mpfr) {
    const double d = double_value(fn, static_cast<double>(x), static_cast<double>(y));
    if (!near_boundary(d)) {
      e.value = d;
      e.rounded = static_cast<float>(d);
      return e;
    }
  }
  Mp r;
  mpfr_value(fn, x, y, r.v);
  e.used_mpfr = true;
  e.rounded = round_to_binary32(r.v);
  e.value = mpfr_get_d(r.v, MPFR_RNDN);
  if (mpfr_nan_p(r.v)) e.value = kNan;
  return e;
}

double error_ulps(float ours, const Exact& exact) {
  uint32_t ob, eb;
  std::memcpy(&ob, &ours, 4);
  std::memcpy(&eb, &exact.rounded, 4);
  const bool on = std::isnan(ours), en = std::isnan(exact.rounded);
  if (on || en) return on && en ? 0.0 : kInf;
  if (std::isinf(exact.value) && ob != eb) return kInf;
  if (ob == eb) {
    if (std::isinf(exact.value)) return 0.0;
  }
  const double lim = 0x1p128;
  double o = std::isinf(ours) ? std::copysign(lim, ours) : static_cast<double>(ours);
  double v = exact.value;
  if (v > lim) v = lim;
  if (v < -lim) v = -lim;
  int k = 0;
  std::frexp(v == 0.0 ? 0x1p-149 : v, &k);  // |v| in [2^(k-1), 2^k)
  int ex = k - 1;
  if (ex < -126) ex = -126;
  if (ex > 127) ex = 127;
  const double ulp = std::ldexp(1.0, ex - 23);
  return std::fabs(o - v) / ulp;
}

}  // namespace mathcheck
