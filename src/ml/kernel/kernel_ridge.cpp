// kernel_ridge.cpp: kernel_ridge, ridge regression in the dual (scikit-learn's KernelRidge).
//
// Kernels: the pairwise kernel matrices of ml/kernel/kernels.h (linear, poly, sigmoid, rbf, laplacian).
// gamma = none is 1 / n_features rounded once to binary32, as scikit-learn's pairwise kernels.
//
// Fit: K = kernel(X, X) [n, n] is copied to the host, alpha (binary32) is added to its diagonal,
// and the dual coefficients solve (K + alpha I) c = y by the blocked Cholesky factor of
// ml/linear/cholesky.h (128-column panels factored on the host, the trailing updates by the contract
// GEMM on X's device), then the two triangular solves on the host. A pivot that is not positive, or
// below n * 2^-23 * max diagonal (numerically singular), is an error asking for a larger alpha. n is
// limited to 2^13 rows (the [n, n] matrix on the host).
// Predict: K(X, X_fit) @ c through the contract GEMM, in row blocks of X.
#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/kernel/kernels.h"
#include "ml/linear/cholesky.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr int64_t kMaxRows = int64_t{1} << 13;
constexpr int64_t kBlockElems = int64_t{1} << 24;

class KernelRidge final : public lin::ParamEstimator {
 public:
  KernelRidge()
      : lin::ParamEstimator("kernel_ridge",
                            {{"alpha", K::number, "1", 0.0},
                             {"coef0", K::number, "1"},
                             {"degree", K::integer, "3", 0},
                             {"gamma", K::number_or_word, "none", 0.0, {"none"}, true},  // none: 1 / n_features
                             {"kernel", K::choice, "linear", 0, {"linear", "poly", "rbf", "sigmoid", "laplacian"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n <= kMaxRows, name_, ": ", n, " rows would need a ", n, " x ", n,
             " kernel matrix factorized on the host; the limit is ", kMaxRows, " rows (subsample the data)");
    std::vector<float> yv = lin::y_to_host(y);
    KernelSpec spec = spec_for(d);
    const float alpha = static_cast<float>(params_.number("alpha"));
    Tensor Xc = X.contiguous();
    std::vector<float> A = kernel_matrix(Xc, Xc, spec).to(Device::cpu()).contiguous().to_vector<float>();
    for (int64_t i = 0; i < n * n; ++i)
      BL_CHECK(std::isfinite(A[i]), name_, ": the ", spec.kernel, " kernel matrix holds a non-finite value at (",
               i / n, ", ", i % n, "); lower gamma or degree, or scale X");
    float max_diag = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      A[i * n + i] = bl::add(A[i * n + i], alpha);
      max_diag = std::max(max_diag, A[i * n + i]);
    }
    std::vector<float> L;
    const bool ok = cholesky_factor_blocked(Tensor::from_vector(A, {n, n}, X.device()), L) < 0;
    // A pivot below n * 2^-23 * max diagonal is rounding noise: the matrix is singular.
    const double tol = static_cast<double>(n) * 0x1p-23 * static_cast<double>(max_diag);
    int64_t bad = -1;
    if (ok) {
      for (int64_t i = 0; i < n && bad < 0; ++i) {
        const double piv = static_cast<double>(L[i * n + i]) * static_cast<double>(L[i * n + i]);
        if (!(piv > tol)) bad = i;
      }
    }
    BL_CHECK(ok && bad < 0, name_, ": the kernel matrix plus alpha * I is not positive definite",
             ok ? " (numerically singular at pivot " + std::to_string(bad) + ")" : std::string(),
             " for kernel=", spec.kernel, ", alpha=", params_.text("alpha"),
             "; raise alpha (alpha > 0 keeps it positive definite for the linear, rbf, poly and laplacian kernels)");
    dual_ = cholesky_solve_factored(L, n, yv);
    x_fit_ = Xc.to(Device::cpu()).contiguous().to_vector<float>();
    n_ = n;
    d_ = d;
    gamma_ = spec.gamma;
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    const Device dev = X.device();
    KernelSpec spec = spec_for(d_);
    spec.gamma = gamma_;
    Tensor F = Tensor::from_vector(x_fit_, {n_, d_}, dev);
    Tensor c = Tensor::from_vector(dual_, {n_, 1}, dev);
    const int64_t m = X.dim(0);
    const int64_t rows = std::max<int64_t>(1, kBlockElems / n_);
    std::vector<Tensor> parts;
    for_row_blocks("kernel_ridge predict", m, rows, [&](int64_t s, int64_t e) {
      Tensor Xb = X.slice(0, s, e).contiguous();
      parts.push_back(bl::matmul(kernel_matrix(Xb, F, spec), c).reshape({e - s}));
    });
    return parts.size() == 1 ? parts[0] : bl::concat(parts, 0);
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}});
    lin::put_f32s(state, {{"gamma", {gamma_}}, {"X_fit", x_fit_}, {"dual_coef", dual_}});
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(n_ <= kMaxRows && d_ <= (int64_t{1} << 40) / n_, name_,
             ": model state: n_samples x n_features is too large");
    gamma_ = lin::get_f32(state, "gamma", 1, name_)[0];
    x_fit_ = lin::get_f32(state, "X_fit", n_ * d_, name_);
    dual_ = lin::get_f32(state, "dual_coef", n_, name_);
    fitted_ = true;
  }

 private:
  KernelSpec spec_for(int64_t d) const {
    KernelSpec s;
    s.kernel = params_.text("kernel");
    s.gamma = params_.text("gamma") == "none" ? bl::div(1.0f, static_cast<float>(d))
                                              : static_cast<float>(params_.number("gamma"));
    s.coef0 = static_cast<float>(params_.number("coef0"));
    s.degree = params_.integer("degree");
    BL_CHECK(s.degree <= 64, name_, ": degree=", s.degree, " is too large (at most 64)");
    return s;
  }

  std::vector<float> x_fit_, dual_;
  float gamma_ = 1.0f;
  int64_t n_ = 0, d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_kernel_ridge() { return std::make_unique<KernelRidge>(); }

}  // namespace bl::ml
