// stattests.h: the classical statistics of one series, as statsmodels.tsa.stattools computes them
// (acf, pacf, adfuller, kpss), in binary64 on the host (ts_numerics.h: fixed order, host_math.h only).
//
//   acf(x, nlags, adjusted): the autocorrelations r_0 .. r_nlags of the demeaned series,
//     acov_k = sum_{t >= k} x_t x_{t-k} / n (/ (n - k) when adjusted), r_k = acov_k / acov_0;
//     nlags < 0: min(floor(10 log10 n), n - 1).
//   pacf(x, nlags, method): partial autocorrelations 1, phi_11 .. phi_kk by Yule-Walker on the
//     demeaned series, "ywadjusted" (statsmodels' default: autocovariances over n - k) or "ywmle"
//     (over n); phi_kk from the Levinson-Durbin recursion. nlags < 0: min(floor(10 log10 n), n/2 - 1)
//     (at least 1); nlags > n / 2 is refused.
//   adfuller(x, maxlag, regression, autolag): the augmented Dickey-Fuller test. maxlag < 0:
//     ceil(12 (n / 100)^(1/4)) capped at n/2 - ntrend - 1. The regression of diff(x)_t on x_t,
//     diff(x)_{t-1..t-p} and the deterministic terms (regression "c": constant, "ct": + trend,
//     "ctt": + trend^2, "n": none); autolag "aic" / "bic" picks p in 0..maxlag on the common sample
//     (the smallest criterion, ties to the smaller p), "none" uses maxlag. statistic: the t value of
//     x_t's coefficient (Householder least squares); p-value: MacKinnon's (1994) approximation
//     Phi(polynomial in the statistic) with his published coefficients; critical values at 1, 5, 10 %:
//     MacKinnon's (2010) response surfaces in 1 / nobs.
//   kpss(x, regression, nlags): the KPSS stationarity test on the residuals of x on a constant ("c")
//     or a constant and trend ("ct"); nlags < 0 is "auto" (Hobijn et al.'s rule, as statsmodels:
//     int(1.1447 (s1 / s0)^(2/3) n^(1/3)) from int(n^(2/9)) autocovariances), nlags = -2 "legacy"
//     (ceil(12 (n / 100)^(1/4))); both capped at n - 1. statistic: sum of squared partial sums / n^2
//     over the Bartlett-weighted long-run variance; p-value: linear interpolation in the KPSS (1992)
//     table (10, 5, 2.5, 1 %), clamped to [0.01, 0.1] outside it.
// Bad input (a series too short for the lags, constant or non-finite) throws bl::Error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl::ml::ts {

std::vector<double> acf(const std::vector<double>& x, int64_t nlags = -1, bool adjusted = false);
std::vector<double> pacf(const std::vector<double>& x, int64_t nlags = -1, const std::string& method = "ywadjusted");

struct AdfResult {
  double statistic = 0.0, pvalue = 0.0;
  int64_t used_lag = 0, nobs = 0;
  double crit[3] = {0, 0, 0};  // 1 %, 5 %, 10 %
  double icbest = 0.0;         // the best criterion (NaN without autolag)
};
AdfResult adfuller(const std::vector<double>& x, int64_t maxlag = -1, const std::string& regression = "c",
                   const std::string& autolag = "aic");

struct KpssResult {
  double statistic = 0.0, pvalue = 0.0;
  int64_t lags = 0;
  double crit[4] = {0, 0, 0, 0};  // 10 %, 5 %, 2.5 %, 1 %
};
KpssResult kpss(const std::vector<double>& x, const std::string& regression = "c", int64_t nlags = -1);

// MacKinnon's approximate p-value of an ADF statistic (one variable) for regression c / ct / ctt / n.
double mackinnon_p(double stat, const std::string& regression);

}  // namespace bl::ml::ts
