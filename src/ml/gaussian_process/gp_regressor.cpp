// gp_regressor.cpp: gaussian_process_regressor (scikit-learn's GaussianProcessRegressor), exact
// Gaussian process regression with a kernel expression of gp_kernel_expr.h.
//
// Everything runs on the host in binary64 in a fixed order (rows, then columns, then the inner
// index ascending), with only add, sub, mul, div and sqrt (correctly rounded; the library is built
// without contraction) and the binary64 exp64 / log64 of ml/host_math.h (polynomial and series
// evaluations), so a fit is a pure function of the data and the parameters on every device and
// thread count. (Binary64 rather than the binary32 device GEMM: with scikit-learn's alpha = 1e-10 the
// kernel matrix is far too ill-conditioned for a binary32 Cholesky.)
//
// Fit on X [n, d] (binary32, widened), y [n]:
//   normalize_y: y_mean = sum y / n, y_std = sqrt(sum (y - y_mean)^2 / n) (1 where 0), y <- (y -
//   y_mean) / y_std; otherwise y_mean 0, y_std 1 (as scikit-learn, no centering).
//   K = kernel(X, X) + alpha I; L = cholesky(K) (row i, then column j <= i, the inner sum over q
//   ascending); a = K^-1 y by forward then backward substitution;
//   lml = -0.5 y.a - sum_i log64(L_ii) - n / 2 log(2 pi), each sum in index order;
//   d lml / d log(theta_p) = 0.5 sum_i sum_j (a_i a_j - Kinv_ij) dK_ij / d log(theta_p), Kinv =
//   Linv^T Linv with Linv by forward substitution per column.
// optimizer=fmin_l_bfgs_b: the free hyper-parameters' theta = log(value) are moved by the
// library's binary32 L-BFGS (lbfgs.h, at most 500 iterations, gtol 1e-4) on -lml; bounds are kept
// by clipping: the objective is evaluated at clip(theta, log lo, log hi) and a clipped coordinate's
// gradient is 0 (scikit-learn projects in L-BFGS-B). Start 0 is the kernel's theta (log64 rounded
// to binary32); restart r = 1 .. n_restarts_optimizer starts at theta_p = uniform in [log lo, log
// hi) of Philox element (r - 1) * P + p of stream 7 under random_state. The run with the smallest
// -lml wins (the first on ties); values = exp64(theta). A kernel matrix that is not positive
// definite during the search scores +inf, a run ending at one is dropped (none left: the given
// values are kept); at the final values it is an error asking for a larger alpha.
// Predict, in row blocks of X*: k* = kernel(X*, X); mean = k*.a * y_std + y_mean; predict_std:
// v = L^-1 k*^T (forward substitution), var = diag kernel(X*) - sum_j v_j^2 (0 when negative),
// std = sqrt(var * y_std^2). Results rounded once to binary32.
// State: the fitted kernel (text, 17 digits), X_train, y_train (f32 hex), normalize_y statistics,
// alpha_ and the log marginal likelihood (binary64 bits); load recomputes L and a from them by the
// same code, so a loaded model gives the same bytes.
// The Cholesky factor, the substitutions, the inverse from the factor, the optimizer schedule, the
// kernel rows of test points and the kernel parameter are shared with gaussian_process_classifier
// (namespace gp, declared in gp_regressor.h).
#include "bitlearn/ml/progress.h"
#include "ml/gaussian_process/gp_regressor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/gaussian_process/gp_kernel_expr.h"
#include "ml/linear/common.h"
#include "ml/linear/lbfgs.h"
#include "ml/registry.h"

namespace bl::ml {

namespace gp {

namespace {
constexpr uint64_t kRestartStream = 7;
constexpr int64_t kBlockElems = int64_t{1} << 22;
}  // namespace

std::string f64_to_hex(const std::vector<double>& v) {
  std::vector<int64_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(&bits[i], &v[i], sizeof(double));
  return i64_to_hex(bits);
}

std::vector<double> f64_from_hex(const nlohmann::json& state, const std::string& key, int64_t n, const std::string& est) {
  BL_CHECK(state.contains(key) && state[key].is_string(), est, ": model state: missing ", key);
  std::vector<int64_t> bits = i64_from_hex(state[key].get_ref<const std::string&>(), key);
  BL_CHECK(static_cast<int64_t>(bits.size()) == n, est, ": model state: ", key, " holds ", bits.size(),
           " values, expected ", n);
  std::vector<double> v(bits.size());
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(&v[i], &bits[i], sizeof(double));
  return v;
}

// Lower Cholesky factor of A [n, n] (row-major); false at a pivot that is not positive.
bool cholesky64(const std::vector<double>& A, int64_t n, std::vector<double>& L) {
  L.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const double* li = &L[i * n];
    for (int64_t j = 0; j <= i; ++j) {
      const double* lj = &L[j * n];
      double s = A[i * n + j];
      for (int64_t q = 0; q < j; ++q) s -= li[q] * lj[q];
      if (i == j) {
        if (!(s > 0.0)) return false;
        L[i * n + i] = std::sqrt(s);
      } else {
        L[i * n + j] = s / lj[j];
      }
    }
  }
  return true;
}

// Solves L x = b in place.
void forward(const std::vector<double>& L, int64_t n, std::vector<double>& x) {
  for (int64_t i = 0; i < n; ++i) {
    double s = x[i];
    for (int64_t q = 0; q < i; ++q) s -= L[i * n + q] * x[q];
    x[i] = s / L[i * n + i];
  }
}

// Solves L^T x = b in place.
void backward(const std::vector<double>& L, int64_t n, std::vector<double>& x) {
  for (int64_t i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int64_t q = i + 1; q < n; ++q) s -= L[q * n + i] * x[q];
    x[i] = s / L[i * n + i];
  }
}

std::vector<double> cholesky_inverse(const std::vector<double>& L, int64_t n) {
  // LinvT[i, q] = (L^-1)[q, i]: column i of L^-1 by forward substitution, stored as row i.
  std::vector<double> LinvT(static_cast<size_t>(n * n), 0.0), x(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) x[i] = i == j ? 1.0 : 0.0;
    for (int64_t i = j; i < n; ++i) {
      double s = x[i];
      for (int64_t q = j; q < i; ++q) s -= L[i * n + q] * x[q];
      x[i] = s / L[i * n + i];
    }
    for (int64_t i = j; i < n; ++i) LinvT[j * n + i] = x[i];
  }
  std::vector<double> Kinv(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int64_t q = i; q < n; ++q) s += LinvT[i * n + q] * LinvT[j * n + q];
      Kinv[i * n + j] = s;
      Kinv[j * n + i] = s;
    }
  return Kinv;
}

void check_fit_rows(const std::string& est, const Tensor& X, const Tensor& y) {
  check_Xy(est, X, y);
  const int64_t n = X.dim(0);
  BL_CHECK(n <= kMaxRows, est, ": ", n, " rows would need a ", n, " x ", n,
           " kernel matrix factorized on the host; the limit is ", kMaxRows, " rows (subsample the data)");
}

void load_shape(const nlohmann::json& state, const std::string& est, int64_t& n, int64_t& d) {
  d = lin::get_int(state, "n_features", 1, est);
  n = lin::get_int(state, "n_samples", 1, est);
  BL_CHECK(n <= kMaxRows && d <= (int64_t{1} << 40) / n, est, ": model state: n_samples x n_features is too large");
}

void maximize_lml(KernelExpr& kernel, const LmlFunction& lml_of, int64_t restarts, uint64_t seed) {
  std::vector<Hyper*> hs = free_hypers(kernel);
  const int64_t P = static_cast<int64_t>(hs.size());
  std::vector<double> lo(P), hi(P);
  for (int64_t p = 0; p < P; ++p) {
    lo[p] = log64(hs[p]->lo);
    hi[p] = log64(hs[p]->hi);
  }
  KernelExpr work = kernel;
  std::vector<Hyper*> ws = free_hypers(work);
  auto clip = [&](const std::vector<float>& t, int64_t p) {
    return std::min(std::max(static_cast<double>(t[p]), lo[p]), hi[p]);
  };
  double lml = 0.0;
  std::vector<double> grad;
  LbfgsObjective f = [&](const std::vector<float>& t, std::vector<float>& g) -> float {
    for (int64_t p = 0; p < P; ++p) ws[p]->value = exp64(clip(t, p));
    const bool ok = lml_of(work, true, lml, grad);
    g.assign(static_cast<size_t>(P), 0.0f);
    if (!ok) return std::numeric_limits<float>::infinity();
    for (int64_t p = 0; p < P; ++p) {
      const double tp = static_cast<double>(t[p]);
      g[p] = (tp < lo[p] || tp > hi[p]) ? 0.0f : static_cast<float>(-grad[p]);
    }
    return static_cast<float>(-lml);
  };
  LbfgsOptions opt;
  opt.max_iter = 500;
  opt.gtol = 1e-4f;
  opt.stage = "gaussian process hyper-parameters";
  std::vector<float> best;
  float best_f = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r <= restarts; ++r) {
    std::vector<float> t0(P);
    for (int64_t p = 0; p < P; ++p)
      t0[p] = r == 0 ? static_cast<float>(log64(hs[p]->value))
                     : uniform_element(seed, kRestartStream, static_cast<uint64_t>((r - 1) * P + p),
                                       static_cast<float>(lo[p]), static_cast<float>(hi[p]));
    LbfgsResult res = lbfgs_minimize(f, t0, opt);
    // A run that ends where the likelihood is not defined does not count.
    for (int64_t p = 0; p < P; ++p) ws[p]->value = exp64(clip(res.x, p));
    if (!lml_of(work, false, lml, grad)) continue;
    if (best.empty() || res.f < best_f) {
      best = res.x;
      best_f = res.f;
    }
  }
  if (best.empty()) return;  // no run ended at a usable kernel: keep the given values
  for (int64_t p = 0; p < P; ++p) hs[p]->value = exp64(clip(best, p));
}

void for_each_kernel_row(const KernelExpr& kernel, const float* xs, int64_t m, const float* x_train, int64_t n,
                         int64_t d, bool want_diag, const std::function<void(int64_t, const double*, double)>& fn) {
  const bool dot = uses_dot_product(kernel);
  const int64_t rows = std::max<int64_t>(1, kBlockElems / n);
  // Used by predict only: the blocks report as the prediction's progress.
  for_row_blocks("gaussian process predict", m, rows, [&](int64_t s, int64_t e) {
    const PairData pd = pair_data(xs + s * d, e - s, x_train, n, d, dot, false);
    std::vector<double> Ks;
    evaluate(kernel, pd, Ks, nullptr);
    const std::vector<double> diag = want_diag ? kernel_diag(kernel, xs + s * d, e - s, d) : std::vector<double>();
    for (int64_t i = s; i < e; ++i) fn(i, &Ks[(i - s) * n], want_diag ? diag[i - s] : 0.0);
  });
}

Params KernelParamEstimator::get_params() const {
  Params p = params_.all();
  p["kernel"] = kernel_param_;
  return p;
}

void KernelParamEstimator::set_params(const Params& p) {
  Params rest = p;
  std::string text = kernel_param_;
  auto it = rest.find("kernel");
  if (it != rest.end()) {
    text = it->second;
    check_kernel(text);  // a bad expression is an error here
    rest.erase(it);
  }
  params_.set(rest);
  kernel_param_ = text;
}

}  // namespace gp

namespace {

using lin::ParamSpec;
using PK = ParamSpec::Kind;
using gp::KernelExpr;
using gp::backward;
using gp::cholesky64;
using gp::f64_from_hex;
using gp::f64_to_hex;
using gp::forward;

constexpr double kLog2Pi = 1.8378770664093454836;  // log(2 pi) in binary64

struct Posterior {
  std::vector<double> L, a, grad;
  double lml = -std::numeric_limits<double>::infinity();
  bool ok = false;
};

// K, its factor, a = K^-1 y, lml and (want_grad) its gradient for the kernel's free hyper-parameters.
Posterior posterior(const KernelExpr& k, const gp::PairData& pd, double alpha, const std::vector<double>& y,
                    bool want_grad) {
  const int64_t n = pd.a;
  Posterior out;
  std::vector<double> K;
  std::vector<std::vector<double>> G;
  gp::evaluate(k, pd, K, want_grad ? &G : nullptr);
  for (int64_t i = 0; i < n; ++i) K[i * n + i] += alpha;
  for (double v : K)
    if (!std::isfinite(v)) return out;
  if (!cholesky64(K, n, out.L)) return out;
  out.a = y;
  forward(out.L, n, out.a);
  backward(out.L, n, out.a);
  double fit = 0.0, logdet = 0.0;
  for (int64_t i = 0; i < n; ++i) fit += y[i] * out.a[i];
  for (int64_t i = 0; i < n; ++i) logdet += gp::log64(out.L[i * n + i]);
  out.lml = -0.5 * fit - logdet - 0.5 * static_cast<double>(n) * kLog2Pi;
  out.ok = std::isfinite(out.lml);
  if (!want_grad || G.empty()) return out;
  const std::vector<double> Kinv = gp::cholesky_inverse(out.L, n);
  out.grad.assign(G.size(), 0.0);
  for (size_t p = 0; p < G.size(); ++p) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) s += (out.a[i] * out.a[j] - Kinv[i * n + j]) * G[p][i * n + j];
    out.grad[p] = 0.5 * s;
  }
  return out;
}

class GpRegressor final : public gp::KernelParamEstimator {
 public:
  GpRegressor()
      : gp::KernelParamEstimator("gaussian_process_regressor",
                            {{"alpha", PK::number, "1e-10", 0.0},
                             {"n_restarts_optimizer", PK::integer, "0", 0},
                             {"normalize_y", PK::boolean, "false"},
                             {"optimizer", PK::choice, "fmin_l_bfgs_b", 0, {"fmin_l_bfgs_b", "none"}},
                             {"random_state", PK::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    gp::check_fit_rows(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    x_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    y_ = lin::y_to_host(y);
    n_ = n;
    d_ = d;
    normalize_ = params_.boolean("normalize_y");
    y_mean_ = 0.0;
    y_std_ = 1.0;
    if (normalize_) {
      double s = 0.0;
      for (float v : y_) s += static_cast<double>(v);
      y_mean_ = s / static_cast<double>(n);
      double q = 0.0;
      for (float v : y_) q += (static_cast<double>(v) - y_mean_) * (static_cast<double>(v) - y_mean_);
      y_std_ = std::sqrt(q / static_cast<double>(n));
      if (y_std_ == 0.0) y_std_ = 1.0;
    }
    alpha_ = params_.number("alpha");
    kernel_ = gp::parse_kernel(kernel_param_);
    if (params_.text("optimizer") == "fmin_l_bfgs_b" && !gp::free_hypers(kernel_).empty()) optimize();
    refresh(true);
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override { return predict_impl(X, false); }
  Tensor predict_std(const Tensor& X) const { return predict_impl(X, true); }

  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}});
    state["kernel"] = gp::kernel_text(kernel_);
    state["alpha"] = f64_to_hex({alpha_});
    state["normalize_y"] = normalize_;
    state["y_mean_std"] = f64_to_hex({y_mean_, y_std_});
    lin::put_f32s(state, {{"X_train", x_}, {"y_train", y_}});
    state["dual_alpha"] = f64_to_hex(post_.a);
    state["log_marginal_likelihood"] = f64_to_hex({post_.lml});
  }

  void load_state(const nlohmann::json& state) override {
    gp::load_shape(state, name_, n_, d_);
    BL_CHECK(state.contains("kernel") && state["kernel"].is_string(), name_, ": model state: missing kernel");
    kernel_ = gp::parse_kernel(state["kernel"].get<std::string>());
    alpha_ = f64_from_hex(state, "alpha", 1, name_)[0];
    BL_CHECK(state.contains("normalize_y") && state["normalize_y"].is_boolean(), name_, ": model state: missing normalize_y");
    normalize_ = state["normalize_y"].get<bool>();
    const std::vector<double> ms = f64_from_hex(state, "y_mean_std", 2, name_);
    y_mean_ = ms[0];
    y_std_ = ms[1];
    x_ = lin::get_f32(state, "X_train", n_ * d_, name_);
    y_ = lin::get_f32(state, "y_train", n_, name_);
    refresh(false);
    fitted_ = true;
  }

 private:
  std::vector<double> target() const {
    std::vector<double> t(y_.size());
    for (size_t i = 0; i < y_.size(); ++i) t[i] = normalize_ ? (static_cast<double>(y_[i]) - y_mean_) / y_std_ : y_[i];
    return t;
  }

  gp::PairData train_pairs() const {
    return gp::pair_data(x_.data(), n_, x_.data(), n_, d_, gp::uses_dot_product(kernel_), true);
  }

  // L, a and lml at the kernel's current values; not positive definite is an error.
  void refresh(bool fitting) {
    post_ = posterior(kernel_, train_pairs(), alpha_, target(), false);
    BL_CHECK(post_.ok, name_, ": the kernel ", gp::kernel_text(kernel_),
             " plus alpha * I is not positive definite (alpha=", param_text(alpha_),
             fitting ? "); try gradually increasing alpha, or add a WhiteKernel" : ") in the model state");
  }

  void optimize() {
    const gp::PairData pd = train_pairs();
    const std::vector<double> y = target();
    gp::LmlFunction lml = [&](const KernelExpr& k, bool want_grad, double& value, std::vector<double>& grad) {
      Posterior post = posterior(k, pd, alpha_, y, want_grad);
      value = post.lml;
      grad = std::move(post.grad);
      return post.ok;
    };
    gp::maximize_lml(kernel_, lml, params_.integer("n_restarts_optimizer"),
                     static_cast<uint64_t>(params_.integer("random_state")));
  }

  Tensor predict_impl(const Tensor& X, bool want_std) const {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), n = n_;
    const std::vector<float> xs = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<float> out(static_cast<size_t>(m));
    std::vector<double> v(static_cast<size_t>(n));
    gp::for_each_kernel_row(kernel_, xs.data(), m, x_.data(), n, d_, want_std, [&](int64_t i, const double* k, double diag) {
      if (!want_std) {
        double mu = 0.0;
        for (int64_t j = 0; j < n; ++j) mu += k[j] * post_.a[j];
        out[i] = static_cast<float>(mu * y_std_ + y_mean_);
        return;
      }
      for (int64_t j = 0; j < n; ++j) v[j] = k[j];
      forward(post_.L, n, v);
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += v[j] * v[j];
      double var = diag - q;
      if (!(var > 0.0)) var = 0.0;
      out[i] = static_cast<float>(std::sqrt(var * (y_std_ * y_std_)));
    });
    return Tensor::from_vector(out, {m}, X.device());
  }

  KernelExpr kernel_;
  std::vector<float> x_, y_;
  Posterior post_;
  double alpha_ = 1e-10, y_mean_ = 0.0, y_std_ = 1.0;
  bool normalize_ = false;
  int64_t n_ = 0, d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_gaussian_process_regressor() { return std::make_unique<GpRegressor>(); }

Tensor gaussian_process_predict_std(const Estimator& est, const Tensor& X) {
  const auto* gpr = dynamic_cast<const GpRegressor*>(&est);
  BL_CHECK(gpr != nullptr, est.name(), ": predict_std is only for gaussian_process_regressor");
  return gpr->predict_std(X);
}

}  // namespace bl::ml
