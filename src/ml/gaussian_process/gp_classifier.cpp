// gp_classifier.cpp: gaussian_process_classifier (scikit-learn's GaussianProcessClassifier), the
// Laplace approximation of a Gaussian process with the logistic likelihood (Rasmussen and
// Williams, "Gaussian Processes for Machine Learning", algorithms 3.1, 3.2 and 5.1), one binary
// problem for two classes (positive: classes[1]) and one per class otherwise (one-vs-rest).
//
// As gaussian_process_regressor, everything runs on the host in binary64 in a fixed order with
// add, sub, mul, div and sqrt only and the binary64 exp64 / log64 of ml/host_math.h, reusing its
// pieces (gp_regressor.h: Cholesky factor, substitutions, inverse from the factor, the L-BFGS
// restart schedule; gp_kernel_expr.h: kernels and their gradients). Results are rounded to binary32
// once.
//
// Binary problem on training rows X [n, d] with targets t_i in {0, 1}, K = kernel(X, X):
//   mode (algorithm 3.1): f = 0; for at most max_iter_predict steps: pi = sigmoid(f),
//   W = pi (1 - pi), s = sqrt(W), B = I + s_i K_ij s_j, L = cholesky(B), b = W f + (t - pi),
//   a = b - s (L L^T)^-1 (s K b), f = K a, Z = -0.5 a.f - sum softplus(-(2 t - 1) f) - sum log L_ii;
//   stop when Z - Z_previous < 1e-10 (Z_previous starts at -inf), the log marginal likelihood being
//   the last Z that did not stop (scikit-learn's loop); pi, s and L are those of the last step's
//   start, a of its end.
//   gradient in log(theta) (algorithm 5.1): R = s (B^-1) s, c_j = sum_i (L^-1 s K)_ij^2,
//   s2_j = -0.5 (K_jj - c_j) pi_j (1 - pi_j) (1 - 2 pi_j); for each free hyper-parameter with
//   dK = dK / d log(theta): s1 = 0.5 a^T dK a - 0.5 sum_ij R_ij dK_ij, v = dK (t - pi),
//   s3 = v - K R v, gradient = s1 + s2.s3.
//   optimizer=fmin_l_bfgs_b maximizes the log marginal likelihood over the free hyper-parameters by
//   the regressor's schedule (n_restarts_optimizer, random_state); a matrix B that is not positive
//   definite scores as undefined. Each one-vs-rest problem optimizes its own copy of the kernel.
// Predict at X* (algorithm 3.2, row blocks): k* = kernel(X*, X); f* = k*.(t - pi);
//   var = diag kernel(X*) - |L^-1 (s k*)|^2; the class probability is the logistic function
//   integrated against N(f*, var) by the erf approximation scikit-learn uses (Williams and
//   Barber 1998): p = sum_k c_k I_k + 0.5 sum_k c_k with I_k = 0.5 erf(l_k f* / sqrt(1 + 2 l_k^2 var)),
//   l = (0.41, 0.4, 0.37, 0.44, 0.39), c = (-1854.8214151, 3516.89893646, 221.29346712,
//   128.12323805, -2010.49422654) (this is scikit-learn's sqrt(pi / alpha) erf(gamma
//   sqrt(alpha / (alpha + l^2))) / (2 sqrt(2 pi var)), alpha = 1 / (2 var), simplified so that
//   var = 0 is defined). erf by its series 2/sqrt(pi) e^(-x^2) sum 2^k x^(2k+1) / (1 3 ... (2k+1))
//   (positive terms, summed until a term is below 2^-60 of the sum), 1 beyond |x| = 6.
//   Two classes: predict_proba (1 - p, p), predict classes[1] where f* > 0; more: p per class
//   normalized by their sum, predict the class of largest p (the last of ties, as scikit-learn's
//   one-vs-rest).
// The default kernel (kernel=none) is scikit-learn's ConstantKernel(1, fixed) * RBF(1, fixed), so
// nothing is optimized. log_marginal_likelihood: the mean over the problems.
// State: the training rows and class of each row, each problem's fitted kernel (text, 17 digits)
// and log marginal likelihood; load recomputes the mode from them by the same code (same bytes).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "ml/gaussian_process/gp_kernel_expr.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using PK = ParamSpec::Kind;
using gp::KernelExpr;

constexpr const char* kDefaultKernel = "ConstantKernel(1.0, \"fixed\") * RBF(1.0, \"fixed\")";
constexpr double kTwoOverSqrtPi = 1.1283791670955125739;  // 2 / sqrt(pi) in binary64
constexpr double kLambda[5] = {0.41, 0.4, 0.37, 0.44, 0.39};
constexpr double kCoef[5] = {-1854.8214151, 3516.89893646, 221.29346712, 128.12323805, -2010.49422654};

double erf64(double x) {
  const double ax = std::abs(x);
  if (ax >= 6.0) return x < 0.0 ? -1.0 : 1.0;
  const double x2 = ax * ax;
  double term = ax, sum = ax;
  for (int k = 0; k < 400; ++k) {
    term = term * (2.0 * x2) / static_cast<double>(2 * k + 3);
    sum += term;
    if (term < sum * 0x1p-60) break;
  }
  const double r = kTwoOverSqrtPi * gp::exp64(-x2) * sum;
  return x < 0.0 ? -r : r;
}

double sigmoid64(double f) {
  if (f >= 0.0) return 1.0 / (1.0 + gp::exp64(-f));
  const double e = gp::exp64(f);
  return e / (1.0 + e);
}

// log(1 + e^z)
double softplus64(double z) { return std::max(z, 0.0) + gp::log64(1.0 + gp::exp64(-std::abs(z))); }

// The Laplace approximation of one binary problem at one kernel matrix.
struct Laplace {
  std::vector<double> pi, s, L, a;
  double lml = -std::numeric_limits<double>::infinity();
  bool ok = false;
};

Laplace laplace_mode(const std::vector<double>& K, int64_t n, const std::vector<double>& t, int64_t max_iter) {
  Laplace out;
  std::vector<double> f(static_cast<size_t>(n), 0.0), B(static_cast<size_t>(n * n)), b(static_cast<size_t>(n)),
      v(static_cast<size_t>(n));
  out.pi.resize(static_cast<size_t>(n));
  out.s.resize(static_cast<size_t>(n));
  out.a.resize(static_cast<size_t>(n));
  double prev = -std::numeric_limits<double>::infinity();
  for (int64_t it = 0; it < max_iter; ++it) {
    for (int64_t i = 0; i < n; ++i) {
      out.pi[i] = sigmoid64(f[i]);
      out.s[i] = std::sqrt(out.pi[i] * (1.0 - out.pi[i]));
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) B[i * n + j] = (i == j ? 1.0 : 0.0) + out.s[i] * K[i * n + j] * out.s[j];
    if (!gp::cholesky64(B, n, out.L)) return out;
    for (int64_t i = 0; i < n; ++i) b[i] = out.pi[i] * (1.0 - out.pi[i]) * f[i] + (t[i] - out.pi[i]);
    for (int64_t i = 0; i < n; ++i) {
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += K[i * n + j] * b[j];
      v[i] = out.s[i] * q;
    }
    gp::forward(out.L, n, v);
    gp::backward(out.L, n, v);
    for (int64_t i = 0; i < n; ++i) out.a[i] = b[i] - out.s[i] * v[i];
    for (int64_t i = 0; i < n; ++i) {
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += K[i * n + j] * out.a[j];
      f[i] = q;
    }
    double fit = 0.0, like = 0.0, logdet = 0.0;
    for (int64_t i = 0; i < n; ++i) fit += out.a[i] * f[i];
    for (int64_t i = 0; i < n; ++i) like += softplus64(-(2.0 * t[i] - 1.0) * f[i]);
    for (int64_t i = 0; i < n; ++i) logdet += gp::log64(out.L[i * n + i]);
    const double z = -0.5 * fit - like - logdet;
    if (!std::isfinite(z)) return out;
    if (z - prev < 1e-10) break;
    prev = z;
  }
  out.lml = prev;
  out.ok = std::isfinite(prev);
  return out;
}

// d lml / d log(theta) of each kernel gradient G[p] (algorithm 5.1).
std::vector<double> laplace_grad(const Laplace& lp, const std::vector<double>& K,
                                 const std::vector<std::vector<double>>& G, int64_t n, const std::vector<double>& t) {
  const std::vector<double> Binv = gp::cholesky_inverse(lp.L, n);
  std::vector<double> R(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) R[i * n + j] = lp.s[i] * Binv[i * n + j] * lp.s[j];
  std::vector<double> s2(static_cast<size_t>(n)), col(static_cast<size_t>(n)), r(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) col[i] = lp.s[i] * K[i * n + j];
    gp::forward(lp.L, n, col);
    double c = 0.0;
    for (int64_t i = 0; i < n; ++i) c += col[i] * col[i];
    const double p = lp.pi[j];
    s2[j] = -0.5 * (K[j * n + j] - c) * (p * (1.0 - p) * (1.0 - 2.0 * p));
  }
  for (int64_t i = 0; i < n; ++i) r[i] = t[i] - lp.pi[i];
  std::vector<double> grad(G.size()), v(static_cast<size_t>(n)), Rv(static_cast<size_t>(n));
  for (size_t p = 0; p < G.size(); ++p) {
    const std::vector<double>& D = G[p];
    double quad = 0.0, trace = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += D[i * n + j] * lp.a[j];
      quad += lp.a[i] * q;
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) trace += R[i * n + j] * D[i * n + j];
    const double s1 = 0.5 * quad - 0.5 * trace;
    for (int64_t i = 0; i < n; ++i) {
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += D[i * n + j] * r[j];
      v[i] = q;
    }
    for (int64_t i = 0; i < n; ++i) {
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += R[i * n + j] * v[j];
      Rv[i] = q;
    }
    double s23 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double q = 0.0;
      for (int64_t j = 0; j < n; ++j) q += K[i * n + j] * Rv[j];
      s23 += s2[i] * (v[i] - q);
    }
    grad[p] = s1 + s23;
  }
  return grad;
}

// The probability of the positive class from the latent mean and variance.
double class_probability(double f, double var) {
  double sum = 0.0, csum = 0.0;
  for (int k = 0; k < 5; ++k) sum += kCoef[k] * (0.5 * erf64(kLambda[k] * f / std::sqrt(1.0 + 2.0 * kLambda[k] * kLambda[k] * var)));
  for (int k = 0; k < 5; ++k) csum += kCoef[k];
  return sum + 0.5 * csum;
}

// One binary problem: its kernel, targets and Laplace approximation.
struct Problem {
  KernelExpr kernel;
  std::vector<double> t;
  Laplace lp;
};

class GpClassifier final : public gp::KernelParamEstimator {
 public:
  GpClassifier()
      : gp::KernelParamEstimator("gaussian_process_classifier",
                            {{"max_iter_predict", PK::integer, "100", 1},
                             {"multi_class", PK::choice, "one_vs_rest", 0, {"one_vs_rest", "one_vs_one"}},
                             {"n_restarts_optimizer", PK::integer, "0", 0},
                             {"optimizer", PK::choice, "fmin_l_bfgs_b", 0, {"fmin_l_bfgs_b", "none"}},
                             {"random_state", PK::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    gp::check_fit_rows(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(params_.text("multi_class") == "one_vs_rest", name_,
             ": multi_class=one_vs_one is not supported; use multi_class=one_vs_rest");
    lin::EncodedLabels enc = lin::encode_labels(name_, y);
    x_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    n_ = n;
    d_ = d;
    classes_ = enc.classes;
    label_dtype_ = y.dtype();
    index_ = enc.index;
    max_iter_ = params_.integer("max_iter_predict");
    const KernelExpr given = parse(kernel_param_);
    const bool optimize = params_.text("optimizer") == "fmin_l_bfgs_b";
    const gp::PairData pd = train_pairs(given);
    problems_.assign(static_cast<size_t>(outputs()), Problem{});
    for (int64_t k = 0; k < outputs(); ++k) {
      Problem& pr = problems_[k];
      pr.kernel = given;
      pr.t = targets(k);
      if (optimize && !gp::free_hypers(pr.kernel).empty()) {
        gp::LmlFunction lml = [&](const KernelExpr& ker, bool want_grad, double& value, std::vector<double>& grad) {
          std::vector<double> K;
          std::vector<std::vector<double>> G;
          gp::evaluate(ker, pd, K, want_grad ? &G : nullptr);
          const Laplace lp = laplace_mode(K, n_, pr.t, max_iter_);
          value = lp.lml;
          if (lp.ok && want_grad) grad = laplace_grad(lp, K, G, n_, pr.t);
          return lp.ok;
        };
        gp::maximize_lml(pr.kernel, lml, params_.integer("n_restarts_optimizer"),
                         static_cast<uint64_t>(params_.integer("random_state")));
      }
    }
    refresh(true);
    fitted_ = true;
    return *this;
  }

  Tensor predict_proba(const Tensor& X) const override {
    const std::vector<double> p = probabilities(X, nullptr);
    const int64_t m = X.dim(0), c = static_cast<int64_t>(classes_.size());
    std::vector<float> out(static_cast<size_t>(m * c));
    for (int64_t i = 0; i < m; ++i) {
      if (c == 2) {
        out[i * 2] = static_cast<float>(1.0 - p[i]);
        out[i * 2 + 1] = static_cast<float>(p[i]);
        continue;
      }
      double s = 0.0;
      for (int64_t k = 0; k < c; ++k) s += p[i * c + k];
      for (int64_t k = 0; k < c; ++k) out[i * c + k] = static_cast<float>(p[i * c + k] / s);
    }
    return Tensor::from_vector(out, {m, c}, X.device());
  }

  Tensor predict(const Tensor& X) const override {
    std::vector<double> latent;
    const std::vector<double> p = probabilities(X, &latent);
    const int64_t m = X.dim(0), c = static_cast<int64_t>(classes_.size());
    std::vector<int64_t> idx(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      if (c == 2) {
        idx[i] = latent[i] > 0.0 ? 1 : 0;
        continue;
      }
      int64_t best = 0;
      for (int64_t k = 1; k < c; ++k)
        if (p[i * c + k] >= p[i * c + best]) best = k;
      idx[i] = best;
    }
    return lin::labels_from_index(classes_, Tensor::from_vector(idx, {m}, X.device()), label_dtype_, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}, {"n_classes", static_cast<int64_t>(classes_.size())}});
    lin::put_labels(state, classes_, label_dtype_);
    state["max_iter_predict"] = max_iter_;
    lin::put_f32(state, "X_train", x_);
    state["train_class"] = i64_to_hex(index_);
    nlohmann::json kernels = nlohmann::json::array();
    std::vector<double> lmls;
    double mean = 0.0;
    for (const Problem& pr : problems_) {
      kernels.push_back(gp::kernel_text(pr.kernel));
      lmls.push_back(pr.lp.lml);
      mean += pr.lp.lml;
    }
    state["kernels"] = kernels;
    state["log_marginal_likelihoods"] = gp::f64_to_hex(lmls);
    state["log_marginal_likelihood"] = gp::f64_to_hex({mean / static_cast<double>(problems_.size())});
  }

  void load_state(const nlohmann::json& state) override {
    gp::load_shape(state, name_, n_, d_);
    const int64_t c = lin::get_int(state, "n_classes", 2, name_);
    BL_CHECK(c <= n_, name_, ": model state: n_classes=", c, " exceeds n_samples");
    classes_ = lin::get_f32(state, "classes", c, name_);
    label_dtype_ = lin::get_label_dtype(state);
    max_iter_ = lin::get_int(state, "max_iter_predict", 1, name_);
    BL_CHECK(max_iter_ <= 1000000, name_, ": model state: max_iter_predict=", max_iter_, " is above 10^6");
    x_ = lin::get_f32(state, "X_train", n_ * d_, name_);
    BL_CHECK(state.contains("train_class") && state["train_class"].is_string(), name_, ": model state: missing train_class");
    index_ = i64_from_hex(state["train_class"].get<std::string>(), "train_class");
    BL_CHECK(static_cast<int64_t>(index_.size()) == n_, name_, ": model state: train_class holds ", index_.size(),
             " values, expected ", n_);
    for (int64_t v : index_) BL_CHECK(v >= 0 && v < c, name_, ": model state: train_class out of range");
    BL_CHECK(state.contains("kernels") && state["kernels"].is_array() &&
                 static_cast<int64_t>(state["kernels"].size()) == outputs(),
             name_, ": model state: kernels must list ", outputs(), " kernel expressions");
    problems_.assign(static_cast<size_t>(outputs()), Problem{});
    for (int64_t k = 0; k < outputs(); ++k) {
      BL_CHECK(state["kernels"][k].is_string(), name_, ": model state: kernels[", k, "] is not text");
      problems_[k].kernel = parse(state["kernels"][k].get<std::string>());
      problems_[k].t = targets(k);
    }
    // The stored likelihoods: one per binary problem and their mean (read, so a damaged field is an
    // error rather than a silent pass-through to Python's log_marginal_likelihood_value_).
    gp::f64_from_hex(state, "log_marginal_likelihoods", outputs(), name_);
    gp::f64_from_hex(state, "log_marginal_likelihood", 1, name_);
    refresh(false);
    fitted_ = true;
  }

 private:
  void check_kernel(const std::string& text) const override { parse(text); }
  // The kernel expression (none: the default), its errors naming this estimator.
  KernelExpr parse(const std::string& text) const {
    try {
      return gp::parse_kernel(text == "none" || text == "None" ? std::string(kDefaultKernel) : text);
    } catch (const Error& e) {
      const std::string who = "gaussian_process_regressor", msg = e.what();
      throw Error(msg.rfind(who, 0) == 0 ? name_ + msg.substr(who.size()) : msg);
    }
  }
  int64_t outputs() const { return classes_.size() == 2 ? 1 : static_cast<int64_t>(classes_.size()); }
  std::vector<double> targets(int64_t k) const {
    const int64_t positive = outputs() == 1 ? 1 : k;
    std::vector<double> t(static_cast<size_t>(n_));
    for (int64_t i = 0; i < n_; ++i) t[i] = index_[i] == positive ? 1.0 : 0.0;
    return t;
  }
  gp::PairData train_pairs(const KernelExpr& k) const {
    return gp::pair_data(x_.data(), n_, x_.data(), n_, d_, gp::uses_dot_product(k), true);
  }

  // The Laplace approximation of every problem at its kernel's current values.
  void refresh(bool fitting) {
    for (Problem& pr : problems_) {
      std::vector<double> K;
      gp::evaluate(pr.kernel, train_pairs(pr.kernel), K, nullptr);
      pr.lp = laplace_mode(K, n_, pr.t, max_iter_);
      BL_CHECK(pr.lp.ok, name_, ": the Laplace approximation failed for the kernel ", gp::kernel_text(pr.kernel),
               fitting ? " (I + W^1/2 K W^1/2 not positive definite or a non-finite likelihood)" : " in the model state");
    }
  }

  // The positive-class probability of every problem [m, outputs] (binary64) and, for one problem,
  // the latent mean (latent != nullptr).
  std::vector<double> probabilities(const Tensor& X, std::vector<double>* latent) const {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), n = n_, P = outputs();
    const std::vector<float> xs = X.to(Device::cpu()).contiguous().to_vector<float>();
    const int64_t stride = P == 1 ? 1 : static_cast<int64_t>(classes_.size());
    std::vector<double> out(static_cast<size_t>(m * stride));
    if (latent) latent->assign(static_cast<size_t>(m), 0.0);
    std::vector<double> v(static_cast<size_t>(n)), r(static_cast<size_t>(n));
    for (int64_t k = 0; k < P; ++k) {
      const Problem& pr = problems_[k];
      for (int64_t j = 0; j < n; ++j) r[j] = pr.t[j] - pr.lp.pi[j];
      gp::for_each_kernel_row(pr.kernel, xs.data(), m, x_.data(), n, d_, true, [&](int64_t i, const double* kr, double diag) {
        double f = 0.0;
        for (int64_t j = 0; j < n; ++j) f += kr[j] * r[j];
        for (int64_t j = 0; j < n; ++j) v[j] = pr.lp.s[j] * kr[j];
        gp::forward(pr.lp.L, n, v);
        double q = 0.0;
        for (int64_t j = 0; j < n; ++j) q += v[j] * v[j];
        out[i * stride + k] = class_probability(f, diag - q);
        if (latent && P == 1) (*latent)[i] = f;
      });
    }
    return out;
  }

  std::vector<Problem> problems_;
  std::vector<float> x_, classes_;
  std::vector<int64_t> index_;
  DType label_dtype_ = DType::f32;
  int64_t n_ = 0, d_ = 0, max_iter_ = 100;
};

}  // namespace

std::unique_ptr<Estimator> make_gaussian_process_classifier() { return std::make_unique<GpClassifier>(); }

}  // namespace bl::ml
