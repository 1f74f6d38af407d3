// ts_numerics.cpp: see ts_numerics.h.
#include "ml/timeseries/ts_numerics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "ml/host_math.h"

namespace bl::ml::ts {

std::vector<double> series_of(const std::string& est, const Tensor& y, int64_t min_n) {
  BL_CHECK(y.defined(), est, ": fit needs the series y (the target column)");
  BL_CHECK(y.ndim() == 1, est, ": y must be 1-d (one series), got ", y.ndim(), " dimensions");
  Tensor h = y.to(Device::cpu());
  if (h.dtype() != DType::f32) h = h.to(DType::f32);
  const std::vector<float> v = h.to_vector<float>();
  BL_CHECK(static_cast<int64_t>(v.size()) >= min_n, est, ": the series has ", v.size(), " values, at least ", min_n,
           " are needed");
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    BL_CHECK(std::isfinite(v[i]), est, ": y[", i, "] is ", v[i], "; the series must be finite (no NaN)");
    out[i] = static_cast<double>(v[i]);
  }
  return out;
}

void check_forecast_args(const std::string& est, int64_t steps, double alpha) {
  BL_CHECK(steps >= 1 && steps <= 10000000, est, ": forecast steps must be in [1, 1e7], got ", steps);
  BL_CHECK(alpha > 0.0 && alpha < 1.0, est, ": forecast alpha must be in (0, 1), got ", alpha);
}

namespace {

constexpr double kInvSqrtPi = 0.56418958354775628695;  // 1 / sqrt(pi)
constexpr double kSqrtHalf = 0.70710678118654752440;

// erfc(z) for z >= 0.
double erfc_pos(double z) {
  const double z2 = z * z;
  const double ez = exp64(-z2);
  if (z < 3.0) {
    double term = z, sum = z;
    for (int k = 1; k < 400; ++k) {
      term = term * 2.0 * z2 / static_cast<double>(2 * k + 1);
      sum += term;
      if (term < sum * 0x1p-60) break;
    }
    return 1.0 - 2.0 * kInvSqrtPi * ez * sum;
  }
  double t = z;
  for (int k = 80; k >= 1; --k) t = z + (0.5 * static_cast<double>(k)) / t;
  return ez * kInvSqrtPi / t;
}

}  // namespace

double normal_cdf64(double x) {
  if (std::isnan(x)) return x;
  const double z = x * kSqrtHalf;
  if (z <= 0.0) return 0.5 * erfc_pos(-z);
  return 1.0 - 0.5 * erfc_pos(z);
}

double pow_pos64(double x, double e) {
  if (e == 1.0) return x;
  return exp64(e * log64(x));
}

namespace {

double finite_or_inf(double v) { return std::isfinite(v) ? v : std::numeric_limits<double>::infinity(); }

}  // namespace

BoxMinResult minimize_box64(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                            const std::vector<double>& lo, const std::vector<double>& hi, int64_t max_iter,
                            double ftol, double gtol) {
  const size_t p = x0.size();
  for (size_t i = 0; i < p; ++i) x0[i] = std::min(std::max(x0[i], lo[i]), hi[i]);
  auto eval = [&](const std::vector<double>& x) { return finite_or_inf(f(x)); };
  auto grad = [&](std::vector<double>& x, std::vector<double>& g) {
    g.assign(p, 0.0);
    for (size_t i = 0; i < p; ++i) {
      const double xi = x[i];
      double h = 6.0554544523933395e-06 * std::max(1.0, std::fabs(xi));
      const bool up = xi + h <= hi[i], down = xi - h >= lo[i];
      double fp, fm, den;
      if (up && down) {
        x[i] = xi + h; fp = eval(x);
        x[i] = xi - h; fm = eval(x);
        den = 2.0 * h;
      } else {
        h = 1.4901161193847656e-08 * std::max(1.0, std::fabs(xi));
        if (up) {
          x[i] = xi + h; fp = eval(x);
          x[i] = xi; fm = eval(x);
        } else {
          x[i] = xi; fp = eval(x);
          x[i] = xi - h; fm = eval(x);
        }
        den = h;
      }
      x[i] = xi;
      g[i] = (std::isfinite(fp) && std::isfinite(fm)) ? (fp - fm) / den : 0.0;
    }
  };
  auto project = [&](std::vector<double>& x) {
    for (size_t i = 0; i < p; ++i) x[i] = std::min(std::max(x[i], lo[i]), hi[i]);
  };
  // The gradient with the outward components at active bounds set to 0.
  auto free_grad = [&](const std::vector<double>& x, const std::vector<double>& g) {
    std::vector<double> pg = g;
    for (size_t i = 0; i < p; ++i)
      if ((x[i] <= lo[i] && g[i] > 0.0) || (x[i] >= hi[i] && g[i] < 0.0)) pg[i] = 0.0;
    return pg;
  };
  auto dot = [&](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (size_t i = 0; i < p; ++i) s += a[i] * b[i];
    return s;
  };
  BoxMinResult res;
  std::vector<double> x = x0, g, pg;
  double fx = eval(x);
  grad(x, g);
  std::vector<std::vector<double>> S, Y;
  std::vector<double> rho;
  const int history = 10;
  for (int64_t it = 0; it < max_iter; ++it) {
    res.n_iter = it + 1;
    pg = free_grad(x, g);
    double pmax = 0.0;
    for (double v : pg) pmax = std::max(pmax, std::fabs(v));
    if (pmax <= gtol) break;
    // Two-loop recursion on the free gradient.
    std::vector<double> d = pg;
    std::vector<double> a(S.size());
    for (size_t k = S.size(); k-- > 0;) {
      a[k] = rho[k] * dot(S[k], d);
      for (size_t i = 0; i < p; ++i) d[i] -= a[k] * Y[k][i];
    }
    if (!S.empty()) {
      const double gam = dot(S.back(), Y.back()) / dot(Y.back(), Y.back());
      for (double& v : d) v *= gam;
    }
    for (size_t k = 0; k < S.size(); ++k) {
      const double b = rho[k] * dot(Y[k], d);
      for (size_t i = 0; i < p; ++i) d[i] += S[k][i] * (a[k] - b);
    }
    for (size_t i = 0; i < p; ++i) {
      d[i] = -d[i];
      if (pg[i] == 0.0 && g[i] != 0.0) d[i] = 0.0;
    }
    if (!(dot(d, pg) < 0.0)) {
      S.clear(); Y.clear(); rho.clear();
      for (size_t i = 0; i < p; ++i) d[i] = -pg[i];
    }
    double t = 1.0;
    if (S.empty()) {
      double gn = std::sqrt(dot(pg, pg));
      t = std::min(1.0, 1.0 / gn);
    }
    std::vector<double> xn(p);
    double fn = fx;
    bool ok = false;
    for (int ls = 0; ls < 60; ++ls) {
      for (size_t i = 0; i < p; ++i) xn[i] = x[i] + t * d[i];
      project(xn);
      double dec = 0.0;
      for (size_t i = 0; i < p; ++i) dec += g[i] * (xn[i] - x[i]);
      fn = eval(xn);
      if (fn <= fx + 1e-4 * dec && fn < fx) {
        ok = true;
        break;
      }
      t *= 0.5;
    }
    if (!ok) {
      if (S.empty()) break;
      S.clear(); Y.clear(); rho.clear();
      continue;
    }
    std::vector<double> gn;
    grad(xn, gn);
    std::vector<double> s(p), yv(p);
    for (size_t i = 0; i < p; ++i) {
      s[i] = xn[i] - x[i];
      yv[i] = gn[i] - g[i];
    }
    const double sy = dot(s, yv);
    if (sy > 1e-300) {
      if (static_cast<int>(S.size()) == history) {
        S.erase(S.begin()); Y.erase(Y.begin()); rho.erase(rho.begin());
      }
      S.push_back(s); Y.push_back(yv); rho.push_back(1.0 / sy);
    }
    const double drop = fx - fn;
    x = xn;
    g = gn;
    fx = fn;
    if (drop <= ftol * std::max(1.0, std::fabs(fx))) break;
  }
  res.x = x;
  res.f = fx;
  return res;
}

bool least_squares64(const std::vector<double>& X, int64_t n, int64_t k, const std::vector<double>& y,
                     LeastSquares& out) {
  if (n < k || k < 1) return false;
  // Column-major copy, reduced by Householder reflections in column order.
  std::vector<double> A(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) A[j * n + i] = X[i * k + j];
  std::vector<double> b = y;
  std::vector<double> cnorm(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += A[j * n + i] * A[j * n + i];
    cnorm[j] = std::sqrt(s);
  }
  for (int64_t j = 0; j < k; ++j) {
    double* col = &A[j * n];
    double s = 0.0;
    for (int64_t i = j; i < n; ++i) s += col[i] * col[i];
    double nrm = std::sqrt(s);
    if (!(nrm > 1e-13 * std::max(cnorm[j], 1e-300))) return false;
    const double alpha = col[j] > 0.0 ? -nrm : nrm;
    // v = x - alpha e1, stored in col[j..n); H = I - 2 v v^T / (v^T v).
    col[j] -= alpha;
    double vv = 0.0;
    for (int64_t i = j; i < n; ++i) vv += col[i] * col[i];
    for (int64_t c = j + 1; c < k; ++c) {
      double* other = &A[c * n];
      double dv = 0.0;
      for (int64_t i = j; i < n; ++i) dv += col[i] * other[i];
      const double f = 2.0 * dv / vv;
      for (int64_t i = j; i < n; ++i) other[i] -= f * col[i];
    }
    double db = 0.0;
    for (int64_t i = j; i < n; ++i) db += col[i] * b[i];
    const double fb = 2.0 * db / vv;
    for (int64_t i = j; i < n; ++i) b[i] -= fb * col[i];
    col[j] = alpha;  // R's diagonal (the rest of the column below is no longer needed)
  }
  // R x = Q^T b (upper triangle: R[r][c] = A[c * n + r] for r < c, diagonal A[j * n + j]).
  out.coef.assign(static_cast<size_t>(k), 0.0);
  for (int64_t r = k; r-- > 0;) {
    double s = b[r];
    for (int64_t c = r + 1; c < k; ++c) s -= A[c * n + r] * out.coef[c];
    out.coef[r] = s / A[r * n + r];
  }
  double ssr = 0.0;
  for (int64_t i = k; i < n; ++i) ssr += b[i] * b[i];
  out.ssr = ssr;
  // R^-1 (upper), then diag((X^T X)^-1) = row sums of squares of R^-1.
  std::vector<double> Ri(static_cast<size_t>(k * k), 0.0);
  for (int64_t c = 0; c < k; ++c) {
    Ri[c * k + c] = 1.0 / A[c * n + c];
    for (int64_t r = c; r-- > 0;) {
      double s = 0.0;
      for (int64_t m = r + 1; m <= c; ++m) s += A[m * n + r] * Ri[m * k + c];
      Ri[r * k + c] = -s / A[r * n + r];
    }
  }
  out.xtx_inv_diag.assign(static_cast<size_t>(k), 0.0);
  for (int64_t r = 0; r < k; ++r) {
    double s = 0.0;
    for (int64_t c = r; c < k; ++c) s += Ri[r * k + c] * Ri[r * k + c];
    out.xtx_inv_diag[r] = s;
  }
  return true;
}

}  // namespace bl::ml::ts
