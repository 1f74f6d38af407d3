// linear_regressors.cpp: linear_regression (OLS), ridge, lasso and elastic_net.
//
// All four solve in standardized coordinates: Xs = (X - mean) / std (population std, 1 where 0),
// yc = y - mean(y) (no centering without fit_intercept). The Gram matrix G = Xs^T Xs and b = Xs^T yc
// are contract GEMMs (same bits on every device); the d x d solve runs on the host in binary32:
//   linear_regression: minimum-norm least squares through the Jacobi eigen-decomposition of G
//                      (eigenvalues <= lambda_max * d * 2^-20 count as zero);
//   ridge:             Cholesky of G + alpha * diag(1 / std^2)   (objective ||y - Xw||^2 + alpha ||w||^2);
//   lasso/elastic_net: coordinate descent on G in index order 0..d-1, objective
//                      1/(2n) ||y - Xw||^2 + alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio)/2 ||w||^2,
//                      stopped when max |dw| <= tol * max |w| after a sweep (or max_iter sweeps).
// Then w = ws / std and intercept = mean(y) - mean . w.
//
// With sample weights w_i (fit_weighted) the same solves run on the weighted system: weighted column
// means mu = w^T X / sum(w) and scales sqrt(w^T (X - mu)^2 / sum(w)), rows multiplied by sqrt(w_i),
// so G = sum_i w_i xs_i xs_i^T. Ridge and linear_regression minimize sum_i w_i r_i^2 (+ penalty);
// lasso and elastic_net first rescale the weights to sum to n (their objective divides by n), as
// scikit-learn does. Every sum is a contract op on X's device.
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/decomposition/jacobi_eigen.h"
#include "ml/linear/cholesky.h"
#include "ml/registry.h"
#include "ml/size_limits.h"
#include "ml/linear/linear_base.h"
#include "ml/linear/common.h"
#include "ml/linear/linear_models.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

struct GramSystem {
  int64_t n = 0, d = 0;
  lin::ColumnStats stats;
  float y_mean = 0.0f;
  std::vector<float> G, b;
};

GramSystem gram_system(const Tensor& X, const Tensor& y, bool fit_intercept) {
  GramSystem s;
  s.n = X.dim(0);
  s.d = X.dim(1);
  check_square_matrix(s.n, s.d, "linear model Gram matrix");
  s.stats = lin::column_stats(X, fit_intercept);
  Tensor Xs = lin::standardize(X, s.stats);
  Tensor yf = y_f32_on(y, X.device());
  if (fit_intercept) s.y_mean = static_cast<float>(bl::mean(yf).item());
  Tensor yc = bl::sub(yf, Tensor::scalar(s.y_mean, DType::f32, X.device())).reshape({s.n, 1});
  s.G = bl::matmul(Xs, Xs, true, false).to(Device::cpu()).to_vector<float>();
  s.b = bl::matmul(Xs, yc, true, false).to(Device::cpu()).to_vector<float>();
  return s;
}

GramSystem weighted_gram_system(const Tensor& X, const Tensor& y, bool fit_intercept, const std::vector<float>& w) {
  GramSystem s;
  s.n = X.dim(0);
  s.d = X.dim(1);
  check_square_matrix(s.n, s.d, "linear model Gram matrix");
  const Device dev = X.device();
  Tensor wt = Tensor::from_vector(w, {s.n, 1}, dev);
  Tensor sw = bl::sum(wt);
  Tensor mu = bl::div(bl::matmul(wt, X, true, false), sw);  // [1, d]
  Tensor var = bl::div(bl::matmul(wt, bl::square(bl::sub(X, mu)), true, false), sw);
  s.stats.scale = bl::sqrt(var).to(Device::cpu()).to_vector<float>();
  for (auto& v : s.stats.scale)
    if (!(v > 0.0f)) v = 1.0f;
  if (fit_intercept) s.stats.mean = mu.to(Device::cpu()).to_vector<float>();
  else s.stats.mean.assign(static_cast<size_t>(s.d), 0.0f);
  Tensor yf = y_f32_on(y, dev).reshape({s.n, 1});
  if (fit_intercept) s.y_mean = static_cast<float>(bl::div(bl::matmul(wt, yf, true, false), sw).item());
  Tensor root = bl::sqrt(wt);
  Tensor Xs = bl::mul(lin::standardize(X, s.stats), root);
  Tensor yc = bl::mul(bl::sub(yf, Tensor::scalar(s.y_mean, DType::f32, dev)), root);
  s.G = bl::matmul(Xs, Xs, true, false).to(Device::cpu()).to_vector<float>();
  s.b = bl::matmul(Xs, yc, true, false).to(Device::cpu()).to_vector<float>();
  return s;
}

// Minimum-norm solution of G ws = b through G's eigen-decomposition; returns the sweeps run.
std::vector<float> min_norm_solve(const GramSystem& s, int64_t* sweeps) {
  const int64_t d = s.d;
  SymmetricEigen e = jacobi_eigen(s.G, d);
  if (sweeps) *sweeps = e.sweeps;
  float cutoff = bl::mul(bl::mul(e.values[0], static_cast<float>(d)), 0x1p-20f);
  std::vector<float> ws(static_cast<size_t>(d), 0.0f);
  for (int64_t k = 0; k < d; ++k) {
    if (!(e.values[k] > cutoff)) continue;
    float proj = 0.0f;
    for (int64_t j = 0; j < d; ++j) proj = bl::fma(e.vectors[k * d + j], s.b[j], proj);
    float c = bl::div(proj, e.values[k]);
    for (int64_t j = 0; j < d; ++j) ws[j] = bl::fma(c, e.vectors[k * d + j], ws[j]);
  }
  return ws;
}

class LinearRegressorBase : public lin::ParamEstimator {
 public:
  LinearRegressorBase(std::string name, std::vector<ParamSpec> specs)
      : lin::ParamEstimator(std::move(name), std::move(specs)) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    return fit_system(gram_system(X, y, params_.boolean("fit_intercept")));
  }
  bool supports_sample_weight() const override { return true; }

  Tensor predict(const Tensor& X) const override { return linear_predict(name_, fitted_, coef_, intercept_, X); }

  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    put_linear_state(state, coef_, intercept_, n_iter_);
  }
  void load_state(const nlohmann::json& state) override {
    int64_t d = lin::get_int(state, "n_features", 1, name_);
    coef_ = lin::get_f32(state, "coef", d, name_);
    intercept_ = lin::get_f32(state, "intercept", 1, name_)[0];
    n_iter_ = state.contains("n_iter") ? io::json_integer<int64_t>(state["n_iter"], name_ + ": state.n_iter") : 0;
    fitted_ = true;
  }

  const std::vector<float>& coef() const { return coef_; }
  float intercept() const { return intercept_; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    check_Xy(name_, X, y);
    return fit_system(weighted_gram_system(X, y, params_.boolean("fit_intercept"), objective_weights(w)));
  }
  // The weights as the objective uses them (lasso / elastic_net: rescaled to sum to n).
  virtual std::vector<float> objective_weights(const std::vector<float>& w) const { return w; }
  Estimator& fit_system(const GramSystem& s) {
    std::vector<float> ws = solve(s);
    unstandardize(ws, s.y_mean, s.stats, coef_, intercept_);
    fitted_ = true;
    return *this;
  }
  virtual std::vector<float> solve(const GramSystem& s) = 0;
  std::vector<float> coef_;
  float intercept_ = 0.0f;
  int64_t n_iter_ = 0;
};

class LinearRegression final : public LinearRegressorBase {
 public:
  LinearRegression()
      : LinearRegressorBase("linear_regression", {{"fit_intercept", K::boolean, "true"}}) {}

 protected:
  std::vector<float> solve(const GramSystem& s) override { return min_norm_solve(s, &n_iter_); }
};

class Ridge final : public LinearRegressorBase {
 public:
  Ridge()
      : LinearRegressorBase("ridge", {{"alpha", K::number, "1", 0.0}, {"fit_intercept", K::boolean, "true"}}) {}

 protected:
  std::vector<float> solve(const GramSystem& s) override {
    const int64_t d = s.d;
    const float alpha = static_cast<float>(params_.number("alpha"));
    std::vector<float> A = s.G;
    for (int64_t j = 0; j < d; ++j) {
      float sc = s.stats.scale[j];
      A[j * d + j] = bl::add(A[j * d + j], bl::div(alpha, bl::mul(sc, sc)));
    }
    std::vector<float> ws;
    if (cholesky_solve(A, d, s.b, 1, ws)) return ws;
    // Singular (alpha = 0 on collinear data): minimum-norm least squares.
    GramSystem t = s;
    t.G = A;
    return min_norm_solve(t, nullptr);
  }
};

class ElasticNet final : public LinearRegressorBase {
 public:
  ElasticNet(const char* name, bool lasso)
      : LinearRegressorBase(name, lasso ? std::vector<ParamSpec>{{"alpha", K::number, "1", 0.0},
                                                                 {"fit_intercept", K::boolean, "true"},
                                                                 {"max_iter", K::integer, "1000", 1},
                                                                 {"tol", K::number, "0.0001", 0.0}}
                                        : std::vector<ParamSpec>{{"alpha", K::number, "1", 0.0},
                                                                 {"fit_intercept", K::boolean, "true"},
                                                                 {"l1_ratio", K::number, "0.5", 0.0},
                                                                 {"max_iter", K::integer, "1000", 1},
                                                                 {"tol", K::number, "0.0001", 0.0}}),
        lasso_(lasso) {}

 protected:
  // w_i n / sum(w), the sum in binary64 in row order, each weight rounded once.
  std::vector<float> objective_weights(const std::vector<float>& w) const override {
    double total = 0.0;
    for (float v : w) total += static_cast<double>(v);
    const double n = static_cast<double>(w.size());
    std::vector<float> out(w.size());
    for (size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(static_cast<double>(w[i]) * n / total);
    return out;
  }
  std::vector<float> solve(const GramSystem& s) override {
    const int64_t d = s.d;
    const double alpha = params_.number("alpha");
    const double l1_ratio = lasso_ ? 1.0 : params_.number("l1_ratio");
    BL_CHECK(l1_ratio <= 1.0, name_, ": parameter l1_ratio must lie in [0, 1]");
    const int64_t max_iter = params_.integer("max_iter");
    const float tol = static_cast<float>(params_.number("tol"));
    const float l1 = static_cast<float>(static_cast<double>(s.n) * alpha * l1_ratio);
    const float l2 = static_cast<float>(static_cast<double>(s.n) * alpha * (1.0 - l1_ratio));
    std::vector<float> thresh(static_cast<size_t>(d)), denom(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      float sc = s.stats.scale[j];
      thresh[j] = bl::div(l1, sc);
      denom[j] = bl::add(s.G[j * d + j], bl::div(l2, bl::mul(sc, sc)));
    }
    std::vector<float> w(static_cast<size_t>(d), 0.0f), q(static_cast<size_t>(d), 0.0f);  // q = G w
    n_iter_ = 0;
    bool converged = false;  // left by the tolerance, not by the iteration limit
    for (int64_t it = 0; it < max_iter; ++it) {
      float max_dw = 0.0f, max_w = 0.0f;
      for (int64_t j = 0; j < d; ++j) {
        float gjj = s.G[j * d + j];
        float rho = bl::fma(gjj, w[j], bl::sub(s.b[j], q[j]));
        float nw = 0.0f;
        if (gjj > 0.0f && denom[j] > 0.0f) {
          float mag = bl::sub(bl::abs(rho), thresh[j]);
          if (mag > 0.0f) nw = bl::div(bl::copysign(mag, rho), denom[j]);
        }
        float dw = bl::sub(nw, w[j]);
        if (dw != 0.0f) {
          for (int64_t k = 0; k < d; ++k) q[k] = bl::fma(s.G[k * d + j], dw, q[k]);
          w[j] = nw;
        }
        max_dw = bl::max(max_dw, bl::abs(dw));
        max_w = bl::max(max_w, bl::abs(w[j]));
      }
      n_iter_ = it + 1;
      report_progress(name_ + " coordinate descent", it + 1, max_iter);
      if (max_w == 0.0f || max_dw <= bl::mul(tol, max_w)) {
        converged = true;
        break;
      }
    }
    report_progress(name_ + " coordinate descent", max_iter, max_iter);
    if (!converged) warn_not_converged(name_ + " coordinate descent", max_iter);
    return w;
  }

 private:
  bool lasso_;
};

}  // namespace

LinearView linear_view(const Estimator& est) {
  LinearView v;
  if (logistic_view(est, v) || bayesian_ridge_view(est, v)) return v;
  if (auto* h = dynamic_cast<const HasLinearView*>(&est)) return h->view();
  auto* r = dynamic_cast<const LinearRegressorBase*>(&est);
  BL_CHECK(r != nullptr, est.name(), ": not a linear estimator");
  BL_CHECK(r->fitted(), est.name(), ": not fitted");
  return LinearView{r->coef(), {r->intercept()}, 1};
}

std::unique_ptr<Estimator> make_linear_regression() { return std::make_unique<LinearRegression>(); }
std::unique_ptr<Estimator> make_ridge() { return std::make_unique<Ridge>(); }
std::unique_ptr<Estimator> make_lasso() { return std::make_unique<ElasticNet>("lasso", true); }
std::unique_ptr<Estimator> make_elastic_net() { return std::make_unique<ElasticNet>("elastic_net", false); }

}  // namespace bl::ml
