// host_numerics.cpp: see host_numerics.h.
#include "ml/preprocessing/host_numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "ml/cluster/density_clustering.h"
#include "ml/host_math.h"

namespace bl::ml::prep {

double log1p64(double x) {
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  return log64(u) * x / (u - 1.0);
}

namespace {

// 1 / k! for k = 0 .. 15 (binary64 divisions in order).
struct InverseFactorials {
  double c[16];
  InverseFactorials() {
    c[0] = 1.0;
    for (int k = 1; k <= 15; ++k) c[k] = c[k - 1] / static_cast<double>(k);
  }
};
const InverseFactorials kInvFact;

// sum_{k=1..15} y^k / k! by Estrin's scheme (pairs, then powers y^2, y^4, y^8, in this fixed order).
double taylor_expm1(double y) {
  const double* c = kInvFact.c;
  const double y2 = y * y, y4 = y2 * y2, y8 = y4 * y4;
  const double a0 = c[1] + c[2] * y, a1 = c[3] + c[4] * y, a2 = c[5] + c[6] * y, a3 = c[7] + c[8] * y;
  const double a4 = c[9] + c[10] * y, a5 = c[11] + c[12] * y, a6 = c[13] + c[14] * y, a7 = c[15];
  const double b0 = a0 + a1 * y2, b1 = a2 + a3 * y2, b2 = a4 + a5 * y2, b3 = a6 + a7 * y2;
  const double d0 = b0 + b1 * y4, d1 = b2 + b3 * y4;
  return (d0 + d1 * y8) * y;
}

// ln 2 in two parts, the first with 32 significant bits (k * hi is exact for |k| < 2^21).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;

}  // namespace

double expm1_64(double y) {
  if (std::fabs(y) < 0.5) return taylor_expm1(y);
  if (!(std::fabs(y) < 700.0)) return exp64(y) - 1.0;  // overflow, underflow to -1, NaN
  // y = k ln2 + r, |r| <= ln2 / 2 (about): e^y - 1 = 2^k (1 + expm1(r)) - 1, 2^k from its exponent bits.
  const double k = std::floor(y * kInvLn2 + 0.5);
  const double r = (y - k * kLn2Hi) - k * kLn2Lo;
  const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(k) + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return (1.0 + taylor_expm1(r)) * scale - 1.0;
}

namespace {

// c[0] + c[1] r + ... + c[7] r^7 in Horner order.
double poly7(const double* c, double r) {
  double s = c[7];
  for (int k = 6; k >= 0; --k) s = s * r + c[k];
  return s;
}

// AS 241 (PPND16) coefficients: numerator / denominator of each region, lowest degree first.
constexpr double kCentralNum[8] = {3.3871328727963666080e0,  1.3314166789178437745e+2, 1.9715909503065514427e+3,
                                   1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
                                   3.3430575583588128105e+4, 2.5090809287301226727e+3};
constexpr double kCentralDen[8] = {1.0,
                                   4.2313330701600911252e+1,
                                   6.8718700749205790830e+2,
                                   5.3941960214247511077e+3,
                                   2.1213794301586595867e+4,
                                   3.9307895800092710610e+4,
                                   2.8729085735721942674e+4,
                                   5.2264952788528545610e+3};
constexpr double kNearNum[8] = {1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
                                3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
                                2.27238449892691845833e-2, 7.74545014278341407640e-4};
constexpr double kNearDen[8] = {1.0,
                                2.05319162663775882187e0,
                                1.67638483018380384940e0,
                                6.89767334985100004550e-1,
                                1.48103976427480074590e-1,
                                1.51986665636164571966e-2,
                                5.47593808499534494600e-4,
                                1.05075007164441684324e-9};
constexpr double kFarNum[8] = {6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
                               2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
                               2.71155556874348757815e-5, 2.01033439929228813265e-7};
constexpr double kFarDen[8] = {1.0,
                               5.99832206555887937690e-1,
                               1.36929880922735805310e-1,
                               1.48753612908506148525e-2,
                               7.86869131145613259100e-4,
                               1.84631831751005468180e-5,
                               1.42151175831644588870e-7,
                               2.04426310338993978564e-15};

}  // namespace

double normal_quantile64(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * poly7(kCentralNum, r) / poly7(kCentralDen, r);
  }
  double r = std::sqrt(-log64(q < 0.0 ? p : 1.0 - p));
  double v;
  if (r <= 5.0) {
    r -= 1.6;
    v = poly7(kNearNum, r) / poly7(kNearDen, r);
  } else {
    r -= 5.0;
    v = poly7(kFarNum, r) / poly7(kFarDen, r);
  }
  return q < 0.0 ? -v : v;
}

std::vector<double> linspace64(double a, double b, int64_t num) {
  std::vector<double> v(static_cast<size_t>(num));
  if (num == 0) return v;
  if (num == 1) {
    v[0] = a;
    return v;
  }
  const double step = (b - a) / static_cast<double>(num - 1);
  for (int64_t k = 0; k < num; ++k) v[k] = static_cast<double>(k) * step + a;
  v[num - 1] = b;
  return v;
}

double sorted_percentile(const std::vector<double>& v, double q) {
  const size_t n = v.size();
  const double index = static_cast<double>(n - 1) * (q / 100.0);
  if (index >= static_cast<double>(n - 1)) return v[n - 1];
  if (index < 0.0) return v[0];
  const double below = std::floor(index);
  const size_t i = static_cast<size_t>(below);
  const double t = index - below, a = v[i], b = v[i + 1], diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

double minimize_bounded(const std::function<double(double)>& f, double lo, double hi, double xtol) {
  const double golden = 0.5 * (3.0 - std::sqrt(5.0));
  const double sqrt_eps = std::sqrt(2.220446049250313e-16);
  auto eval = [&](double x) {
    const double v = f(x);
    return std::isfinite(v) ? v : std::numeric_limits<double>::infinity();
  };
  double a = lo, b = hi;
  double x = a + golden * (b - a), w = x, v = x;
  double fx = eval(x), fw = fx, fv = fx;
  double d = 0.0, e = 0.0;
  int evaluations = 1;
  for (;;) {
    const double xm = 0.5 * (a + b);
    const double tol1 = sqrt_eps * std::fabs(x) + xtol / 3.0, tol2 = 2.0 * tol1;
    if (std::fabs(x - xm) <= tol2 - 0.5 * (b - a) || evaluations >= 500) break;
    bool golden_step = true;
    if (std::fabs(e) > tol1) {  // a parabola through (v, fv), (w, fw), (x, fx)
      double r = (x - w) * (fx - fv);
      double q = (x - v) * (fx - fw);
      double p = (x - v) * q - (x - w) * r;
      q = 2.0 * (q - r);
      if (q > 0.0) p = -p;
      q = std::fabs(q);
      r = e;
      e = d;
      if (std::fabs(p) < std::fabs(0.5 * q * r) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        const double u = x + d;
        golden_step = false;
        if (u - a < tol2 || b - u < tol2) d = xm >= x ? tol1 : -tol1;
      }
    }
    if (golden_step) {
      e = x >= xm ? a - x : b - x;
      d = golden * e;
    }
    const double u = std::fabs(d) >= tol1 ? x + d : x + (d >= 0.0 ? tol1 : -tol1);
    const double fu = eval(u);
    ++evaluations;
    if (fu <= fx) {
      if (u >= x) a = x;
      else b = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x) a = u;
      else b = u;
      if (fu <= fw || w == x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
  return x;
}

void check_no_infinity(const std::string& est, const Tensor& X) {
  Tensor h = X.to(Device::cpu()).contiguous();
  const float* p = h.data<float>();
  const int64_t total = h.numel(), cols = h.dim(1);
  for (int64_t i = 0; i < total; ++i)
    BL_CHECK(!std::isinf(p[i]), est, ": X holds a non-finite value (infinity) at row ", i / cols, ", column ",
             i % cols, " (counted from 0; only NaN marks a missing value)");
}

std::vector<std::vector<double>> host_columns(const Tensor& X) {
  Tensor h = X.to(Device::cpu()).contiguous();
  const float* p = h.data<float>();
  const int64_t n = h.dim(0), d = h.dim(1);
  std::vector<std::vector<double>> cols(static_cast<size_t>(d), std::vector<double>(static_cast<size_t>(n)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) cols[j][i] = static_cast<double>(p[i * d + j]);
  return cols;
}

Tensor tensor_from_columns(const std::vector<std::vector<double>>& cols, int64_t n, Device device) {
  const int64_t d = static_cast<int64_t>(cols.size());
  std::vector<float> out(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) out[i * d + j] = static_cast<float>(cols[j][i]);
  return Tensor::from_vector(out, {n, d}, device);
}

std::vector<double> get_finite_f64(const nlohmann::json& state, const std::string& key, int64_t size,
                                   const std::string& est) {
  std::vector<double> v = density_detail::f64_from_state(state, key, size, est);
  for (size_t k = 0; k < v.size(); ++k)
    BL_CHECK(std::isfinite(v[k]), est, ": model state field '", key, "' holds ", v[k], " at ", k);
  return v;
}

}  // namespace bl::ml::prep
