// gaussian_mixture.cpp: gaussian_mixture (scikit-learn's GaussianMixture), expectation-maximization
// of a mixture of n_components Gaussians with full, tied, diag or spherical covariances.
//
// Fit reads X once to the host; the EM iterations run there in binary64 in a fixed order (rows in
// order, then components, then features), only add, sub, mul, div and sqrt (correctly rounded; the
// library is built without contraction), so the fit is a pure function of the data and the
// parameters, the same at every thread count and on every device. Logarithms and exponentials are
// the contract's bl::log / bl::exp on binary32 (correctly rounded), their results widened to binary64.
//
// Initial responsibilities resp [n, k] for init t of n_init (seed s = random_state + t):
//   kmeans:           one-hot of the labels of bitlearn's kmeans (n_clusters = k, random_state = s)
//                     fitted on X (on X's device);
//   k-means++:        one-hot at the rows chosen as k-means++ centers (kmeans_plus_plus under s);
//   random:           uniform_co of Philox word i * k + j of stream 4 under s, each row divided by its sum;
//   random_from_data: one-hot at k distinct rows drawn by a partial Fisher-Yates (Philox stream 5);
// then one M-step with weights nk / n (as scikit-learn, so they need not sum to 1 after this step).
// M-step from resp: nk = sum_i resp_ij + 10 eps (binary64 eps), means_j = sum_i resp_ij x_i / nk_j,
// covariances
//   full:      sum_i resp_ij (x_i - mu_j)(x_i - mu_j)^T / nk_j + reg_covar I
//   tied:      sum_j sum_i resp_ij (x_i - mu_j)(x_i - mu_j)^T / sum_j nk_j + reg_covar I
//   diag:      sum_i resp_ij (x_i - mu_j)^2 / nk_j + reg_covar (per feature)
//   spherical: the mean over features of the diag variances (reg_covar included),
// weights nk / sum nk. Precision Cholesky factors: full / tied P = L^-T with cov = L L^T (Cholesky,
// lower), a pivot <= 0 is an error (increase reg_covar); diag / spherical 1 / sqrt(cov), cov <= 0 an
// error. E-step: for each row and component, y = (x - mu_j) P_j, the weighted log probability
//   w_ij = -0.5 (d log(2 pi) + |y|^2) + sum log diag P_j + log weight_j
// (log(2 pi) a binary64 constant); the row's log-likelihood l_i = m + log(sum_j exp(w_ij - m)),
// m = max_j w_ij (exp terms summed in component order), resp_ij = exp(w_ij - l_i); the lower bound
// is the mean of l_i (binary64, row order). EM stops when |lower bound - previous| < tol (converged)
// or after max_iter iterations (a ConvergenceWarning); the parameters kept are those after the last
// M-step, with the lower bound of the E-step before it (as scikit-learn). The best of the n_init
// runs by lower bound wins (the first on ties). The parameters are rounded to binary32 once.
//
// predict / predict_proba / score evaluate the E-step above from the stored binary32 parameters
// (so a loaded model gives the same bytes): predict is the first largest w_ij, predict_proba resp,
// score the mean log-likelihood.
#include <cmath>
#include <limits>
#include <string>

#include "bitlearn/ml/progress.h"
#include "contract/math.h"
#include "core/error.h"
#include "ml/mixture/mixture_common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using namespace mixture;

double log32(double v) { return static_cast<double>(bl::log(static_cast<float>(v))); }

// log weights and log determinants of the precision factors (bl::log in binary32, summed in binary64).
void derive_logs32(Mixture& m) {
  m.log_w.assign(static_cast<size_t>(m.k), 0.0);
  for (int64_t j = 0; j < m.k; ++j) m.log_w[j] = log32(m.weights[j]);
  m.log_det = sum_log_diag(m, log32);
}

// The M-step: weights (nk, unnormalized), means and covariances from resp; then the precisions.
void m_step(Mixture& m, const std::vector<float>& x, int64_t n, const std::vector<double>& resp, double reg,
            const std::string& est) {
  gaussian_statistics(m, x, n, resp, reg);
  compute_precisions(m, est);
}

class GaussianMixture final : public MixtureEstimator {
 public:
  GaussianMixture()
      : MixtureEstimator(
            "gaussian_mixture",
            {{"covariance_type", K::choice, "full", 0, {"full", "tied", "diag", "spherical"}},
             {"init_params", K::choice, "kmeans", 0, {"kmeans", "k-means++", "random", "random_from_data"}},
             {"max_iter", K::integer, "100", 0},
             {"n_components", K::integer, "1", 1},
             {"n_init", K::integer, "1", 1},
             {"random_state", K::integer, "0", 0},
             {"reg_covar", K::number, "1e-06", 0.0},
             {"tol", K::number, "0.001", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    const FitSetup f = fit_setup(name_, params_, X);
    const int64_t n = f.n, k = f.k;
    std::vector<double> w, l, resp;
    auto start = [&](int64_t t) {
      Mixture m;
      m.type = f.type;
      m.k = k;
      m.d = f.d;
      resp = initial_resp(X, f.x, n, f.d, k, f.init, static_cast<uint64_t>(f.random_state + t));
      m_step(m, f.x, n, resp, f.reg, name_);
      for (double& v : m.weights) v /= static_cast<double>(n);
      derive_logs32(m);
      return m;
    };
    auto step = [&](Mixture& m) {
      weighted_log_prob(m, f.x, n, w);
      normalize(w, n, k, l, &resp);
      const double lb = mean_of(l);
      BL_CHECK(!std::isnan(lb), name_, ": the log-likelihood is NaN");
      m_step(m, f.x, n, resp, f.reg, name_);
      double total = 0.0;
      for (double v : m.weights) total += v;
      for (double& v : m.weights) v /= total;
      derive_logs32(m);
      return lb;
    };
    const BestRun<Mixture> best = best_of_runs<Mixture>(f, name_ + " EM", start, step);
    store(best.state, best.n_iter, best.converged, best.bound);
    derive();
    fitted_ = true;
    return *this;
  }

 protected:
  void derive_logs(Mixture& m) const override { derive_logs32(m); }
};

}  // namespace

std::unique_ptr<Estimator> make_gaussian_mixture() { return std::make_unique<GaussianMixture>(); }

}  // namespace bl::ml
