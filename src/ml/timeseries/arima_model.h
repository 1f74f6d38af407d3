// arima_model.h: the binary64 host mathematics of the arima and sarimax estimators (arima.cpp):
// the seasonal ARMA model in state-space form, its exact Gaussian log-likelihood by the Kalman
// filter, the stationarity / invertibility reparameterization, starting values, the maximum
// likelihood fit and the forecasts. Every loop runs in a fixed order with add, sub, mul, div, sqrt
// and the exp64 / log64 of ml/host_math.h only, so every result is a pure function of its inputs.
//
// Model (regression with seasonal ARIMA errors, statsmodels' SARIMAX / ARIMA with mle_regression):
//   y_t = z_t' beta + u_t,  delta(B) u_t = w_t,  phi(B) Phi(B^s) w_t = theta(B) Theta(B^s) e_t,
//   e_t ~ N(0, sigma2), delta(B) = (1 - B)^d (1 - B^s)^D, z_t = [trend terms, exogenous x_t].
// Trend terms (before the exogenous columns): 'c' -> 1, 't' -> t, 'ct' -> 1, t, with t = 1 .. n
// (the row number counted from 1; forecasts continue it). The differencing is explicit (statsmodels'
// simple_differencing=True): the likelihood is that of the n - d - D s differenced values w, given
// the first d + D s observations. A trend term of order below d + D vanishes under differencing and
// is refused.
// Parameter vector (statsmodels' order): [trend, exog, ar 1..p, ma 1..q, seasonal ar 1..P,
// seasonal ma 1..Q]; sigma2 apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl::ml::arima {

struct Spec {
  int64_t p = 0, d = 0, q = 0;
  int64_t P = 0, D = 0, Q = 0, s = 0;  // seasonal order; s = 0 (or P = D = Q = 0): none
  std::string trend = "n";             // n, c, t or ct
  int64_t k_exog = 0;
  bool enforce_stationarity = true, enforce_invertibility = true;

  int64_t k_trend() const { return trend == "ct" ? 2 : trend == "n" ? 0 : 1; }
  int64_t k_reg() const { return k_trend() + k_exog; }
  int64_t k_arma() const { return p + q + P + Q; }
  int64_t k_params() const { return k_reg() + k_arma(); }  // without sigma2
  int64_t k_diff() const { return d + D * s; }             // observations lost to differencing
};

// Throws bl::Error naming `est` when the orders, trend and series length n do not fit together.
void check_spec(const Spec& spec, int64_t n, const std::string& est);

// The coefficients c_0 = 1, c_1 .. c_K of delta(B) = sum c_k B^k (K = d + D s).
std::vector<double> diff_poly(const Spec& spec);

// The full polynomials of the multiplicative model: ar[i - 1] is the coefficient of w_{t-i} on the
// right-hand side (w_t = sum ar_i w_{t-i} + ...), ma[j - 1] that of e_{t-j}.
void full_polynomials(const Spec& spec, const std::vector<double>& params, std::vector<double>& ar,
                      std::vector<double>& ma);

// The stationary covariance P = T P T' + R R' of the ARMA state (companion form of ar, R = [1, ma]),
// m x m row-major with m = max(len ar, len ma + 1), by doubling; false when ar is not stationary.
bool stationary_covariance(const std::vector<double>& ar, const std::vector<double>& ma, std::vector<double>& P);

// The Kalman filter of the zero-mean ARMA w at unit innovation variance from the stationary state:
// sum v_t^2 / F_t, sum log F_t, each one-step prediction of w (pred, when not null), and the state
// mean and covariance predicted for the step after the last (a_next, P_next, when not null).
struct FilterOut {
  bool ok = false;
  double ssq = 0.0, sumlogf = 0.0;
  std::vector<double> a_next, P_next;
};
FilterOut kalman_filter(const std::vector<double>& ar, const std::vector<double>& ma, const std::vector<double>& w,
                        std::vector<double>* pred);

// The regressors [n, k_reg] of rows first_row .. first_row + n - 1 (trend columns from the row number,
// then the exogenous x [n, k_exog] row-major).
std::vector<double> design(const Spec& spec, const std::vector<double>& x, int64_t n, int64_t first_row);
// u = y - design beta, and w = delta(B) u (n - K values).
std::vector<double> residual_series(const Spec& spec, const std::vector<double>& params, const std::vector<double>& y,
                                    const std::vector<double>& z);
std::vector<double> difference(const Spec& spec, const std::vector<double>& u);

// The exact log-likelihood at the parameters with sigma2 given (statsmodels' llf at the same
// parameters), and with sigma2 concentrated out (sigma2 = sum v^2 / F / nobs, written to *sigma2).
// -inf when the ARMA part is not stationary.
double loglike(const Spec& spec, const std::vector<double>& params, double sigma2, const std::vector<double>& y,
               const std::vector<double>& z);
double loglike_concentrated(const Spec& spec, const std::vector<double>& params, const std::vector<double>& y,
                            const std::vector<double>& z, double* sigma2);

// The Monahan / Jones map of unconstrained reals to the coefficients of a stationary AR polynomial
// (partial autocorrelations r_k = u_k / sqrt(1 + u_k^2), then the Durbin-Levinson recursion), and
// its inverse (false when the coefficients are not stationary).
std::vector<double> constrain_stationary(const std::vector<double>& u);
bool unconstrain_stationary(const std::vector<double>& coef, std::vector<double>& u);

struct FitResult {
  std::vector<double> params;
  double sigma2 = 0.0, llf = 0.0;
  int64_t n_iter = 0;
};
// Maximum likelihood: starting values by Hannan-Rissanen, then the binary64 L-BFGS of ts_numerics.h
// (ts::minimize_box64, unbounded; gtol = tol, ftol = 1e-15) on minus the concentrated
// log-likelihood per observation of the scaled problem (y and each regressor divided by its root
// mean square) in the unconstrained parameters. Warns (warn_not_converged) when it reaches max_iter.
FitResult fit(const Spec& spec, const std::vector<double>& y, const std::vector<double>& x, int64_t max_iter,
              double tol, const std::string& est);

// In-sample one-step predictions of y (the regression part alone for the first K rows).
std::vector<double> predict_in_sample(const Spec& spec, const std::vector<double>& params, const std::vector<double>& y,
                                      const std::vector<double>& x);

// The point forecasts of the `steps` values after y and their variances (sigma2 times the Kalman
// forecast variance of the differenced state, integrated).
void forecast(const Spec& spec, const std::vector<double>& params, double sigma2, const std::vector<double>& y,
              const std::vector<double>& x, const std::vector<double>& x_future, int64_t steps,
              std::vector<double>& mean, std::vector<double>& var);

}  // namespace bl::ml::arima
