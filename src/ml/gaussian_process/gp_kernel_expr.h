// gp_kernel_expr.h: the kernel expressions of gaussian_process_regressor in scikit-learn's notation
// (parser, printer, hyper-parameters and evaluation in binary64 on the host); formulas and operation
// order in gp_kernel_expr.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ml/host_math.h"

namespace bl::ml::gp {

// One hyper-parameter: its value, its bounds (scikit-learn's, in the value's units) and whether it
// is fixed (bounds "fixed").
struct Hyper {
  std::string name;
  double value = 1.0;
  double lo = 1e-5, hi = 1e5;
  bool fixed = false;
};

// A kernel expression tree. Leaves: constant (ConstantKernel or a bare number), rbf, matern (nu 0.5,
// 1.5 or 2.5), rational_quadratic, dot_product, white; inner nodes sum / product of kids[0], kids[1].
struct KernelExpr {
  enum class Op { constant, rbf, matern, rational_quadratic, dot_product, white, sum, product };
  Op op = Op::constant;
  double nu = 1.5;
  std::vector<Hyper> hp;  // a leaf's hyper-parameters in scikit-learn's theta order (sorted by name)
  std::vector<KernelExpr> kids;
};

// Parses `text`; a malformed expression is a bl::Error naming the position and what was expected.
// "none" is the kernel scikit-learn 1.9 fits for kernel=None: ConstantKernel(1) * RBF(1), default
// bounds (the fixed version is only its prior for predict before fit).
KernelExpr parse_kernel(const std::string& text);

// The expression in the parser's notation, every value with 17 significant digits (parses back to
// the same tree and values).
std::string kernel_text(const KernelExpr& k);

// The free (not fixed) hyper-parameters, leaves from left to right.
std::vector<Hyper*> free_hypers(KernelExpr& k);
bool uses_dot_product(const KernelExpr& k);

// Pairwise inputs of rows A [a, d] against rows B [b, d] (binary64 widened from binary32):
// d2 = sum_f (A_if - B_jf)^2 and dot = sum_f A_if B_jf, each in feature order; `same` when B is A
// (the white kernel contributes only then).
struct PairData {
  std::vector<double> d2, dot;
  int64_t a = 0, b = 0;
  bool same = false;
};
PairData pair_data(const float* A, int64_t a, const float* B, int64_t b, int64_t d, bool need_dot, bool same);

// K [a, b] of the expression; with grads, also dK / d log(theta) of each free hyper-parameter in
// free_hypers order.
void evaluate(const KernelExpr& k, const PairData& p, std::vector<double>& K, std::vector<std::vector<double>>* grads);

// diag K(X, X) for rows X [m, d] (the white kernel included, as scikit-learn's diag).
std::vector<double> kernel_diag(const KernelExpr& k, const float* X, int64_t m, int64_t d);

// exp64 / log64 (binary64, the same bits on every machine) come from ml/host_math.h: binary32 exp
// would leave kernel matrices with alpha = 1e-10 indefinite.
using ml::exp64;
using ml::log64;

}  // namespace bl::ml::gp
