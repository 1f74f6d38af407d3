// host_numerics.h: binary64 host pieces of the distribution-shaping transformers
// (quantile_transformer.cpp, power_transformer.cpp): functions built on host_math.h's exp64 / log64
// only (no C library transcendental function), numpy's linear percentile of a sorted column, a
// bounded 1-D minimizer, and the host column layout. Every loop runs in a fixed order, so the bits
// are the same on every machine and thread count.
//
//   log1p64(x) = ln(1 + x): u = 1 + x; x where u == 1, else log64(u) x / (u - 1) (the rounding of
//     1 + x cancels to first order).
//   expm1_64(y) = e^y - 1: |y| < 1/2 by its Taylor polynomial to y^15 / 15! (the binary64
//     reciprocal factorials, Estrin's scheme in a fixed order); up to |y| < 700, y = k ln2 + r with
//     k = floor(y / ln2 + 1/2) (ln2 in two parts, the first with 32 significant bits),
//     2^k (1 + (r's polynomial)) - 1
//     with 2^k built from its exponent bits (|e^y / (e^y - 1)| <= 2.6 there); beyond, exp64(y) - 1.
//     Within a few ulps; about 4 times faster than exp64 (the power transformer's likelihood
//     evaluates it once per value per lambda).
//   normal_quantile64(p): the standard normal quantile (inverse CDF) by Wichura's rational
//     approximations (Applied Statistics algorithm AS 241, PPND16, relative error about 1e-16):
//     |p - 1/2| <= 0.425 by a ratio of degree-7 polynomials in 0.180625 - (p - 1/2)^2, else in
//     r = sqrt(-ln min(p, 1 - p)) - 1.6 (r <= 5) or - 5 (beyond); -inf at 0, +inf at 1, NaN outside.
//   sorted_percentile(v, q): numpy's percentile (method "linear") of the ascending values v at
//     q in [0, 100]: virtual index (n - 1) (q / 100); a + (b - a) t for t < 0.5, b - (b - a)(1 - t)
//     from it, between the values below and above (the last value from index n - 1 on).
//   minimize_bounded(f, lo, hi, xtol): Brent's minimization on [lo, hi] (golden-section steps, a
//     parabolic step where it falls inside and shrinks enough); stops when the bracket is within
//     2 (sqrt(2^-52) |x| + xtol / 3) of x or after 500 evaluations. A non-finite f(x) counts as +inf.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml::prep {

double log1p64(double x);
double expm1_64(double y);
double normal_quantile64(double p);
double sorted_percentile(const std::vector<double>& v, double q);
// numpy's linspace(a, b, num), endpoint included: a + k (b - a) / (num - 1), the last value b itself
// ({a} for num = 1, empty for num = 0).
std::vector<double> linspace64(double a, double b, int64_t num);
double minimize_bounded(const std::function<double(double)>& f, double lo, double hi, double xtol);

// X for the imputers: NaN marks a missing value, an infinity is refused naming its row and column.
void check_no_infinity(const std::string& est, const Tensor& X);

// X [n, d] (f32) as d host columns of binary64 values (column j: the n values of X[:, j]).
std::vector<std::vector<double>> host_columns(const Tensor& X);
// d host columns of n binary64 values rounded once to binary32, as an [n, d] tensor on `device`.
Tensor tensor_from_columns(const std::vector<std::vector<double>>& cols, int64_t n, Device device);

// A binary64 state field (written by density_detail::f64_to_hex) read back with its length checked
// and every value finite.
std::vector<double> get_finite_f64(const nlohmann::json& state, const std::string& key, int64_t size,
                                   const std::string& est);

}  // namespace bl::ml::prep
