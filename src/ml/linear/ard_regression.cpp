// ard_regression.cpp: Bayesian automatic relevance determination regression, as scikit-learn's
// ARDRegression (one precision lambda_j per weight, noise precision alpha).
//
// With centered Xc, yc (fit_intercept), G = Xc^T Xc and b = Xc^T yc (contract GEMMs), starting from
// alpha = 1 / (var(y) + 2^-23), lambda = 1, every feature kept, each iteration computes over the kept
// set K (lambda_j < threshold_lambda):
//   Sigma = (diag(lambda_K) + alpha G_KK)^-1 (Cholesky, columns of the identity),  w_K = alpha Sigma b_K
//   rmse = sum (yc - Xc w)^2 (ops on X's device),  gamma_j = 1 - lambda_j Sigma_jj
//   lambda_j = (gamma_j + 2 lambda_1) / (w_j^2 + 2 lambda_2),
//   alpha = (n - sum gamma + 2 alpha_1) / (rmse + 2 alpha_2)
// then drops features whose lambda reached threshold_lambda (w_j = 0), and stops when
// sum |w - w_old| < tol (after the first iteration), nothing is kept, or after max_iter; w is then
// recomputed with the last alpha and lambda. Host arithmetic is binary32 in index order.
#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/centered_problem.h"
#include "ml/linear/cholesky.h"
#include "ml/linear/linear_base.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using Vec = std::vector<float>;

class ArdRegression final : public LinearModelBase {
 public:
  ArdRegression()
      : LinearModelBase("ard_regression", lin::evidence_prior_specs({{"threshold_lambda", K::number, "1e+04", 0.0}})) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    Tensor yf;
    const lin::CenteredProblem cp = lin::check_and_center(name_, X, y, params_.boolean("fit_intercept"), &yf);
    const int64_t n = X.dim(0), d = X.dim(1);
    const Vec& G = cp.gram;
    const Vec& b = cp.xty;
    const float a1 = static_cast<float>(params_.number("alpha_1")), a2 = static_cast<float>(params_.number("alpha_2"));
    const float l1 = static_cast<float>(params_.number("lambda_1")), l2 = static_cast<float>(params_.number("lambda_2"));
    const float tol = static_cast<float>(params_.number("tol"));
    const float threshold = static_cast<float>(params_.number("threshold_lambda"));
    const int64_t max_iter = params_.integer("max_iter");
    float alpha = bl::div(1.0f, bl::add(static_cast<float>(bl::var(yf).item()), 0x1p-23f));
    Vec lambda(static_cast<size_t>(d), 1.0f);
    std::vector<bool> keep(static_cast<size_t>(d), true);
    Vec w(static_cast<size_t>(d), 0.0f), sigma_diag(static_cast<size_t>(d), 0.0f);

    // w over the kept set (and Sigma's diagonal) for the current alpha, lambda.
    auto update_coef = [&]() {
      std::vector<int64_t> idx;
      for (int64_t j = 0; j < d; ++j)
        if (keep[j]) idx.push_back(j);
      const int64_t k = static_cast<int64_t>(idx.size());
      std::fill(w.begin(), w.end(), 0.0f);
      if (k == 0) return;
      Vec A(static_cast<size_t>(k * k));
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) A[i * k + j] = bl::mul(alpha, G[idx[i] * d + idx[j]]);
      for (int64_t i = 0; i < k; ++i) A[i * k + i] = bl::add(A[i * k + i], lambda[idx[i]]);
      Vec L;
      BL_CHECK(cholesky_factor(A, k, L), name_, ": the posterior precision is not positive definite");
      Vec rhs(static_cast<size_t>(k));
      for (int64_t i = 0; i < k; ++i) rhs[i] = bl::mul(alpha, b[idx[i]]);
      Vec wk = cholesky_solve_factored(L, k, rhs);
      for (int64_t i = 0; i < k; ++i) {
        w[idx[i]] = wk[i];
        Vec e(static_cast<size_t>(k), 0.0f);
        e[i] = 1.0f;
        sigma_diag[idx[i]] = cholesky_solve_factored(L, k, e)[i];
      }
    };

    Vec w_old;
    int64_t iters = 0;
    bool converged = false;  // left by a stopping rule, not by the iteration limit
    for (int64_t it = 0; it < max_iter; ++it) {
      update_coef();
      const float rmse = lin::residual_sum_squares(cp, w);
      float gamma_sum = 0.0f;
      for (int64_t j = 0; j < d; ++j) {
        if (!keep[j]) continue;
        float gamma = bl::sub(1.0f, bl::mul(lambda[j], sigma_diag[j]));
        lambda[j] = bl::div(bl::fma(2.0f, l1, gamma), bl::fma(w[j], w[j], bl::mul(2.0f, l2)));
        gamma_sum = bl::add(gamma_sum, gamma);
      }
      alpha = bl::div(bl::fma(2.0f, a1, bl::sub(static_cast<float>(n), gamma_sum)), bl::fma(2.0f, a2, rmse));
      bool any = false;
      for (int64_t j = 0; j < d; ++j) {
        keep[j] = lambda[j] < threshold;
        if (!keep[j]) w[j] = 0.0f;
        any = any || keep[j];
      }
      iters = it + 1;
      report_progress("ard_regression", it + 1, max_iter);
      if (it > 0) {
        if (lin::sum_abs_change(w_old, w) < tol) {
          converged = true;
          break;
        }
      }
      w_old = w;
      if (!any) {
        converged = true;
        break;
      }
    }
    report_progress("ard_regression", max_iter, max_iter);
    if (!converged) warn_not_converged("ard_regression", max_iter);
    update_coef();
    const float icpt = lin::centered_intercept(cp, w);
    alpha_ = alpha;
    lambda_ = lambda;
    set_fit(w, icpt, iters);
    return *this;
  }

 protected:
  void save_extra(nlohmann::json& state) const override {
    lin::put_f32s(state, {{"alpha", {alpha_}}, {"lambda", lambda_}});
  }
  void load_extra(const nlohmann::json& state) override {
    alpha_ = lin::get_f32(state, "alpha", 1, name_)[0];
    lambda_ = lin::get_f32(state, "lambda", static_cast<int64_t>(coef_.size()), name_);
  }

 private:
  float alpha_ = 0.0f;
  Vec lambda_;
};

}  // namespace

std::unique_ptr<Estimator> make_ard_regression() { return std::make_unique<ArdRegression>(); }

}  // namespace bl::ml
