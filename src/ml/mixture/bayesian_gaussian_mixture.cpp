// bayesian_gaussian_mixture.cpp: bayesian_gaussian_mixture (scikit-learn's BayesianGaussianMixture),
// variational inference of a mixture of n_components Gaussians with a Dirichlet process (stick
// breaking) or Dirichlet distribution prior on the weights, a Gaussian prior on the means and a
// Wishart prior on the precisions, for full, tied, diag or spherical covariances.
//
// Fit reads X once to the host and runs in binary64 in a fixed order, as gaussian_mixture (its
// initial responsibilities, M-step statistics, precision Cholesky factors and log-sum-exp E-step are
// shared: mixture_common.h), so the fit is the same at every thread count and on every device. The
// variational terms use ml/host_math.h's binary64 log64, digamma64 and lgamma64.
//
// Priors (none = the default): weight_concentration_prior 1 / n_components; mean_precision_prior 1;
// mean_prior the column means of X (a number c: c in every column); degrees_of_freedom_prior
// n_features (must be > n_features - 1); covariance_prior the sample covariance of X with n - 1
// (full, tied), its diagonal (diag) or the mean of that diagonal (spherical); a number c gives c I.
// Update from the statistics nk, xk, sk of the responsibilities (sk includes reg_covar), with
// m0 = mean_prior, b0 = mean_precision_prior, v0 = degrees_of_freedom_prior, C0 = covariance_prior:
//   weights: dirichlet_process a_j = 1 + nk_j, b_j = wcp + sum_{t>j} nk_t (summed from the last);
//            dirichlet_distribution a_j = wcp + nk_j;
//   b_j = b0 + nk_j, means_j = (b0 m0 + nk_j xk_j) / b_j, d_j = xk_j - m0;
//   full:      v_j = v0 + nk_j, cov_j = (C0 + nk_j sk_j + (nk_j b0 / b_j) d_j d_j^T) / v_j;
//   tied:      v = v0 + sum nk / k, cov = (C0 + sk sum nk / k + (b0 / k) sum_j (nk_j / b_j) d_j d_j^T) / v;
//   diag:      v_j = v0 + nk_j, cov_ja = (C0_a + nk_j (sk_ja + (b0 / b_j) d_ja^2)) / v_j;
//   spherical: v_j = v0 + nk_j, cov_j = (C0 + nk_j (sk_j + (b0 / b_j) mean_a d_ja^2)) / v_j;
// then the precision Cholesky factors of cov. E-step: the weighted log probability is the Gaussian
// one of gaussian_mixture with log_det_j = sum log diag P_j and, in place of log weight_j,
//   -d/2 log v_j + (d log 2 + sum_{i<d} psi((v_j - i) / 2) - d / b_j) / 2 + E[log pi_j],
// E[log pi_j] = psi(a_j) - psi(a_j + b_j) + sum_{t<j} (psi(b_t) - psi(a_t + b_t)) (process) or
// psi(a_j) - psi(sum a) (distribution). The lower bound after each M-step, from the E-step's
// log-responsibilities log r_ij = w_ij - l_i and the updated parameters:
//   -sum r log r - sum_j W_j - N - d/2 sum_j log b_j, W_j = -(v_j (log_det_j - d/2 log v_j) +
//   v_j d/2 log 2 + sum_{i<d} lnGamma((v_j - i) / 2)) (tied: k W), N = -sum_j (lnGamma a_j +
//   lnGamma b_j - lnGamma(a_j + b_j)) (process) or lnGamma(sum a) - sum_j lnGamma a_j.
// EM stops when the lower bound moves by less than tol or after max_iter iterations (a
// ConvergenceWarning); the best of n_init runs by lower bound is kept (the first on ties). weights_
// are the expected weights: a_j / (a_j + b_j) prod_{t<j} b_t / (a_t + b_t), normalized (process), or
// a_j / sum a. Parameters are rounded to binary32 once; predict / predict_proba / score_samples /
// score evaluate the E-step from the stored binary32 parameters.
#include <cmath>
#include <limits>
#include <string>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml/host_math.h"
#include "ml/mixture/mixture_common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using namespace mixture;

constexpr double kLog2 = 0.69314718055994530942;

// The variational parameters beside the mixture's means and covariances.
struct Posterior {
  bool process = true;             // dirichlet_process (a, b) or dirichlet_distribution (a)
  std::vector<double> a, b;        // weight concentrations
  std::vector<double> mean_prec;   // b_j
  std::vector<double> dof;         // v_j (one for tied)
  double dof_of(int64_t j) const { return dof.size() == 1 ? dof[0] : dof[j]; }
};

struct Priors {
  double wcp = 0, b0 = 0, v0 = 0;
  std::vector<double> m0, c0;  // c0: d x d (full, tied), d (diag), 1 (spherical)
};

// m.log_det and m.log_w (the expected log weights plus the Wishart terms) of the header.
void posterior_logs(Mixture& m, const Posterior& q) {
  const int64_t k = m.k, d = m.d;
  const double dd = static_cast<double>(d);
  m.log_det = sum_log_diag(m, [](double v) { return log64(v); });
  m.log_w.assign(static_cast<size_t>(k), 0.0);
  double sum_a = 0.0, stick = 0.0;
  if (!q.process)
    for (int64_t j = 0; j < k; ++j) sum_a += q.a[j];
  const double psi_sum_a = q.process ? 0.0 : digamma64(sum_a);
  for (int64_t j = 0; j < k; ++j) {
    double log_weight;
    if (q.process) {
      const double psi_ab = digamma64(q.a[j] + q.b[j]);
      log_weight = digamma64(q.a[j]) - psi_ab + stick;
      stick += digamma64(q.b[j]) - psi_ab;
    } else {
      log_weight = digamma64(q.a[j]) - psi_sum_a;
    }
    const double v = q.dof_of(j);
    double psi = 0.0;
    for (int64_t i = 0; i < d; ++i) psi += digamma64(0.5 * (v - static_cast<double>(i)));
    const double log_lambda = dd * kLog2 + psi;
    m.log_w[j] = (-0.5 * dd * log64(v) + 0.5 * (log_lambda - dd / q.mean_prec[j])) + log_weight;
  }
}

// The update of the header from the statistics g (weights = nk, means = xk, cov = sk).
void update(Mixture& m, Posterior& q, const Mixture& g, const Priors& p, const std::string& est) {
  const int64_t k = m.k, d = m.d;
  const std::vector<double>& nk = g.weights;
  q.a.assign(static_cast<size_t>(k), 0.0);
  q.b.assign(q.process ? static_cast<size_t>(k) : 0, 0.0);
  if (q.process) {
    double tail = 0.0;
    for (int64_t j = k - 1; j >= 0; --j) {
      q.a[j] = 1.0 + nk[j];
      q.b[j] = p.wcp + tail;
      tail += nk[j];
    }
  } else {
    for (int64_t j = 0; j < k; ++j) q.a[j] = p.wcp + nk[j];
  }
  q.mean_prec.assign(static_cast<size_t>(k), 0.0);
  m.means.assign(static_cast<size_t>(k * d), 0.0);
  std::vector<double> diff(static_cast<size_t>(k * d));
  for (int64_t j = 0; j < k; ++j) {
    q.mean_prec[j] = p.b0 + nk[j];
    for (int64_t a = 0; a < d; ++a) {
      m.means[j * d + a] = (p.b0 * p.m0[a] + nk[j] * g.means[j * d + a]) / q.mean_prec[j];
      diff[j * d + a] = g.means[j * d + a] - p.m0[a];
    }
  }
  m.cov.assign(g.cov.size(), 0.0);
  const double kk = static_cast<double>(k);
  if (m.type == CovType::tied) {
    double total = 0.0;
    for (int64_t j = 0; j < k; ++j) total += nk[j];
    const double v = p.v0 + total / kk;
    q.dof.assign(1, v);
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) {
        double s = 0.0;
        for (int64_t j = 0; j < k; ++j) s += nk[j] / q.mean_prec[j] * diff[j * d + a] * diff[j * d + b];
        m.cov[a * d + b] = (p.c0[a * d + b] + g.cov[a * d + b] * total / kk + p.b0 / kk * s) / v;
      }
  } else {
    q.dof.assign(static_cast<size_t>(k), 0.0);
    for (int64_t j = 0; j < k; ++j) {
      const double v = p.v0 + nk[j], shrink = p.b0 / q.mean_prec[j];
      q.dof[j] = v;
      const double* dj = &diff[j * d];
      if (m.type == CovType::full) {
        for (int64_t a = 0; a < d; ++a)
          for (int64_t b = 0; b < d; ++b)
            m.cov[j * d * d + a * d + b] =
                (p.c0[a * d + b] + nk[j] * g.cov[j * d * d + a * d + b] + nk[j] * p.b0 / q.mean_prec[j] * dj[a] * dj[b]) / v;
      } else if (m.type == CovType::diag) {
        for (int64_t a = 0; a < d; ++a)
          m.cov[j * d + a] = (p.c0[a] + nk[j] * (g.cov[j * d + a] + shrink * dj[a] * dj[a])) / v;
      } else {
        double s = 0.0;
        for (int64_t a = 0; a < d; ++a) s += dj[a] * dj[a];
        m.cov[j] = (p.c0[0] + nk[j] * (g.cov[j] + shrink * (s / static_cast<double>(d)))) / v;
      }
    }
  }
  compute_precisions(m, est);
  posterior_logs(m, q);
}

// The lower bound of the header from the E-step's w, l and resp and the updated parameters.
double lower_bound(const Mixture& m, const Posterior& q, const std::vector<double>& w, const std::vector<double>& l,
                   const std::vector<double>& resp, int64_t n) {
  const int64_t k = m.k, d = m.d;
  const double dd = static_cast<double>(d);
  double ent = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) ent += resp[i * k + j] * (w[i * k + j] - l[i]);
  auto wishart = [&](int64_t j) {
    const double v = q.dof_of(j);
    double lg = 0.0;
    for (int64_t i = 0; i < d; ++i) lg += lgamma64(0.5 * (v - static_cast<double>(i)));
    const double log_det_chol = m.log_det[j] - 0.5 * dd * log64(v);
    return -(v * log_det_chol + v * dd * 0.5 * kLog2 + lg);
  };
  double log_wishart = 0.0;
  if (m.type == CovType::tied) {
    log_wishart = static_cast<double>(k) * wishart(0);
  } else {
    for (int64_t j = 0; j < k; ++j) log_wishart += wishart(j);
  }
  double log_norm_weight = 0.0;
  if (q.process) {
    double s = 0.0;
    for (int64_t j = 0; j < k; ++j) s += lgamma64(q.a[j]) + lgamma64(q.b[j]) - lgamma64(q.a[j] + q.b[j]);
    log_norm_weight = -s;
  } else {
    double sum_a = 0.0, s = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      sum_a += q.a[j];
      s += lgamma64(q.a[j]);
    }
    log_norm_weight = lgamma64(sum_a) - s;
  }
  double log_mp = 0.0;
  for (int64_t j = 0; j < k; ++j) log_mp += log64(q.mean_prec[j]);
  return -ent - log_wishart - log_norm_weight - 0.5 * dd * log_mp;
}

// The expected weights of the header.
std::vector<double> expected_weights(const Posterior& q, int64_t k) {
  std::vector<double> wt(static_cast<size_t>(k));
  double total = 0.0;
  if (q.process) {
    double stick = 1.0;
    for (int64_t j = 0; j < k; ++j) {
      const double s = q.a[j] + q.b[j];
      wt[j] = q.a[j] / s * stick;
      stick *= q.b[j] / s;
    }
  } else {
    wt = q.a;
  }
  for (int64_t j = 0; j < k; ++j) total += wt[j];
  for (double& v : wt) v /= total;
  return wt;
}

std::vector<float> to_f32(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

class BayesianGaussianMixture final : public MixtureEstimator {
 public:
  BayesianGaussianMixture()
      : MixtureEstimator(
            "bayesian_gaussian_mixture",
            {{"covariance_prior", K::number_or_word, "none", 0.0, {"none"}, true},
             {"covariance_type", K::choice, "full", 0, {"full", "tied", "diag", "spherical"}},
             {"degrees_of_freedom_prior", K::number_or_word, "none", 0.0, {"none"}, true},
             {"init_params", K::choice, "kmeans", 0, {"kmeans", "k-means++", "random", "random_from_data"}},
             {"max_iter", K::integer, "100", 0},
             {"mean_precision_prior", K::number_or_word, "none", 0.0, {"none"}, true},
             {"mean_prior", K::number_or_word, "none", -1e308, {"none"}},
             {"n_components", K::integer, "1", 1},
             {"n_init", K::integer, "1", 1},
             {"random_state", K::integer, "0", 0},
             {"reg_covar", K::number, "1e-06", 0.0},
             {"tol", K::number, "0.001", 0.0},
             {"weight_concentration_prior", K::number_or_word, "none", 0.0, {"none"}, true},
             {"weight_concentration_prior_type", K::choice, "dirichlet_process", 0,
              {"dirichlet_process", "dirichlet_distribution"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    const FitSetup f = fit_setup(name_, params_, X);
    const int64_t n = f.n, k = f.k;
    const bool process = params_.text("weight_concentration_prior_type") == "dirichlet_process";
    const Priors p = priors(f.x, n, f.d, k, f.type);

    // A run's state: the mixture m, the posterior q and the statistics g of the responsibilities.
    struct Run {
      Mixture m, g;
      Posterior q;
    };
    std::vector<double> w, l, resp;
    auto start = [&](int64_t t) {
      Run r;
      r.m.type = r.g.type = f.type;
      r.m.k = r.g.k = k;
      r.m.d = r.g.d = f.d;
      r.q.process = process;
      resp = initial_resp(X, f.x, n, f.d, k, f.init, static_cast<uint64_t>(f.random_state + t));
      gaussian_statistics(r.g, f.x, n, resp, f.reg);
      update(r.m, r.q, r.g, p, name_);
      return r;
    };
    auto step = [&](Run& r) {
      weighted_log_prob(r.m, f.x, n, w);
      normalize(w, n, k, l, &resp);
      gaussian_statistics(r.g, f.x, n, resp, f.reg);
      update(r.m, r.q, r.g, p, name_);
      const double lb = lower_bound(r.m, r.q, w, l, resp, n);
      BL_CHECK(!std::isnan(lb), name_, ": the lower bound is NaN");
      return lb;
    };
    BestRun<Run> best = best_of_runs<Run>(f, name_ + " VI", start, step);
    const Posterior& best_q = best.state.q;
    best.state.m.weights = expected_weights(best_q, k);
    store(best.state.m, best.n_iter, best.converged, best.bound);
    process_ = process;
    a_ = to_f32(best_q.a);
    b_ = to_f32(best_q.b);
    mean_prec_ = to_f32(best_q.mean_prec);
    dof_ = to_f32(best_q.dof);
    derive();
    fitted_ = true;
    return *this;
  }

 protected:
  void save_extra(nlohmann::json& state) const override {
    state["weight_concentration_prior_type"] = process_ ? "dirichlet_process" : "dirichlet_distribution";
    std::vector<float> wc = a_;
    wc.insert(wc.end(), b_.begin(), b_.end());
    lin::put_f32s(state, {{"weight_concentration", wc}, {"mean_precision", mean_prec_}, {"degrees_of_freedom", dof_}});
  }

  void load_extra(const nlohmann::json& state) override {
    BL_CHECK(state.contains("weight_concentration_prior_type") && state["weight_concentration_prior_type"].is_string(),
             name_, ": model state: weight_concentration_prior_type must be dirichlet_process or dirichlet_distribution");
    const std::string t = state["weight_concentration_prior_type"].get<std::string>();
    BL_CHECK(t == "dirichlet_process" || t == "dirichlet_distribution", name_,
             ": model state: weight_concentration_prior_type must be dirichlet_process or dirichlet_distribution, got ", t);
    process_ = t == "dirichlet_process";
    std::vector<float> wc = lin::get_f32(state, "weight_concentration", process_ ? 2 * k_ : k_, name_);
    a_.assign(wc.begin(), wc.begin() + k_);
    b_.assign(wc.begin() + k_, wc.end());
    mean_prec_ = lin::get_f32(state, "mean_precision", k_, name_);
    dof_ = lin::get_f32(state, "degrees_of_freedom", type_ == CovType::tied ? 1 : k_, name_);
    for (const auto* v : {&a_, &b_, &mean_prec_})
      for (float f : *v)
        BL_CHECK(f > 0.0f && std::isfinite(f), name_,
                 ": model state: weight_concentration and mean_precision must be positive, got ", f);
    for (float f : dof_)
      BL_CHECK(f > static_cast<float>(d_ - 1) && std::isfinite(f), name_,
               ": model state: degrees_of_freedom must be > n_features - 1, got ", f);
  }

  void derive_logs(Mixture& m) const override {
    Posterior q;
    q.process = process_;
    q.a.assign(a_.begin(), a_.end());
    q.b.assign(b_.begin(), b_.end());
    q.mean_prec.assign(mean_prec_.begin(), mean_prec_.end());
    q.dof.assign(dof_.begin(), dof_.end());
    posterior_logs(m, q);
  }

 private:
  // The priors of the header (binary64; the column means and covariances in row order).
  Priors priors(const std::vector<float>& x, int64_t n, int64_t d, int64_t k, CovType type) const {
    Priors p;
    const std::string wcp = params_.text("weight_concentration_prior"), b0 = params_.text("mean_precision_prior");
    const std::string m0 = params_.text("mean_prior"), v0 = params_.text("degrees_of_freedom_prior");
    const std::string c0 = params_.text("covariance_prior");
    p.wcp = wcp == "none" ? 1.0 / static_cast<double>(k) : std::stod(wcp);
    p.b0 = b0 == "none" ? 1.0 : std::stod(b0);
    p.v0 = v0 == "none" ? static_cast<double>(d) : std::stod(v0);
    BL_CHECK(p.v0 > static_cast<double>(d - 1), name_, ": parameter degrees_of_freedom_prior=", v0,
             ": expected a number > n_features - 1 = ", d - 1);
    std::vector<double> mean(static_cast<size_t>(d), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t a = 0; a < d; ++a) mean[a] += static_cast<double>(x[i * d + a]);
    for (double& v : mean) v /= static_cast<double>(n);
    p.m0 = m0 == "none" ? mean : std::vector<double>(static_cast<size_t>(d), std::stod(m0));
    const bool square = type == CovType::full || type == CovType::tied;
    if (c0 != "none") {
      const double c = std::stod(c0);
      if (square) {
        p.c0.assign(static_cast<size_t>(d * d), 0.0);
        for (int64_t a = 0; a < d; ++a) p.c0[a * d + a] = c;
      } else {
        p.c0.assign(type == CovType::diag ? static_cast<size_t>(d) : 1, c);
      }
      return p;
    }
    BL_CHECK(n >= 2, name_, ": the default covariance_prior (the covariance of X) needs at least 2 samples");
    std::vector<double> S(static_cast<size_t>(d * d), 0.0), diff(static_cast<size_t>(d));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t a = 0; a < d; ++a) diff[a] = static_cast<double>(x[i * d + a]) - mean[a];
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = square ? 0 : a; b < (square ? d : a + 1); ++b) S[a * d + b] += diff[a] * diff[b];
    }
    for (double& v : S) v /= static_cast<double>(n - 1);
    if (square) {
      p.c0 = S;
    } else if (type == CovType::diag) {
      for (int64_t a = 0; a < d; ++a) p.c0.push_back(S[a * d + a]);
    } else {
      double s = 0.0;
      for (int64_t a = 0; a < d; ++a) s += S[a * d + a];
      p.c0.assign(1, s / static_cast<double>(d));
    }
    return p;
  }

  bool process_ = true;
  std::vector<float> a_, b_, mean_prec_, dof_;
};

}  // namespace

std::unique_ptr<Estimator> make_bayesian_gaussian_mixture() { return std::make_unique<BayesianGaussianMixture>(); }

}  // namespace bl::ml
