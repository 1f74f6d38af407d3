// sigmoid_f64_avx2.cpp: bl::sigmoid's bits from a binary64 evaluation (see logistic_gradients.h),
// compiled for AVX2+FMA (the src/*/*/cpu/*_avx2.cpp rule in CMakeLists.txt).
//
// As in kernels/cpu/math_map_avx2.cpp, BL_HD is redefined as `static inline` before the contract
// headers, so this translation unit keeps private AVX2 copies of the contract functions and the
// linker can never hand them to baseline code.
//
// Error bound, for x in [-80, 80] (u = 2^-53): E = exp_f64_approx(-x) (contract/math/exp_f64.h)
// is e^-x within 2^-49 relative, so 1 + E is 1 + e^-x within 2^-49 relative too (E > 0); the add
// and the division 1 / (1 + E) round once each (u relative). The result y is sigmoid(x) within
// 2^-49 + 2u + u^2 < 2^-48 relative, 16 times below the rounding test's margin 2^-44. sigmoid(x)
// lies in [e^-80 / 2, 1): a normal binary32 range, so exp_f64_round's test (the 29 bits binary32
// drops are not within 2^9 of the half-way pattern) proves that y and sigmoid(x) round to the same
// binary32; a carry to 1.0 is right. Outside [-80, 80] (NaN included) and where the test is in
// doubt, bl::sigmoid decides.
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/math.h"
#include "contract/math/exp_f64.h"
#include "ml/boosting/logistic_gradients.h"

namespace bl::ml {

#if defined(__x86_64__) || defined(_M_X64)

namespace {

constexpr int64_t kLanes = 256;  // rows per evaluation pass (the in-doubt flags stay on the stack)
constexpr float kLow = -80.0f;
constexpr float kHigh = 80.0f;

// e^-xc as exp_f64_approx(-xc, kExpF64Degree) computes it (contract/math/exp_f64.h: the same
// operations in the same order, so the same binary64 bits and the same error bound), with the
// Horner steps written out so that the compiler vectorizes the row loop.
inline double exp_neg_f64(float xc) {
  using namespace exp_f64_detail;
  const double* c = kExpF64HostCoefficients;
  static_assert(kExpF64Degree == 10, "the Horner steps below are written for degree 10");
  const double x = f64_of_f32(neg(xc));
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52
  const double t = f64_fma(x, 1.4426950408889634, shifter);
  const double kd = f64_add(t, -shifter);
  const double r1 = f64_fma(-kd, 0.6931471805599453, x);
  const double r = f64_fma(-kd, 2.3190468138462996e-17, r1);
  double p = c[10];
  p = f64_fma(p, r, c[9]);
  p = f64_fma(p, r, c[8]);
  p = f64_fma(p, r, c[7]);
  p = f64_fma(p, r, c[6]);
  p = f64_fma(p, r, c[5]);
  p = f64_fma(p, r, c[4]);
  p = f64_fma(p, r, c[3]);
  p = f64_fma(p, r, c[2]);
  p = f64_fma(p, r, c[1]);
  p = f64_fma(p, r, c[0]);
  const uint32_t k = static_cast<uint32_t>(bits_of_f64(t));
  return f64_of_bits(bits_of_f64(p) + (static_cast<uint64_t>(k << 20) << 32));
}

// y (binary64, in [2^-126, 1]) rounded to binary32 on its bits and whether that rounding is in
// doubt: exp_f64_round (contract/math/exp_f64.h) for normal results, whose subnormal branch would
// keep the compiler from vectorizing. binary32 keeps y's top 24 significand bits plus the round
// bit (a carry into the exponent is right); in doubt when the 29 dropped bits lie within
// margin_ulps of the half-way pattern.
inline float round_normal(double y, uint32_t margin_ulps, bool test, bool* hard) {
  const uint64_t b = exp_f64_detail::bits_of_f64(y);
  const uint32_t hi = static_cast<uint32_t>(b >> 32), lo = static_cast<uint32_t>(b);
  uint32_t f = ((hi - (896u << 20)) << 3) | (lo >> 29);
  f += (lo >> 28) & 1u;
  const uint32_t dropped = lo & 0x1FFFFFFFu;
  *hard = test & (dropped - (0x10000000u - margin_ulps) <= 2u * margin_ulps);
  return float_of(f);
}

// y for up to kLanes rows and whether each is in doubt.
void evaluate(const float* x, float* out, uint8_t* hard, int64_t n, uint32_t margin_ulps, bool test) {
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i];
    const bool in_range = (xi >= kLow) & (xi <= kHigh);  // false for NaN
    const float xc = in_range ? xi : 0.0f;
    const double s = 1.0 / (1.0 + exp_neg_f64(xc));
    bool h = false;
    out[i] = round_normal(s, margin_ulps, test, &h);
    hard[i] = static_cast<uint8_t>(h | !in_range);
  }
}

// bl::max(v, floor) for floor > 0 and v >= +0 or NaN (v = q * (1 - q) with q in [0, 1]), on the
// bits so that the row loop vectorizes: non-negative floats order as their bit patterns; a NaN v
// gives the canonical NaN, v == floor gives floor (the same bits), else the larger.
inline float hessian_floor(float v, float floor) {
  const uint32_t bv = bits_of(v), bf = bits_of(floor);
  const uint32_t larger = bv > bf ? bv : bf;
  return float_of(is_nan(v) ? bits_of(canonical_nan()) : larger);
}

}  // namespace

void logistic_gradients_avx2(const float* raw, const int32_t* y_class, int64_t n, float min_hessian, float* grad,
                             float* hess) {
  float q[kLanes];
  for (int64_t begin = 0; begin < n; begin += kLanes) {
    const int64_t len = n - begin < kLanes ? n - begin : kLanes;
    sigmoid_f64_avx2(raw + begin, q, len, 44);
    const int32_t* y = y_class + begin;
    float* g = grad + begin;
    float* h = hess + begin;
    for (int64_t i = 0; i < len; ++i) {
      const float label = float_of(y[i] == 1 ? 0x3F800000u : 0u);  // 1.0f or +0.0f
      g[i] = sub(q[i], label);
      h[i] = hessian_floor(mul(q[i], sub(1.0f, q[i])), min_hessian);
    }
  }
}

int64_t sigmoid_f64_avx2(const float* x, float* out, int64_t n, int margin_bits) {
  const bool test = margin_bits > 0;
  const uint32_t margin_ulps = test ? exp_f64_detail::exp_f64_margin_ulps(margin_bits) : 0u;
  uint8_t hard[kLanes];
  int64_t fallbacks = 0;
  for (int64_t begin = 0; begin < n; begin += kLanes) {
    const int64_t len = n - begin < kLanes ? n - begin : kLanes;
    evaluate(x + begin, out + begin, hard, len, margin_ulps, test);
    for (int64_t i = 0; i < len; ++i) {
      if (!hard[i]) continue;
      out[begin + i] = canonicalize(sigmoid(x[begin + i]));
      ++fallbacks;
    }
  }
  return fallbacks;
}

#else

int64_t sigmoid_f64_avx2(const float* x, float* out, int64_t n, int) {
  for (int64_t i = 0; i < n; ++i) out[i] = canonicalize(sigmoid(x[i]));
  return n;
}

void logistic_gradients_avx2(const float* raw, const int32_t* y_class, int64_t n, float min_hessian, float* grad,
                             float* hess) {
  for (int64_t i = 0; i < n; ++i) {
    const float q = canonicalize(sigmoid(raw[i]));
    grad[i] = sub(q, y_class[i] == 1 ? 1.0f : 0.0f);
    hess[i] = max(mul(q, sub(1.0f, q)), min_hessian);
  }
}

#endif

}  // namespace bl::ml
