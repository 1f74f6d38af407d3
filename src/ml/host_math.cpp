// host_math.cpp: see host_math.h.
#include "ml/host_math.h"

#include <cmath>
#include <limits>

namespace bl::ml {

namespace {
constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
}  // namespace

double exp64(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  const double k = std::nearbyint(x / 0.6931471805599453);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double s = 1.0;
  for (int t = 18; t >= 1; --t) s = 1.0 + s * r / static_cast<double>(t);
  return std::ldexp(s, static_cast<int>(k));
}

double log64(double x) {
  if (std::isnan(x) || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < 0.70710678118654752) m *= 2.0, --e;
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double sum = 0.0;
  for (int t = 27; t >= 3; t -= 2) sum = (sum + 1.0 / static_cast<double>(t)) * s2;
  const double lnm = 2.0 * (s + s * sum);
  return static_cast<double>(e) * kLn2Hi + (static_cast<double>(e) * kLn2Lo + lnm);
}

namespace {
// ln Gamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) z^k / k: the coefficients of z^1..z^30
// (evaluated to 50 digits, rounded to binary64); |z| <= 1/2 leaves the omitted terms below 2^-60.
constexpr double kLgammaAt2[30] = {
    0.42278433509846713,     0.3224670334241132,      -0.0673523010531981,     0.020580808427784546,
    -0.007385551028673986,   0.0028905103307415234,   -0.001192753911703261,   0.0005096695247430425,
    -0.00022315475845357939, 9.945751278180853e-05,   -4.492623673813314e-05,  2.050721277567069e-05,
    -9.439488275268397e-06,  4.374866789907488e-06,   -2.039215753801366e-06,  9.55141213040742e-07,
    -4.492469198764566e-07,  2.1207184805554665e-07,  -1.0043224823968099e-07, 4.7698101693639804e-08,
    -2.2711094608943164e-08, 1.0838659214896955e-08,  -5.183475041970047e-09,  2.4836745438024785e-09,
    -1.1921401405860912e-09, 5.731367241678862e-10,   -2.7595228851242334e-10, 1.330476437424449e-10,
    -6.4229645638381e-11,    3.1044247747322276e-11};
}  // namespace

double lgamma64(double x) {
  if (std::isnan(x) || x <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x)) return x;
  if (x < 0x1p-52) return -log64(x);
  if (x >= 15.0) {
    const double t = 1.0 / (x * x);
    // B_2k / (2k (2k - 1)): 1/12, -1/360, 1/1260, -1/1680, 1/1188, -691/360360, 1/156.
    const double series =
        (1.0 / 12.0 -
         t * (1.0 / 360.0 - t * (1.0 / 1260.0 - t * (1.0 / 1680.0 - t * (1.0 / 1188.0 - t * (691.0 / 360360.0 - t / 156.0)))))) /
        x;
    constexpr double kHalfLog2Pi = 0.91893853320467274178;  // ln(2 pi) / 2
    return ((x - 0.5) * log64(x) - x) + (kHalfLog2Pi + series);
  }
  // Carry x into [1.5, 2.5) by the recurrence, the product of the factors in order.
  double prod = 1.0;
  bool down = false;
  while (x >= 2.5) {
    x -= 1.0;
    prod *= x;
    down = true;
  }
  while (x < 1.5) {
    prod *= x;
    x += 1.0;
  }
  const double z = x - 2.0;
  double series = 0.0;
  for (int t = 29; t >= 0; --t) series = (series + kLgammaAt2[t]) * z;
  if (prod == 1.0) return series;
  return down ? series + log64(prod) : series - log64(prod);
}

double digamma64(double x) {
  if (std::isnan(x) || x <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x)) return x;
  if (x >= 10.0) {
    const double t = 1.0 / (x * x);
    // B_2k / (2k): 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
    const double series =
        t * (1.0 / 12.0 -
             t * (1.0 / 120.0 - t * (1.0 / 252.0 - t * (1.0 / 240.0 - t * (1.0 / 132.0 - t * (691.0 / 32760.0 - t / 12.0))))));
    return (log64(x) - 0.5 / x) - series;
  }
  // Carry x into [1.5, 2.5) by psi(x + 1) = psi(x) + 1 / x (the reciprocals summed in order); psi(2 + z)
  // is the derivative of lgamma64's series: sum_k k c_k z^(k-1).
  double shift = 0.0;
  while (x >= 2.5) {
    x -= 1.0;
    shift += 1.0 / x;
  }
  while (x < 1.5) {
    shift -= 1.0 / x;
    x += 1.0;
  }
  const double z = x - 2.0;
  double series = 0.0;
  for (int t = 29; t >= 0; --t) series = series * z + static_cast<double>(t + 1) * kLgammaAt2[t];
  return series + shift;
}

namespace {
constexpr double kPio2Hi = 1.57079632673412561417e+00, kPio2Lo = 6.07710050650619224932e-11;

// sin r and cos r for |r| <= pi/4 by Taylor polynomials in Horner order.
double sin_poly(double r) {
  const double r2 = r * r;
  double s = 1.0;
  for (int t = 25; t >= 3; t -= 2) s = 1.0 - s * r2 / static_cast<double>(t * (t - 1));
  return r * s;
}
double cos_poly(double r) {
  const double r2 = r * r;
  double s = 1.0;
  for (int t = 24; t >= 2; t -= 2) s = 1.0 - s * r2 / static_cast<double>(t * (t - 1));
  return s;
}

// sin (cos_shift 0) or cos (cos_shift 1) of x through the quadrant of the reduction.
double sin_cos64(double x, int64_t cos_shift) {
  if (std::isnan(x) || std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  const double k = std::nearbyint(x / 1.5707963267948966);
  const double r = (x - k * kPio2Hi) - k * kPio2Lo;
  const int64_t q = ((static_cast<int64_t>(k) + cos_shift) % 4 + 4) % 4;
  switch (q) {
    case 0: return sin_poly(r);
    case 1: return cos_poly(r);
    case 2: return -sin_poly(r);
    default: return -cos_poly(r);
  }
}
}  // namespace

double sin64(double x) { return sin_cos64(x, 0); }
double cos64(double x) { return sin_cos64(x, 1); }

double asin64(double x) {
  if (std::isnan(x) || x > 1.0 || x < -1.0) return std::numeric_limits<double>::quiet_NaN();
  const double a = std::fabs(x);
  auto series = [](double s) {
    double coef[41];
    coef[0] = 1.0;
    for (int n = 0; n < 40; ++n)
      coef[n + 1] = coef[n] * static_cast<double>((2 * n + 1) * (2 * n + 1)) / static_cast<double>((2 * n + 2) * (2 * n + 3));
    const double s2 = s * s;
    double sum = 0.0;
    for (int n = 40; n >= 1; --n) sum = (sum + coef[n]) * s2;
    return s + s * sum;
  };
  double r;
  if (a <= 0.5) {
    r = series(a);
  } else {
    r = (1.5707963267948966 - 2.0 * series(std::sqrt((1.0 - a) * 0.5))) + 6.123233995736766e-17;
  }
  return x < 0.0 ? -r : r;
}

}  // namespace bl::ml
