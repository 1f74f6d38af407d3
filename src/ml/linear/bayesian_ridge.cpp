// bayesian_ridge.cpp: Bayesian ridge regression (evidence maximization of the precisions alpha of
// the noise and lambda of the weights), as scikit-learn's BayesianRidge.
//
// With centered data Xc, yc (fit_intercept), G = Xc^T Xc and b = Xc^T yc (contract GEMMs) and G's
// Jacobi eigen-decomposition V diag(e) V^T, each iteration computes
//   w = V diag(1 / (e + lambda / alpha)) V^T b,   rmse = sum (yc - Xc w)^2   (ops on X's device),
//   gamma = sum alpha e / (lambda + alpha e),
//   lambda = (gamma + 2 lambda_1) / (sum w^2 + 2 lambda_2),  alpha = (n - gamma + 2 alpha_1) / (rmse + 2 alpha_2),
// from alpha = 1 / (var(y) + 2^-23), lambda = 1, and stops when sum |w - w_old| < tol (after the
// first iteration) or after max_iter; w is then recomputed with the last alpha and lambda. Host
// arithmetic is binary32 in index order.
#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/decomposition/jacobi_eigen.h"
#include "ml/linear/centered_problem.h"
#include "ml/linear/common.h"
#include "ml/linear/linear_base.h"
#include "ml/linear/linear_models.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class BayesianRidge final : public lin::ParamEstimator {
 public:
  BayesianRidge() : lin::ParamEstimator("bayesian_ridge", lin::evidence_prior_specs({})) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    Tensor yf;
    const lin::CenteredProblem cp = lin::check_and_center(name(), X, y, params_.boolean("fit_intercept"), &yf);
    const int64_t n = X.dim(0), d = X.dim(1);
    const std::vector<float>& G = cp.gram;
    const std::vector<float>& b = cp.xty;
    SymmetricEigen e = jacobi_eigen(G, d);
    std::vector<float> ev(static_cast<size_t>(d)), vb(static_cast<size_t>(d));  // eigenvalues, V^T b
    for (int64_t k = 0; k < d; ++k) {
      ev[k] = bl::max(e.values[k], 0.0f);
      float s = 0.0f;
      for (int64_t j = 0; j < d; ++j) s = bl::fma(e.vectors[k * d + j], b[j], s);
      vb[k] = s;
    }
    const float a1 = static_cast<float>(params_.number("alpha_1")), a2 = static_cast<float>(params_.number("alpha_2"));
    const float l1 = static_cast<float>(params_.number("lambda_1")), l2 = static_cast<float>(params_.number("lambda_2"));
    const float tol = static_cast<float>(params_.number("tol"));
    const int64_t max_iter = params_.integer("max_iter");
    float var_y = static_cast<float>(bl::var(yf).item());
    float alpha = bl::div(1.0f, bl::add(var_y, 0x1p-23f)), lambda = 1.0f;
    auto coef_for = [&](float a, float l) {
      std::vector<float> w(static_cast<size_t>(d), 0.0f);
      float ratio = bl::div(l, a);
      for (int64_t k = 0; k < d; ++k) {
        float c = bl::div(vb[k], bl::add(ev[k], ratio));
        for (int64_t j = 0; j < d; ++j) w[j] = bl::fma(c, e.vectors[k * d + j], w[j]);
      }
      return w;
    };
    std::vector<float> w_old;
    n_iter_ = 0;
    bool converged = false;  // left by the tolerance, not by the iteration limit
    for (int64_t it = 0; it < max_iter; ++it) {
      std::vector<float> w = coef_for(alpha, lambda);
      float rmse = lin::residual_sum_squares(cp, w);
      float gamma = 0.0f;
      for (int64_t k = 0; k < d; ++k) {
        float ae = bl::mul(alpha, ev[k]);
        gamma = bl::add(gamma, bl::div(ae, bl::add(lambda, ae)));
      }
      lambda = bl::div(bl::fma(2.0f, l1, gamma), bl::fma(2.0f, l2, lin::dot(w, w)));
      alpha = bl::div(bl::fma(2.0f, a1, bl::sub(static_cast<float>(n), gamma)), bl::fma(2.0f, a2, rmse));
      n_iter_ = it + 1;
      report_progress("bayesian_ridge", it + 1, max_iter);
      if (it != 0) {
        if (lin::sum_abs_change(w_old, w) < tol) {
          converged = true;
          break;
        }
      }
      w_old = w;
    }
    if (!converged) warn_not_converged("bayesian_ridge", max_iter);
    coef_ = coef_for(alpha, lambda);
    intercept_ = lin::centered_intercept(cp, coef_);
    alpha_ = alpha;
    lambda_ = lambda;
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override { return linear_predict(name_, fitted_, coef_, intercept_, X); }
  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    put_linear_state(state, coef_, intercept_, n_iter_);
    lin::put_f32s(state, {{"alpha", {alpha_}}, {"lambda", {lambda_}}});
  }
  void load_state(const nlohmann::json& state) override {
    get_linear_state(state, name_, coef_, intercept_, n_iter_);
    alpha_ = lin::get_f32(state, "alpha", 1, name())[0];
    lambda_ = lin::get_f32(state, "lambda", 1, name())[0];
    fitted_ = true;
  }

  LinearView view() const { return LinearView{coef_, {intercept_}, 1}; }

 private:
  std::vector<float> coef_;
  float intercept_ = 0.0f, alpha_ = 0.0f, lambda_ = 0.0f;
  int64_t n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_bayesian_ridge() { return std::make_unique<BayesianRidge>(); }

bool bayesian_ridge_view(const Estimator& est, LinearView& out) {
  return view_if<BayesianRidge>(est, out);
}

}  // namespace bl::ml
