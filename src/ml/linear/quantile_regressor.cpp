// quantile_regressor.cpp: linear quantile regression with an L1 penalty, as scikit-learn's
// QuantileRegressor: minimizes (1/n) sum_i pinball_q(y_i - x_i w - b) + alpha ||w||_1, with
// pinball_q(r) = q r (r >= 0) or (q - 1) r (r < 0).
//
// In standardized coordinates (Xs = (X - mean) / std, ys = y / std(y)) the problem times n / std(y)
// is an unpenalized quantile regression on n + 2d rows: the data rows [Xs 1] -> ys and, per
// feature j with kappa_j = n alpha / std_j, the rows +-kappa_j e_j -> 0 (pinball_q(t) +
// pinball_q(-t) = |t|). That is solved by the Frisch-Newton interior-point method (Portnoy &
// Koenker 1997) on the dual LP  max ys^T a  s.t. A^T a = (1 - q) A^T 1, 0 <= a <= 1, with
// Mehrotra's predictor-corrector step, step factor 0.99995, starting from the least-squares fit;
// each iteration solves two p x p systems with the weighted Gram matrix A^T diag(d) A (one Cholesky).
// Stops when the duality gap <= tol (1 + |primal objective|), when the weighted Gram matrix is no
// longer positive definite in binary32 even with a small jitter, or after max_iter iterations. Vectors
// of the row count are Tensor ops on X's device; the p x p work is binary32 on the host.

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/cholesky.h"
#include "ml/linear/linear_base.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using Vec = std::vector<float>;

float dot_t(const Tensor& a, const Tensor& b) { return static_cast<float>(bl::sum(bl::mul(a, b)).item()); }

class QuantileRegressor final : public LinearModelBase {
 public:
  QuantileRegressor()
      : LinearModelBase("quantile_regressor", {{"alpha", K::number, "1", 0.0},
                                               {"fit_intercept", K::boolean, "true"},
                                               {"max_iter", K::integer, "100", 1},
                                               {"quantile", K::number, "0.5", 0.0},
                                               {"tol", K::number, "1e-06", 0.0}}) {}

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
    // The augmented design A [m, p] and targets c = -ys (with zeros for the penalty rows).
    const float alpha = static_cast<float>(params_.number("alpha"));
    Tensor A = fit_b ? bl::concat({Xs, Tensor::full({n, 1}, 1.0, DType::f32, dev)}, 1) : Xs;
    Tensor target = bl::div(yt, sc(sy));
    int64_t m = n;
    if (alpha > 0.0f) {
      Vec pen(static_cast<size_t>(2 * d * p), 0.0f);
      for (int64_t j = 0; j < d; ++j) {
        float kappa = bl::div(bl::mul(static_cast<float>(n), alpha), st.scale[j]);
        pen[j * p + j] = kappa;
        pen[(d + j) * p + j] = bl::neg(kappa);
      }
      A = bl::concat({A, Tensor::from_vector(pen, {2 * d, p}, dev)}, 0);
      target = bl::concat({target, Tensor::zeros({2 * d}, DType::f32, dev)}, 0);
      m = n + 2 * d;
    }
    const Tensor c = bl::neg(target);
    auto col = [&](const Tensor& v) { return v.reshape({m, 1}); };
    auto At = [&](const Tensor& v) {  // A^T v on the host
      return bl::matmul(A, col(v), true, false).to(Device::cpu()).to_vector<float>();
    };
    auto Av = [&](const Vec& v) { return bl::matmul(A, Tensor::from_vector(v, {p, 1}, dev)).reshape({m}); };
    // Solves (A^T diag(wt) A) x = rhs; the factor is computed by factor().
    Vec L;
    // Near the optimum the weights spread over many orders of magnitude; when the binary32 Cholesky
    // meets a non-positive pivot, a jitter of 2^-20 (doubling, at most 8 times) times the largest
    // diagonal entry is added. Returns false when that does not help either.
    auto factor = [&](const Tensor& wt) {
      Vec G = bl::matmul(A, bl::mul(A, col(wt)), true, false).to(Device::cpu()).to_vector<float>();
      if (cholesky_factor(G, p, L)) return true;
      float diag = 0.0f;
      for (int64_t k = 0; k < p; ++k) diag = bl::max(diag, G[k * p + k]);
      float jitter = bl::mul(diag, 0x1p-20f);
      for (int t = 0; t < 8 && bl::is_finite(jitter) && jitter > 0.0f; ++t, jitter = bl::mul(jitter, 2.0f)) {
        Vec J = G;
        for (int64_t k = 0; k < p; ++k) J[k * p + k] = bl::add(J[k * p + k], jitter);
        if (cholesky_factor(J, p, L)) return true;
      }
      return false;
    };
    // Start: least-squares y0 = argmin |A y - c|, dual slacks from its residual.
    const Tensor one_m = Tensor::full({m}, 1.0, DType::f32, dev);
    BL_CHECK(factor(one_m), name_, ": the normal matrix is not positive definite (X holds NaN or inf?)");
    Vec yv = cholesky_solve_factored(L, p, At(c));
    Tensor x = Tensor::full({m}, static_cast<double>(bl::sub(1.0f, q)), DType::f32, dev);
    Tensor s = bl::sub(one_m, x);
    const Vec b = At(x);
    Tensor r = bl::sub(c, Av(yv));
    r = bl::add(r, bl::mul(sc(0.001f), bl::cast(bl::eq(r, sc(0.0f)), DType::f32)));
    Tensor z = bl::relu(r);
    Tensor w = bl::sub(z, r);
    const float beta = 0.99995f;
    const float big = 1e20f;
    auto bound = [&](const Tensor& v, const Tensor& dv) {  // largest step keeping v + t dv >= 0
      Tensor neg = bl::lt(dv, sc(0.0f));
      Tensor ratio = bl::where(neg, bl::div(bl::neg(v), bl::where(neg, dv, sc(-1.0f))), sc(big));
      return static_cast<float>(bl::amin(ratio).item());
    };
    auto gap_of = [&]() {
      return bl::add(bl::sub(dot_t(c, x), lin::dot(yv, b)), static_cast<float>(bl::sum(w).item()));
    };
    const int64_t max_iter = params_.integer("max_iter");
    const float tol = static_cast<float>(params_.number("tol"));
    float gap = gap_of();
    int64_t it = 0;
    bool converged = false;  // the gap met the tolerance, or binary32 resolution was reached
    while (true) {
      if (!(gap > bl::mul(tol, bl::add(1.0f, bl::abs(dot_t(c, x)))))) {
        converged = true;
        break;
      }
      if (it >= max_iter) break;
      ++it;
      // Affine (predictor) step.
      Tensor dq = bl::reciprocal(bl::add(bl::div(z, x), bl::div(w, s)));
      Tensor rr = bl::sub(z, w);
      if (!factor(dq)) {  // binary32 resolution reached
        converged = true;
        break;
      }
      Vec dy = cholesky_solve_factored(L, p, At(bl::mul(dq, rr)));
      Tensor Ady = Av(dy);
      Tensor dx = bl::mul(dq, bl::sub(Ady, rr));
      Tensor ds = bl::neg(dx);
      Tensor dz = bl::neg(bl::mul(z, bl::add(one_m, bl::div(dx, x))));
      Tensor dw = bl::neg(bl::mul(w, bl::add(one_m, bl::div(ds, s))));
      float fp = bl::min(bl::mul(beta, bl::min(bound(x, dx), bound(s, ds))), 1.0f);
      float fd = bl::min(bl::mul(beta, bl::min(bound(w, dw), bound(z, dz))), 1.0f);
      if (bl::min(fp, fd) < 1.0f) {
        // Corrector: centering parameter mu from the predicted complementarity.
        float mu = bl::add(dot_t(z, x), dot_t(w, s));
        Tensor zp = bl::add(z, bl::mul(sc(fd), dz)), xp = bl::add(x, bl::mul(sc(fp), dx));
        Tensor wp = bl::add(w, bl::mul(sc(fd), dw)), sp = bl::add(s, bl::mul(sc(fp), ds));
        float g = bl::add(dot_t(zp, xp), dot_t(wp, sp));
        float ratio = bl::div(g, mu);
        mu = bl::div(bl::mul(mu, bl::mul(bl::mul(ratio, ratio), ratio)), bl::mul(2.0f, static_cast<float>(m)));
        Tensor dxdz = bl::mul(dx, dz), dsdw = bl::mul(ds, dw);
        Tensor xinv = bl::reciprocal(x), sinv = bl::reciprocal(s);
        Tensor xi = bl::mul(sc(mu), bl::sub(xinv, sinv));
        Tensor corr = bl::sub(bl::sub(dxdz, dsdw), xi);
        dy = cholesky_solve_factored(L, p, At(bl::mul(dq, bl::add(rr, corr))));
        Ady = Av(dy);
        dx = bl::mul(dq, bl::sub(bl::sub(bl::add(Ady, xi), rr), bl::sub(dxdz, dsdw)));
        ds = bl::neg(dx);
        dz = bl::sub(bl::sub(bl::sub(bl::mul(sc(mu), xinv), z), bl::mul(bl::mul(xinv, z), dx)), dxdz);
        dw = bl::sub(bl::sub(bl::sub(bl::mul(sc(mu), sinv), w), bl::mul(bl::mul(sinv, w), ds)), dsdw);
        fp = bl::min(bl::mul(beta, bl::min(bound(x, dx), bound(s, ds))), 1.0f);
        fd = bl::min(bl::mul(beta, bl::min(bound(w, dw), bound(z, dz))), 1.0f);
      }
      x = bl::add(x, bl::mul(sc(fp), dx));
      s = bl::add(s, bl::mul(sc(fp), ds));
      for (int64_t k = 0; k < p; ++k) yv[k] = bl::fma(fd, dy[k], yv[k]);
      w = bl::add(w, bl::mul(sc(fd), dw));
      z = bl::add(z, bl::mul(sc(fd), dz));
      gap = gap_of();
      report_progress("quantile_regressor interior point", it, max_iter);
    }
    report_progress("quantile_regressor interior point", max_iter, max_iter);
    if (!converged) warn_not_converged("quantile_regressor interior point", max_iter);
    // Coefficients are -y (dual of the dual), back to original units.
    Vec ws(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) ws[j] = bl::mul(bl::neg(yv[j]), sy);
    const float c0 = fit_b ? bl::mul(bl::neg(yv[d]), sy) : 0.0f;
    std::vector<float> coef;
    float icpt = 0.0f;
    unstandardize(ws, c0, st, coef, icpt);
    set_fit(coef, icpt, it);
    return *this;
  }
};

}  // namespace

std::unique_ptr<Estimator> make_quantile_regressor() { return std::make_unique<QuantileRegressor>(); }

}  // namespace bl::ml
