// quantile_regressor.cpp: linear quantile regression with an L1 penalty, as scikit-learn's
// QuantileRegressor: minimizes (1/n) sum_i pinball_q(y_i - x_i w - b) + alpha ||w||_1, with
// pinball_q(r) = q r (r >= 0) or (q - 1) r (r < 0).
//
// Solver: ADMM (Boyd et al. 2011, scaled form) in standardized coordinates (Xs = (X - mean) / std,
// ys = y / std(y)) on the equivalent problem  sum_i pinball_q(r_i) + sum_j kappa_j |u_j|,
// kappa_j = n alpha / std_j, with the constraints A x + r = ys (A = [Xs 1], x = [v; c]) and v = u:
//   x = M^-1 (A^T (ys - r - l1) + (u - l2)),  M = A^T A + diag(1, .., 1, 0)   (Cholesky once)
//   r = t - clamp(t, -(1 - q)/rho, q/rho),    t = ys - A x - l1             (prox of the pinball)
//   u = soft_threshold(v + l2, kappa / rho)
//   l1 += A x + r - ys,  l2 += v - u
// starting from rho = 1, x = r = u = l = 0. Every 10 iterations the residuals are checked: stop
// when the primal residual <= tol (sqrt(n + d) + max(|Ax|, |r|, |ys|)) and the dual residual
// <= tol (sqrt(d + 1) + rho |A^T l1 + l2|); otherwise rho doubles (halves) when the primal (dual)
// residual is 10 times the other, the scaled duals l rescaled. The coefficients are u (exact zeros
// of the L1 penalty); the intercept is then the ceil(q n)-th smallest residual ys - Xs u, which is
// optimal for the fixed coefficients. Data-sized work is Tensor ops on X's device; the small
// systems are binary32 on the host in index order.
#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/cholesky.h"
#include "ml/linear/linear_base.h"
#include "ml/linear/linear_models.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
using Vec = std::vector<float>;

float norm2(const Tensor& t) { return static_cast<float>(bl::l2_norm(t).item()); }

float host_norm2(const Vec& v) { return bl::sqrt(lin::dot(v, v)); }

class QuantileRegressor final : public LinearModelBase {
 public:
  QuantileRegressor()
      : LinearModelBase("quantile_regressor", {{"alpha", K::number, "1", 0.0},
                                               {"fit_intercept", K::boolean, "true"},
                                               {"max_iter", K::integer, "10000", 1},
                                               {"quantile", K::number, "0.5", 0.0},
                                               {"tol", K::number, "0.0001", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const double qd = params_.number("quantile");
    BL_CHECK(qd > 0.0 && qd < 1.0, name_, ": parameter quantile=", params_.text("quantile"),
             ": expected a value strictly between 0 and 1");
    const float q = static_cast<float>(qd);
    const int64_t n = X.dim(0), d = X.dim(1);
    const bool fit_b = params_.boolean("fit_intercept");
    const int64_t p = fit_b ? d + 1 : d;
    Device dev = X.device();
    auto sc = [&](float v) { return Tensor::scalar(v, DType::f32, dev); };
    lin::ColumnStats st = lin::column_stats(X, fit_b);
    Tensor Xs = lin::standardize(X, st);
    Tensor yt = y_f32_on(y, dev);
    float sy = static_cast<float>(bl::stddev(yt).item());
    if (!(sy > 0.0f)) sy = 1.0f;
    Tensor ys = bl::div(yt, sc(sy));
    // M = A^T A + diag(1 (coefficients), 0 (intercept)).
    Vec G = bl::matmul(Xs, Xs, true, false).to(Device::cpu()).to_vector<float>();
    Vec M(static_cast<size_t>(p * p), 0.0f);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) M[i * p + j] = G[i * d + j];
    for (int64_t j = 0; j < d; ++j) M[j * p + j] = bl::add(M[j * p + j], 1.0f);
    if (fit_b) {
      Vec cs = bl::sum(Xs, {0}).to(Device::cpu()).to_vector<float>();
      for (int64_t j = 0; j < d; ++j) M[j * p + d] = M[d * p + j] = cs[j];
      M[d * p + d] = static_cast<float>(n);
    }
    Vec L;
    BL_CHECK(cholesky_factor(M, p, L), name_, ": the normal matrix is not positive definite (X holds NaN or inf?)");
    const float alpha = static_cast<float>(params_.number("alpha"));
    Vec kappa(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) kappa[j] = bl::div(bl::mul(static_cast<float>(n), alpha), st.scale[j]);
    const int64_t max_iter = params_.integer("max_iter");
    const float tol = static_cast<float>(params_.number("tol"));
    float rho = 1.0f;
    Vec x(static_cast<size_t>(p), 0.0f), u(static_cast<size_t>(d), 0.0f), l2(static_cast<size_t>(d), 0.0f);
    Tensor r = Tensor::zeros({n}, DType::f32, dev), l1 = Tensor::zeros({n}, DType::f32, dev);
    const float ys_norm = norm2(ys);
    int64_t it = 0;
    for (; it < max_iter; ++it) {
      // x-update.
      Tensor t = bl::sub(bl::sub(ys, r), l1);
      Vec rhs = bl::matmul(Xs, t.reshape({n, 1}), true, false).to(Device::cpu()).to_vector<float>();
      for (int64_t j = 0; j < d; ++j) rhs[j] = bl::add(rhs[j], bl::sub(u[j], l2[j]));
      if (fit_b) rhs.push_back(static_cast<float>(bl::sum(t).item()));
      x = cholesky_solve_factored(L, p, rhs);
      Tensor Ax = bl::matmul(Xs, Tensor::from_vector(Vec(x.begin(), x.begin() + d), {d, 1}, dev)).reshape({n});
      if (fit_b) Ax = bl::add(Ax, sc(x[d]));
      // r-update: prox of the pinball loss.
      Tensor tr = bl::sub(bl::sub(ys, Ax), l1);
      Tensor clamped = bl::minimum(bl::maximum(tr, sc(bl::neg(bl::div(bl::sub(1.0f, q), rho)))), sc(bl::div(q, rho)));
      Tensor r_new = bl::sub(tr, clamped);
      // u-update: soft threshold.
      Vec u_new(static_cast<size_t>(d));
      for (int64_t j = 0; j < d; ++j) {
        float v = bl::add(x[j], l2[j]);
        float mag = bl::sub(bl::abs(v), bl::div(kappa[j], rho));
        u_new[j] = mag > 0.0f ? bl::copysign(mag, v) : 0.0f;
      }
      // Dual updates.
      Tensor prim_r = bl::sub(bl::add(Ax, r_new), ys);
      l1 = bl::add(l1, prim_r);
      Vec prim_u(static_cast<size_t>(d));
      for (int64_t j = 0; j < d; ++j) {
        prim_u[j] = bl::sub(x[j], u_new[j]);
        l2[j] = bl::add(l2[j], prim_u[j]);
      }
      const bool check = (it + 1) % 10 == 0 || it + 1 == max_iter;
      Tensor dr;
      if (check) dr = bl::sub(r_new, r);
      Vec du(static_cast<size_t>(d));
      for (int64_t j = 0; j < d; ++j) du[j] = bl::sub(u_new[j], u[j]);
      r = r_new;
      u = u_new;
      if (!check) continue;
      report_progress("quantile_regressor ADMM", it + 1, max_iter);
      // Residuals: primal |(Ax + r - ys, v - u)|, dual rho |A^T dr - E^T du|.
      const float pr_r = norm2(prim_r);
      float pr = bl::sqrt(bl::fma(pr_r, pr_r, lin::dot(prim_u, prim_u)));
      Vec atdr = bl::matmul(Xs, dr.reshape({n, 1}), true, false).to(Device::cpu()).to_vector<float>();
      float dsq = 0.0f;
      for (int64_t j = 0; j < d; ++j) {
        float v = bl::sub(atdr[j], du[j]);
        dsq = bl::fma(v, v, dsq);
      }
      if (fit_b) {
        float s = static_cast<float>(bl::sum(dr).item());
        dsq = bl::fma(s, s, dsq);
      }
      float du_res = bl::mul(rho, bl::sqrt(dsq));
      Vec atl = bl::matmul(Xs, l1.reshape({n, 1}), true, false).to(Device::cpu()).to_vector<float>();
      for (int64_t j = 0; j < d; ++j) atl[j] = bl::add(atl[j], l2[j]);
      float dual_scale = bl::mul(rho, host_norm2(atl));
      float eps_pri = bl::mul(tol, bl::add(bl::sqrt(static_cast<float>(n + d)),
                                           bl::max(bl::max(norm2(Ax), norm2(r)), ys_norm)));
      float eps_dual = bl::mul(tol, bl::add(bl::sqrt(static_cast<float>(p)), dual_scale));
      if (pr <= eps_pri && du_res <= eps_dual) {
        ++it;
        break;
      }
      if (pr > bl::mul(10.0f, du_res)) {
        rho = bl::mul(rho, 2.0f);
        l1 = bl::mul(l1, sc(0.5f));
        for (auto& v : l2) v = bl::mul(v, 0.5f);
      } else if (du_res > bl::mul(10.0f, pr)) {
        rho = bl::mul(rho, 0.5f);
        l1 = bl::mul(l1, sc(2.0f));
        for (auto& v : l2) v = bl::mul(v, 2.0f);
      }
    }
    report_progress("quantile_regressor ADMM", max_iter, max_iter);
    // Intercept: the ceil(q n)-th smallest residual for the coefficients u.
    float c = 0.0f;
    if (fit_b) {
      Tensor res = bl::sub(ys, bl::matmul(Xs, Tensor::from_vector(u, {d, 1}, dev)).reshape({n}));
      Vec rv = res.to(Device::cpu()).to_vector<float>();
      int64_t k = static_cast<int64_t>(std::ceil(qd * static_cast<double>(n))) - 1;
      k = std::min(std::max<int64_t>(k, 0), n - 1);
      std::nth_element(rv.begin(), rv.begin() + k, rv.end(), [](float a, float b) {
        return bl::total_order_key(a) < bl::total_order_key(b);
      });
      c = rv[k];
    }
    Vec ws(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) ws[j] = bl::mul(u[j], sy);
    std::vector<float> coef;
    float icpt = 0.0f;
    unstandardize(ws, bl::mul(c, sy), st, coef, icpt);
    set_fit(coef, icpt, it);
    return *this;
  }
};

}  // namespace

std::unique_ptr<Estimator> make_quantile_regressor() { return std::make_unique<QuantileRegressor>(); }

}  // namespace bl::ml
