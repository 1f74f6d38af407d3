// factor_analysis.cpp: factor_analysis (scikit-learn's FactorAnalysis), the linear Gaussian latent
// model X = mean + z W + noise (noise variances psi) fitted by scikit-learn's SVD-based EM.
//
// mean = column means (op); C = Xc^T Xc / n with Xc = X - mean (the contract GEMM on X's device, the
// same bits everywhere), widened to binary64 on the host; var = diag(C). psi starts at 1. Each
// iteration, in binary64 with fixed order: sp = sqrt(psi) + 1e-12; the squared singular values of
// Xc / (sp sqrt(n)) are the eigenvalues of M = C_ab / (sp_a sp_b), decomposed by symmetric_eigen64
// (Householder and implicit QL); with s the k largest, V their vectors and unexp the sum of the
// others (negatives as 0): W = sqrt(max(s - 1, 0)) V sp (columnwise), loglike = -n / 2 (d ln 2 pi + k +
// sum ln s + unexp + sum ln psi) by host_math's log64; stop when it rose by less than tol, else
// psi = max(var - colsum(W^2), 1e-12). max_iter iterations at most (converged false then).
// transform = (X - mean) P by the GEMM, P = (W / psi)^T (I + (W / psi) W^T)^-1 [d, k], the k x k
// inverse by the gaussian process family's binary64 Cholesky (gp_regressor.h), rounded once.
// components_, noise_variance_, loglike_ rounded once to binary32.
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/projection_state.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/size_limits.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr double kSmall = 1e-12;
constexpr double kLn2Pi = 1.8378770664093454836;

class FactorAnalysis final : public dec::CenteredProjection {
 public:
  FactorAnalysis()
      : dec::CenteredProjection("factor_analysis", {{"max_iter", K::integer, "1000", 1},
                                                {"n_components", K::number_or_word, "none", 1.0, {"none"}},
                                                {"tol", K::number, "0.01", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t k = dec::optional_count(params_, name_, "n_components", d);
    BL_CHECK(k <= d, name_, ": n_components=", k, " must be at most the feature count (n_features=", d, ")");
    check_square_matrix(n, d, "factor_analysis covariance matrix");
    Tensor mu = bl::mean(X, {0});
    mean_ = mu.to(Device::cpu()).contiguous().to_vector<float>();
    Tensor Xc = bl::sub(X, mu);
    std::vector<double> c = dec::to_host64(bl::matmul(Xc, Xc, true, false));
    for (double& v : c) v /= static_cast<double>(n);
    std::vector<double> var(static_cast<size_t>(d)), psi(static_cast<size_t>(d), 1.0), sp(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) var[j] = c[j * d + j];
    const double llconst = static_cast<double>(d) * kLn2Pi + static_cast<double>(k);
    const int64_t max_iter = params_.integer("max_iter");
    const double tol = params_.number("tol");
    std::vector<double> w(static_cast<size_t>(k * d)), m(static_cast<size_t>(d * d));
    loglike_.clear();
    converged_ = false;
    double old_ll = 0.0;
    int64_t it = 0;
    while (it < max_iter) {
      ++it;
      for (int64_t j = 0; j < d; ++j) sp[j] = std::sqrt(psi[j]) + kSmall;
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = 0; b <= a; ++b) m[a * d + b] = c[a * d + b] / (sp[a] * sp[b]);
      SymmetricEigen64 e = symmetric_eigen64(m, d, k, "factor_analysis");
      double ll = llconst;
      for (int64_t t = 0; t < k; ++t) ll += log64(std::max(e.values[t], 0.0));
      double unexp = 0.0;
      for (int64_t t = k; t < d; ++t) unexp += std::max(e.values[t], 0.0);
      ll += unexp;
      for (int64_t j = 0; j < d; ++j) ll += log64(psi[j]);
      ll *= -static_cast<double>(n) / 2.0;
      for (int64_t t = 0; t < k; ++t) {
        const double scale = std::sqrt(std::max(e.values[t] - 1.0, 0.0));
        for (int64_t j = 0; j < d; ++j) w[t * d + j] = scale * e.vectors[t * d + j] * sp[j];
      }
      const bool first = loglike_.empty();
      loglike_.push_back(ll);
      if (!first && ll - old_ll < tol) {
        converged_ = true;
        break;
      }
      old_ll = ll;
      for (int64_t j = 0; j < d; ++j) {
        double s2 = 0.0;
        for (int64_t t = 0; t < k; ++t) s2 += w[t * d + j] * w[t * d + j];
        psi[j] = std::max(var[j] - s2, kSmall);
      }
    }
    n_iter_ = it;
    d_ = d;
    k_ = k;
    components_ = dec::rounded32(w);
    noise_ = dec::rounded32(psi);
    projection_ = projection(w, psi, k, d);
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_iterated_shape(state, d_, k_, n_iter_);
    state["converged"] = converged_;
    lin::put_f32s(state, {{"mean", mean_}, {"components", components_}, {"noise_variance", noise_},
                          {"projection", projection_}});
    std::vector<float> ll(loglike_.begin(), loglike_.end());
    lin::put_f32(state, "loglike", ll);
  }
  void load_state(const nlohmann::json& state) override {
    dec::get_iterated_shape(state, name_, d_, k_, n_iter_);
    BL_CHECK(k_ <= d_, name_, ": model state: n_components ", k_, " > n_features ", d_);
    BL_CHECK(state.contains("converged") && state["converged"].is_boolean(), name_,
             ": state field converged is missing");
    converged_ = state["converged"].get<bool>();
    mean_ = lin::get_f32(state, "mean", d_, name_);
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    noise_ = lin::get_f32(state, "noise_variance", d_, name_);
    projection_ = lin::get_f32(state, "projection", d_ * k_, name_);
    std::vector<float> ll = lin::get_f32(state, "loglike", n_iter_, name_);
    loglike_.assign(ll.begin(), ll.end());
    fitted_ = true;
  }

 private:
  // P [d, k] = (W / psi)^T (I + (W / psi) W^T)^-1 in binary64, rounded once.
  std::vector<float> projection(const std::vector<double>& w, const std::vector<double>& psi, int64_t k,
                                int64_t d) const {
    std::vector<double> wp(static_cast<size_t>(k * d)), a(static_cast<size_t>(k * k)), l;
    for (int64_t t = 0; t < k; ++t)
      for (int64_t j = 0; j < d; ++j) wp[t * d + j] = w[t * d + j] / psi[j];
    for (int64_t s = 0; s < k; ++s)
      for (int64_t t = 0; t < k; ++t) {
        double v = s == t ? 1.0 : 0.0;
        for (int64_t j = 0; j < d; ++j) v += wp[s * d + j] * w[t * d + j];
        a[s * k + t] = v;
      }
    BL_CHECK(gp::cholesky64(a, k, l), name_, ": I + W psi^-1 W^T is not positive definite (non-finite data?)");
    return dec::rounded32(dec::mul64_tn(wp, gp::cholesky_inverse(l, k), k, d, k));
  }

  std::vector<float> components_, noise_;
  std::vector<double> loglike_;
  bool converged_ = false;
};

}  // namespace

std::unique_ptr<Estimator> make_factor_analysis() { return std::make_unique<FactorAnalysis>(); }

}  // namespace bl::ml
