// arima_model.cpp: see arima_model.h.
//
// State space (Harvey's form, as statsmodels' SARIMAX): with the full polynomials ar (length pf =
// p + s P) and ma (length qf = q + s Q), the state has m = max(pf, qf + 1) entries; T is the
// companion matrix (first column ar, ones above the diagonal), R = [1, ma_1 .. ma_{m-1}], Z = e_1,
// no observation noise. The filter runs at unit innovation variance (the likelihood's scale is
// sigma2 times it), in the prediction form: v = w_t - a_0, F = P_00, a += P_.0 v / F, P -= P_.0 P_0. / F,
// then a <- T a, P <- T P T' + R R' (T's products in O(m^2) from the companion structure). The
// first state is the stationary one: mean 0, covariance the solution of the discrete Lyapunov
// equation P = T P T' + R R', summed by doubling (P <- P + A P A', A <- A A from A = T, until the
// added term is below 1e-17 of P; an increment that does not fall within 100 doublings or
// overflows means the AR part is not stationary).
// Forecasts: the state [a, u_{t-1} .. u_{t-K}] (K = d + D s) starts at the filter's last
// prediction with the known past u (zero covariance); u_t = a_0 + sum_k delta_k u_{t-k} moves into
// the lags, so the forecast variances integrate those of the differenced series.
#include "ml/timeseries/arima_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml/host_math.h"
#include "ml/timeseries/ts_numerics.h"

namespace bl::ml::arima {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;
constexpr double kInf = std::numeric_limits<double>::infinity();

using Vec = std::vector<double>;

int64_t state_dim(const Vec& ar, const Vec& ma) {
  return std::max<int64_t>(static_cast<int64_t>(ar.size()), static_cast<int64_t>(ma.size()) + 1);
}

// The first column of T and R, padded to m entries.
void companion(const Vec& ar, const Vec& ma, int64_t m, Vec& phi, Vec& r) {
  phi.assign(static_cast<size_t>(m), 0.0);
  r.assign(static_cast<size_t>(m), 0.0);
  for (size_t i = 0; i < ar.size(); ++i) phi[i] = ar[i];
  r[0] = 1.0;
  for (size_t j = 0; j < ma.size(); ++j) r[j + 1] = ma[j];
}

// C = A B, or A B' when b_transposed (m x m, row-major), the inner index ascending.
Vec matmul(const Vec& A, const Vec& B, int64_t m, bool b_transposed = false) {
  Vec C(static_cast<size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < m; ++k) s += A[i * m + k] * (b_transposed ? B[j * m + k] : B[k * m + j]);
      C[i * m + j] = s;
    }
  return C;
}

// C = A B A' (m x m).
Vec sandwich(const Vec& A, const Vec& B, int64_t m) { return matmul(matmul(A, B, m), A, m, true); }

double max_abs(const Vec& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Least squares b = argmin |A b - t|^2 (ts::least_squares64); false for too few rows or dependent
// columns.
bool least_squares(const Vec& A, int64_t rows, int64_t cols, const Vec& t, Vec& b) {
  ts::LeastSquares ls;
  if (rows <= cols || !ts::least_squares64(A, rows, cols, t, ls)) return false;
  b = ls.coef;
  return true;
}

// The unconstrained start of one polynomial block (sign -1: an MA block, whose negated coefficients
// must be stationary); zeros where the block is outside the region.
Vec start_block(const Vec& coef, bool enforce, double sign) {
  if (!enforce) return coef;
  Vec c(coef.size()), u;
  for (size_t i = 0; i < coef.size(); ++i) c[i] = sign * coef[i];
  if (!unconstrain_stationary(c, u)) return Vec(coef.size(), 0.0);
  return u;
}

struct Offsets {
  int64_t ar, ma, sar, sma, end;
};
Offsets offsets(const Spec& s) {
  Offsets o;
  o.ar = s.k_reg();
  o.ma = o.ar + s.p;
  o.sar = o.ma + s.q;
  o.sma = o.sar + s.P;
  o.end = o.sma + s.Q;
  return o;
}

// The parameters of unconstrained x: each enforced block through constrain_stationary.
Vec to_params(const Spec& s, const Vec& x) {
  Vec out = x;
  const Offsets o = offsets(s);
  auto block = [&](int64_t from, int64_t len, bool enforce, double sign) {
    if (!enforce || len == 0) return;
    Vec c = constrain_stationary(Vec(x.begin() + from, x.begin() + from + len));
    for (int64_t i = 0; i < len; ++i) out[from + i] = sign * c[i];
  };
  block(o.ar, s.p, s.enforce_stationarity, 1.0);
  block(o.ma, s.q, s.enforce_invertibility, -1.0);
  block(o.sar, s.P, s.enforce_stationarity, 1.0);
  block(o.sma, s.Q, s.enforce_invertibility, -1.0);
  return out;
}

// Lag-regression columns [w_{t-i} ..] for rows t = t0 .. n-1.
void lag_columns(const Vec& w, const Vec& e, const Spec& s, int64_t t0, Vec& A, Vec& t, int64_t& rows, int64_t& cols) {
  const int64_t n = static_cast<int64_t>(w.size());
  cols = s.k_arma();
  rows = std::max<int64_t>(0, n - t0);
  A.assign(static_cast<size_t>(rows * cols), 0.0);
  t.assign(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t tt = t0 + r;
    int64_t c = 0;
    for (int64_t i = 1; i <= s.p; ++i) A[r * cols + c++] = w[tt - i];
    for (int64_t j = 1; j <= s.q; ++j) A[r * cols + c++] = e[tt - j];
    for (int64_t i = 1; i <= s.P; ++i) A[r * cols + c++] = w[tt - s.s * i];
    for (int64_t j = 1; j <= s.Q; ++j) A[r * cols + c++] = e[tt - s.s * j];
    t[r] = w[tt];
  }
}

// Hannan-Rissanen starting values (seasonal lags added to the regression, not multiplied): the
// residuals e of a long autoregression of w, then w_t regressed on its own and e's lags.
Vec arma_start(const Spec& s, const Vec& w) {
  Vec coef(static_cast<size_t>(s.k_arma()), 0.0);
  if (s.k_arma() == 0) return coef;
  const int64_t n = static_cast<int64_t>(w.size());
  const int64_t base = std::max(s.p + s.s * s.P, s.q + s.s * s.Q);
  const int64_t max_lag = std::max({s.p, s.q, s.s * s.P, s.s * s.Q});
  Vec e(static_cast<size_t>(n), 0.0);
  int64_t t0 = max_lag;
  if (s.q + s.Q > 0) {
    const int64_t L = std::min((n - 1) / 3, std::max(2 * base, base + 4));
    if (L < 1) return coef;
    Vec A(static_cast<size_t>((n - L) * L)), t(static_cast<size_t>(n - L)), a;
    for (int64_t r = 0; r < n - L; ++r) {
      for (int64_t i = 1; i <= L; ++i) A[r * L + i - 1] = w[L + r - i];
      t[r] = w[L + r];
    }
    if (!least_squares(A, n - L, L, t, a)) return coef;
    for (int64_t tt = L; tt < n; ++tt) {
      double v = w[tt];
      for (int64_t i = 1; i <= L; ++i) v -= a[i - 1] * w[tt - i];
      e[tt] = v;
    }
    t0 = L + max_lag;
  }
  Vec A, t;
  int64_t rows = 0, cols = 0;
  lag_columns(w, e, s, t0, A, t, rows, cols);
  Vec b;
  if (!least_squares(A, rows, cols, t, b)) return coef;
  return b;
}

}  // namespace

void check_spec(const Spec& s, int64_t n, const std::string& est) {
  BL_CHECK(s.p >= 0 && s.d >= 0 && s.q >= 0 && s.P >= 0 && s.D >= 0 && s.Q >= 0 && s.s >= 0, est,
           ": orders must be >= 0");
  BL_CHECK(s.p <= 64 && s.q <= 64 && s.P <= 8 && s.Q <= 8 && s.d <= 4 && s.D <= 2 && s.s <= 1024, est,
           ": orders too large (p, q <= 64; seasonal_p, seasonal_q <= 8; d <= 4; seasonal_d <= 2; s <= 1024)");
  if (s.P + s.D + s.Q > 0)
    BL_CHECK(s.s >= 2, est, ": a seasonal order needs a seasonal period s >= 2, got s=", s.s);
  BL_CHECK(s.trend == "n" || s.trend == "c" || s.trend == "t" || s.trend == "ct", est,
           ": trend must be n, c, t or ct, got ", s.trend);
  const int64_t integ = s.d + s.D;
  if (s.trend == "c" || s.trend == "ct")
    BL_CHECK(integ == 0, est, ": trend='", s.trend, "' has a constant, which differencing (d + seasonal_d = ", integ,
             ") removes; use trend='t' or 'n'");
  if (s.trend == "t") BL_CHECK(integ <= 1, est, ": trend='t' is removed by differencing of order d + seasonal_d = ", integ);
  BL_CHECK(s.k_diff() < n, est, ": the differencing d + seasonal_d * s = ", s.k_diff(), " needs more than ", s.k_diff(),
           " observations; the series has ", n);
  const int64_t nobs = n - s.k_diff();
  const int64_t need = s.k_params() + 2;
  BL_CHECK(nobs >= need, est, ": the series is too short for the order: ", nobs,
           " observations after differencing, at least ", need, " needed for ", s.k_params() + 1, " parameters");
}

Vec diff_poly(const Spec& s) {
  Vec c{1.0};
  auto times = [&](int64_t lag) {  // c <- c (1 - B^lag)
    Vec out(c.size() + static_cast<size_t>(lag), 0.0);
    for (size_t i = 0; i < c.size(); ++i) {
      out[i] += c[i];
      out[i + lag] -= c[i];
    }
    c = out;
  };
  for (int64_t i = 0; i < s.d; ++i) times(1);
  for (int64_t i = 0; i < s.D; ++i) times(s.s);
  return c;
}

void full_polynomials(const Spec& s, const Vec& params, Vec& ar, Vec& ma) {
  const Offsets o = offsets(s);
  // (1 - sum phi_i B^i)(1 - sum Phi_j B^sj) = 1 - sum ar_k B^k; the MA product with + signs.
  ar.assign(static_cast<size_t>(s.p + s.s * s.P), 0.0);
  ma.assign(static_cast<size_t>(s.q + s.s * s.Q), 0.0);
  Vec a(static_cast<size_t>(s.p + 1), 0.0), sa(static_cast<size_t>(s.P + 1), 0.0);
  a[0] = 1.0;
  sa[0] = 1.0;
  for (int64_t i = 0; i < s.p; ++i) a[i + 1] = -params[o.ar + i];
  for (int64_t i = 0; i < s.P; ++i) sa[i + 1] = -params[o.sar + i];
  for (int64_t i = 0; i <= s.p; ++i)
    for (int64_t j = 0; j <= s.P; ++j)
      if (i + s.s * j > 0) ar[i + s.s * j - 1] -= a[i] * sa[j];
  Vec b(static_cast<size_t>(s.q + 1), 0.0), sb(static_cast<size_t>(s.Q + 1), 0.0);
  b[0] = 1.0;
  sb[0] = 1.0;
  for (int64_t i = 0; i < s.q; ++i) b[i + 1] = params[o.ma + i];
  for (int64_t i = 0; i < s.Q; ++i) sb[i + 1] = params[o.sma + i];
  for (int64_t i = 0; i <= s.q; ++i)
    for (int64_t j = 0; j <= s.Q; ++j)
      if (i + s.s * j > 0) ma[i + s.s * j - 1] += b[i] * sb[j];
}

bool stationary_covariance(const Vec& ar, const Vec& ma, Vec& P) {
  const int64_t m = state_dim(ar, ma);
  Vec phi, r;
  companion(ar, ma, m, phi, r);
  Vec A(static_cast<size_t>(m * m), 0.0);
  P.assign(static_cast<size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    A[i * m] = phi[i];
    if (i + 1 < m) A[i * m + i + 1] = 1.0;
    for (int64_t j = 0; j < m; ++j) P[i * m + j] = r[i] * r[j];
  }
  for (int it = 0; it < 100; ++it) {
    Vec add = sandwich(A, P, m);
    const double inc = max_abs(add);
    for (size_t k = 0; k < P.size(); ++k) P[k] += add[k];
    const double size = max_abs(P);
    if (!std::isfinite(size) || !std::isfinite(inc)) return false;
    if (inc <= 1e-17 * size) return true;
    A = matmul(A, A, m);
  }
  return false;
}

FilterOut kalman_filter(const Vec& ar, const Vec& ma, const Vec& w, Vec* pred) {
  FilterOut out;
  const int64_t m = state_dim(ar, ma);
  Vec phi, r, P;
  companion(ar, ma, m, phi, r);
  if (!stationary_covariance(ar, ma, P)) return out;
  Vec a(static_cast<size_t>(m), 0.0), k(static_cast<size_t>(m)), row0(static_cast<size_t>(m)),
      M(static_cast<size_t>(m * m));
  if (pred) pred->assign(w.size(), 0.0);
  // Once the predicted covariance repeats exactly, every later one is the same (P_{t+1} is a function
  // of P_t alone): from there on F, log F and the gain are reused, which changes no bit.
  bool steady = false;
  double F = 0.0, logf = 0.0;
  Vec P_start;
  for (size_t t = 0; t < w.size(); ++t) {
    if (!steady) {
      F = P[0];
      if (!(F > 0.0) || !std::isfinite(F)) return out;
      logf = log64(F);
      for (int64_t i = 0; i < m; ++i) {
        k[i] = P[i * m] / F;
        row0[i] = P[i];
      }
    }
    const double v = w[t] - a[0];
    if (pred) (*pred)[t] = a[0];
    out.ssq += v * v / F;
    out.sumlogf += logf;
    // Update, then predict: a <- T a.
    for (int64_t i = 0; i < m; ++i) a[i] += k[i] * v;
    const double a0 = a[0];
    for (int64_t i = 0; i < m; ++i) a[i] = phi[i] * a0 + (i + 1 < m ? a[i + 1] : 0.0);
    if (steady) continue;
    // P -= k P_0., then P <- T P T' + R R'.
    P_start = P;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) P[i * m + j] -= k[i] * row0[j];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) M[i * m + j] = phi[i] * P[j] + (i + 1 < m ? P[(i + 1) * m + j] : 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j)
        P[i * m + j] = M[i * m] * phi[j] + (j + 1 < m ? M[i * m + j + 1] : 0.0) + r[i] * r[j];
    steady = P == P_start;
  }
  out.ok = std::isfinite(out.ssq) && std::isfinite(out.sumlogf);
  out.a_next = a;
  out.P_next = P;
  return out;
}

Vec design(const Spec& s, const Vec& x, int64_t n, int64_t first_row) {
  const int64_t k = s.k_reg(), kt = s.k_trend();
  Vec z(static_cast<size_t>(n * k), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double* row = z.data() + i * k;
    const double t = static_cast<double>(first_row + i + 1);
    if (s.trend == "c") row[0] = 1.0;
    if (s.trend == "t") row[0] = t;
    if (s.trend == "ct") {
      row[0] = 1.0;
      row[1] = t;
    }
    for (int64_t j = 0; j < s.k_exog; ++j) row[kt + j] = x[i * s.k_exog + j];
  }
  return z;
}

Vec residual_series(const Spec& s, const Vec& params, const Vec& y, const Vec& z) {
  const int64_t n = static_cast<int64_t>(y.size()), k = s.k_reg();
  Vec u(y.size());
  for (int64_t i = 0; i < n; ++i) {
    double v = y[i];
    for (int64_t j = 0; j < k; ++j) v -= z[i * k + j] * params[j];
    u[i] = v;
  }
  return u;
}

Vec difference(const Spec& s, const Vec& u) {
  const Vec c = diff_poly(s);
  const int64_t K = s.k_diff(), n = static_cast<int64_t>(u.size());
  Vec w(static_cast<size_t>(std::max<int64_t>(0, n - K)));
  for (int64_t t = K; t < n; ++t) {
    double v = 0.0;
    for (int64_t j = 0; j <= K; ++j) v += c[j] * u[t - j];
    w[t - K] = v;
  }
  return w;
}

namespace {
FilterOut filter_at(const Spec& s, const Vec& params, const Vec& y, const Vec& z, Vec* pred, int64_t& nobs) {
  Vec ar, ma;
  full_polynomials(s, params, ar, ma);
  const Vec w = difference(s, residual_series(s, params, y, z));
  nobs = static_cast<int64_t>(w.size());
  return kalman_filter(ar, ma, w, pred);
}
}  // namespace

double loglike(const Spec& s, const Vec& params, double sigma2, const Vec& y, const Vec& z) {
  int64_t nobs = 0;
  FilterOut f = filter_at(s, params, y, z, nullptr, nobs);
  if (!f.ok || !(sigma2 > 0.0)) return -kInf;
  const double nd = static_cast<double>(nobs);
  return -0.5 * (nd * (kLog2Pi + log64(sigma2)) + f.sumlogf + f.ssq / sigma2);
}

double loglike_concentrated(const Spec& s, const Vec& params, const Vec& y, const Vec& z, double* sigma2) {
  int64_t nobs = 0;
  FilterOut f = filter_at(s, params, y, z, nullptr, nobs);
  const double nd = static_cast<double>(nobs);
  const double s2 = f.ok ? f.ssq / nd : 0.0;
  if (sigma2) *sigma2 = s2;
  if (!f.ok || !(s2 > 0.0)) return -kInf;
  return -0.5 * (nd * (kLog2Pi + 1.0 + log64(s2)) + f.sumlogf);
}

Vec constrain_stationary(const Vec& u) {
  const size_t n = u.size();
  Vec cur, prev;
  for (size_t k = 0; k < n; ++k) {
    const double r = u[k] / std::sqrt(1.0 + u[k] * u[k]);
    prev = cur;
    cur.assign(k + 1, 0.0);
    for (size_t i = 0; i < k; ++i) cur[i] = prev[i] - r * prev[k - 1 - i];
    cur[k] = r;
  }
  return cur;
}

bool unconstrain_stationary(const Vec& coef, Vec& u) {
  const size_t n = coef.size();
  u.assign(n, 0.0);
  Vec cur = coef;
  for (size_t k = n; k-- > 0;) {
    const double r = cur[k];
    if (!(std::fabs(r) < 1.0)) return false;
    const double den = 1.0 - r * r;
    u[k] = r / std::sqrt(den);
    Vec prev(k);
    for (size_t i = 0; i < k; ++i) prev[i] = (cur[i] + r * cur[k - 1 - i]) / den;
    cur = prev;
  }
  return true;
}

FitResult fit(const Spec& s, const Vec& y, const Vec& x, int64_t max_iter, double tol, const std::string& est) {
  const int64_t n = static_cast<int64_t>(y.size()), kr = s.k_reg();
  check_spec(s, n, est);
  const Vec z = design(s, x, n, 0);
  // Scales: y by the root mean square of its deviations from the mean, each regressor by its own.
  double mean = 0.0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(n);
  double ss = 0.0;
  for (double v : y) ss += (v - mean) * (v - mean);
  double ys = std::sqrt(ss / static_cast<double>(n));
  if (!(ys > 0.0)) ys = 1.0;
  Vec zs(static_cast<size_t>(kr), 1.0);
  for (int64_t j = 0; j < kr; ++j) {
    double q = 0.0;
    for (int64_t i = 0; i < n; ++i) q += z[i * kr + j] * z[i * kr + j];
    q = std::sqrt(q / static_cast<double>(n));
    if (q > 0.0) zs[j] = q;
  }
  Vec y1(y.size()), z1(z.size());
  for (int64_t i = 0; i < n; ++i) {
    y1[i] = y[i] / ys;
    for (int64_t j = 0; j < kr; ++j) z1[i * kr + j] = z[i * kr + j] / zs[j];
  }
  // Start: least squares on the differenced data, then Hannan-Rissanen on the differenced residuals.
  Vec x0(static_cast<size_t>(s.k_params()), 0.0);
  if (kr > 0) {
    const Vec dy = difference(s, y1);
    const int64_t rows = static_cast<int64_t>(dy.size());
    Vec dz(static_cast<size_t>(rows * kr)), col(static_cast<size_t>(n)), b;
    for (int64_t j = 0; j < kr; ++j) {
      for (int64_t i = 0; i < n; ++i) col[i] = z1[i * kr + j];
      const Vec dc = difference(s, col);
      for (int64_t i = 0; i < rows; ++i) dz[i * kr + j] = dc[i];
    }
    if (least_squares(dz, rows, kr, dy, b))
      for (int64_t j = 0; j < kr; ++j) x0[j] = b[j];
  }
  {
    const Vec w = difference(s, residual_series(s, x0, y1, z1));
    const Vec c = arma_start(s, w);
    const Offsets o = offsets(s);
    auto put = [&](int64_t at, int64_t from, int64_t len, bool enforce, double sign) {
      const Vec u = start_block(Vec(c.begin() + from, c.begin() + from + len), enforce, sign);
      for (int64_t i = 0; i < len; ++i) x0[at + i] = u[i];
    };
    put(o.ar, 0, s.p, s.enforce_stationarity, 1.0);
    put(o.ma, s.p, s.q, s.enforce_invertibility, -1.0);
    put(o.sar, s.p + s.q, s.P, s.enforce_stationarity, 1.0);
    put(o.sma, s.p + s.q + s.P, s.Q, s.enforce_invertibility, -1.0);
    // A start outside the stationary region (possible without the transform) falls back to zeros.
    double s2 = 0.0;
    if (!std::isfinite(loglike_concentrated(s, to_params(s, x0), y1, z1, &s2)))
      for (int64_t i = o.ar; i < o.end; ++i) x0[i] = 0.0;
  }
  const double nobs = static_cast<double>(n - s.k_diff());
  auto objective = [&](const Vec& xv) {
    const double l = loglike_concentrated(s, to_params(s, xv), y1, z1, nullptr);
    return std::isfinite(l) ? -l / nobs : kInf;
  };
  const Vec lo(x0.size(), -kInf), hi(x0.size(), kInf);
  ts::BoxMinResult m = ts::minimize_box64(objective, x0, lo, hi, max_iter, 1e-15, tol);
  if (m.n_iter >= max_iter) warn_not_converged(est + " L-BFGS", max_iter);
  FitResult r;
  r.params = to_params(s, m.x);
  for (int64_t j = 0; j < kr; ++j) r.params[j] = r.params[j] * ys / zs[j];
  r.llf = loglike_concentrated(s, r.params, y, z, &r.sigma2);
  BL_CHECK(std::isfinite(r.llf) && r.sigma2 > 0.0, est, ": the likelihood is not finite at the fitted parameters");
  r.n_iter = m.n_iter;
  return r;
}

Vec predict_in_sample(const Spec& s, const Vec& params, const Vec& y, const Vec& x) {
  const int64_t n = static_cast<int64_t>(y.size()), K = s.k_diff(), kr = s.k_reg();
  const Vec z = design(s, x, n, 0);
  const Vec u = residual_series(s, params, y, z);
  Vec ar, ma, pred;
  full_polynomials(s, params, ar, ma);
  FilterOut f = kalman_filter(ar, ma, difference(s, u), &pred);
  BL_CHECK(f.ok, "arima: the model's ARMA part is not stationary");
  const Vec c = diff_poly(s);
  Vec out(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    double v = 0.0;
    for (int64_t j = 0; j < kr; ++j) v += z[t * kr + j] * params[j];
    if (t >= K) {
      double uh = pred[t - K];
      for (int64_t k = 1; k <= K; ++k) uh -= c[k] * u[t - k];
      v += uh;
    }
    out[t] = v;
  }
  return out;
}

void forecast(const Spec& s, const Vec& params, double sigma2, const Vec& y, const Vec& x, const Vec& x_future,
              int64_t steps, Vec& mean, Vec& var) {
  const int64_t n = static_cast<int64_t>(y.size()), K = s.k_diff(), kr = s.k_reg();
  const Vec z = design(s, x, n, 0);
  const Vec u = residual_series(s, params, y, z);
  Vec ar, ma;
  full_polynomials(s, params, ar, ma);
  FilterOut f = kalman_filter(ar, ma, difference(s, u), nullptr);
  BL_CHECK(f.ok, "arima: the model's ARMA part is not stationary");
  const int64_t m = state_dim(ar, ma), M = m + K;
  Vec phi, r;
  companion(ar, ma, m, phi, r);
  const Vec c = diff_poly(s);
  // Observation row of the augmented state and its transition.
  Vec zrow(static_cast<size_t>(M), 0.0), T(static_cast<size_t>(M * M), 0.0), RR(static_cast<size_t>(M * M), 0.0);
  zrow[0] = 1.0;
  for (int64_t k = 1; k <= K; ++k) zrow[m + k - 1] = -c[k];
  for (int64_t i = 0; i < m; ++i) {
    T[i * M] = phi[i];
    if (i + 1 < m) T[i * M + i + 1] = 1.0;
    for (int64_t j = 0; j < m; ++j) RR[i * M + j] = r[i] * r[j];
  }
  if (K > 0) {
    for (int64_t j = 0; j < M; ++j) T[m * M + j] = zrow[j];
    for (int64_t k = 1; k < K; ++k) T[(m + k) * M + m + k - 1] = 1.0;
  }
  Vec a(static_cast<size_t>(M), 0.0), P(static_cast<size_t>(M * M), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    a[i] = f.a_next[i];
    for (int64_t j = 0; j < m; ++j) P[i * M + j] = f.P_next[i * m + j];
  }
  for (int64_t k = 1; k <= K; ++k) a[m + k - 1] = u[n - k];
  const Vec zf = design(s, x_future, steps, n);
  mean.assign(static_cast<size_t>(steps), 0.0);
  var.assign(static_cast<size_t>(steps), 0.0);
  for (int64_t h = 0; h < steps; ++h) {
    double mu = dot(zrow, a), v = 0.0;
    for (int64_t i = 0; i < M; ++i) {
      double row = 0.0;
      for (int64_t j = 0; j < M; ++j) row += P[i * M + j] * zrow[j];
      v += zrow[i] * row;
    }
    for (int64_t j = 0; j < kr; ++j) mu += zf[h * kr + j] * params[j];
    mean[h] = mu;
    var[h] = sigma2 * v;
    Vec an(static_cast<size_t>(M), 0.0);
    for (int64_t i = 0; i < M; ++i) {
      double t = 0.0;
      for (int64_t j = 0; j < M; ++j) t += T[i * M + j] * a[j];
      an[i] = t;
    }
    a = an;
    P = sandwich(T, P, M);
    for (size_t k = 0; k < P.size(); ++k) P[k] += RR[k];
  }
}

}  // namespace bl::ml::arima
