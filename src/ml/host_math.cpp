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

}  // namespace bl::ml
