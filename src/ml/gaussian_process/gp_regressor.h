// gp_regressor.h: the gaussian process family (gp_regressor.cpp); kernel expressions in
// gp_kernel_expr.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "ml/gaussian_process/gp_kernel_expr.h"
#include "ml/linear/common.h"

namespace bl::ml {

namespace gp {

// Host binary64 pieces shared by the gaussian process estimators (gp_regressor.cpp): matrices are
// row-major n x n, every loop in a fixed order.
// Lower Cholesky factor of A; false at a pivot that is not positive.
bool cholesky64(const std::vector<double>& A, int64_t n, std::vector<double>& L);
// Solve L x = b (forward) and L^T x = b (backward) in place.
void forward(const std::vector<double>& L, int64_t n, std::vector<double>& x);
void backward(const std::vector<double>& L, int64_t n, std::vector<double>& x);
// (L L^T)^-1 = L^-T L^-1 from the factor L (symmetric, both halves written).
std::vector<double> cholesky_inverse(const std::vector<double>& L, int64_t n);
// binary64 arrays in model files (hex of the bits); reading checks the length and names est.
std::string f64_to_hex(const std::vector<double>& v);
std::vector<double> f64_from_hex(const nlohmann::json& state, const std::string& key, int64_t n, const std::string& est);

// The n x n kernel matrices are factorized on the host: at most kMaxRows training rows.
constexpr int64_t kMaxRows = int64_t{1} << 13;
// X and y checked for fit (check_Xy, at most kMaxRows rows).
void check_fit_rows(const std::string& est, const Tensor& X, const Tensor& y);
// n_features (d) and n_samples (n) of a model state: n at most kMaxRows, n x d at most 2^40.
void load_shape(const nlohmann::json& state, const std::string& est, int64_t& n, int64_t& d);

// The log marginal likelihood of a kernel at its current values, and (want_grad) its gradient in
// log(theta) of the free hyper-parameters in free_hypers order; false where it is not defined (a
// matrix that is not positive definite).
using LmlFunction = std::function<bool(const KernelExpr& k, bool want_grad, double& lml, std::vector<double>& grad)>;
// Sets the kernel's free hyper-parameters to the best L-BFGS run of the restart schedule described
// in gp_regressor.cpp (start 0: the kernel's values; restarts from Philox under seed).
void maximize_lml(KernelExpr& kernel, const LmlFunction& lml, int64_t n_restarts, uint64_t seed);

// fn(i, k, diag) for every row i of X* [m, d]: k = kernel(X*_i, X_train) (n values), diag =
// kernel(X*_i, X*_i) when want_diag (else 0); kernel rows in blocks of at most 2^22 values.
void for_each_kernel_row(const KernelExpr& kernel, const float* xs, int64_t m, const float* x_train, int64_t n,
                         int64_t d, bool want_diag, const std::function<void(int64_t, const double*, double)>& fn);

// The parameters of the gaussian process estimators: the ParamSet's, plus "kernel" (an expression
// text, checked by check_kernel when set).
class KernelParamEstimator : public lin::ParamEstimator {
 public:
  using lin::ParamEstimator::ParamEstimator;
  Params get_params() const override;
  void set_params(const Params& p) override;

 protected:
  virtual void check_kernel(const std::string& text) const { parse_kernel(text); }
  std::string kernel_param_ = "none";
};

}  // namespace gp

// The predictive standard deviation of a fitted gaussian_process_regressor at the rows of X (f32
// [m] on X's device); any other estimator is a bl::Error.
Tensor gaussian_process_predict_std(const Estimator& est, const Tensor& X);

}  // namespace bl::ml
