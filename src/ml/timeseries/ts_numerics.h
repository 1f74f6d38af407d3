// ts_numerics.h: binary64 host pieces shared by the time-series code of src/ml/timeseries/
// (exponential_smoothing.cpp, stattests.cpp): the series of a fit as host binary64 values, the
// standard normal CDF, x^e for x > 0, a box-bounded minimizer and a least-squares solve. Built on
// host_math.h's exp64 / log64 and sqrt only; every loop runs in a fixed order, so the bits are the
// same on every machine and thread count.
//
//   normal_cdf64(x) = Phi(x) = erfc(-x / sqrt 2) / 2, erfc(z) for z >= 0 from
//     e^{-z^2} (2 / sqrt(pi)) sum_k 2^k z^(2k+1) / (1 3 5 ... (2k+1)) (all terms positive; to a
//     relative term below 2^-60) as 1 - erf for z < 3, and from the continued fraction
//     e^{-z^2} / sqrt(pi) / (z + (1/2) / (z + 1 / (z + (3/2) / (z + ...)))) (80 levels, evaluated
//     from the bottom) from 3 up. Within about 1e-15 absolute.
//   pow_pos64(x, e) = e^(e ln x) for x > 0 (x itself when e == 1).
//   minimize_box64: projected L-BFGS in binary64 on lo <= x <= hi (either bound may be infinite),
//     central-difference gradients (step 6.06e-6 max(1, |x_i|), one-sided where a bound is nearer),
//     the variables at a bound whose gradient points outward held fixed, the two-loop direction of up
//     to 10 pairs (steepest descent when it is not a descent direction), projected Armijo
//     backtracking (c1 = 1e-4, halving, at most 60 times). Stops when the projected max |g| <= gtol,
//     when an iteration lowers f by at most ftol max(1, |f|), when the line search finds no decrease,
//     or after max_iter iterations. A non-finite f counts as +inf.
//   least_squares64(X, n, k, y): the least-squares coefficients of y [n] on X [n, k] (row-major) by
//     Householder QR, with (X^T X)^-1's diagonal and the residual sum of squares; false when a
//     column is (numerically) dependent on the ones before it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml::ts {

// y (1-d, any dtype convertible to f32 on the host) as binary64 values: every value finite, at
// least min_n of them; bl::Error naming est otherwise.
std::vector<double> series_of(const std::string& est, const Tensor& y, int64_t min_n);

// The arguments of Forecaster::forecast: steps >= 1 (and at most 1e7) and 0 < alpha < 1.
void check_forecast_args(const std::string& est, int64_t steps, double alpha);

double normal_cdf64(double x);
double pow_pos64(double x, double e);

struct BoxMinResult {
  std::vector<double> x;
  double f = 0.0;
  int64_t n_iter = 0;
};
BoxMinResult minimize_box64(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                            const std::vector<double>& lo, const std::vector<double>& hi, int64_t max_iter,
                            double ftol, double gtol);

struct LeastSquares {
  std::vector<double> coef;     // [k]
  std::vector<double> xtx_inv_diag;  // [k]: diagonal of (X^T X)^-1
  double ssr = 0.0;
};
bool least_squares64(const std::vector<double>& X, int64_t n, int64_t k, const std::vector<double>& y,
                     LeastSquares& out);

}  // namespace bl::ml::ts
