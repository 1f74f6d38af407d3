// mixture_common.h: the parts that gaussian_mixture and bayesian_gaussian_mixture share: the
// covariance types, the mixture's binary64 parameters, the sufficient statistics of the M-step
// (nk, means, covariances of the responsibilities), the precision Cholesky factors and the sums of
// their log diagonals, the weighted log probability of the E-step and its log-sum-exp, the initial
// responsibilities, the fit's parameters and its restart loop, and a base class holding the stored
// binary32 model (model state, predict, predict_proba, score_samples, score).
// The formulas and orders are those documented in gaussian_mixture.cpp.
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/ml/progress.h"
#include "bitlearn/tensor.h"
#include "ml/linear/common.h"

namespace bl::ml::mixture {

constexpr int64_t kMaxFeatures = 2048;

enum class CovType { full, tied, diag, spherical };

CovType cov_type_of(const std::string& s);
const char* cov_type_name(CovType t);
// Entries of the covariances (and of the precision factors) of each type.
int64_t cov_size(CovType t, int64_t k, int64_t d);

// The mixture's parameters in binary64 (fit) or widened from the stored binary32 (predict).
struct Mixture {
  CovType type = CovType::full;
  int64_t k = 0, d = 0;
  std::vector<double> weights, means, cov, prec;  // prec: the precision Cholesky factors
  std::vector<double> log_w, log_det;             // added to each component's log density
};

// prec from cov (full / tied: P = L^-T, row-major d x d, upper triangular); throws when not positive.
void compute_precisions(Mixture& m, const std::string& est);

// sum_a log(diag P_j)_a of each component's precision factor in binary64 (a ascending; tied: one sum
// for every component; spherical: d log P_j), with the mixture's log function (binary32 or binary64).
template <class Log>
std::vector<double> sum_log_diag(const Mixture& m, Log log) {
  const int64_t k = m.k, d = m.d;
  std::vector<double> out(static_cast<size_t>(k), 0.0);
  double tied = 0.0;
  if (m.type == CovType::tied)
    for (int64_t a = 0; a < d; ++a) tied += log(m.prec[a * d + a]);
  for (int64_t j = 0; j < k; ++j) {
    double s = 0.0;
    switch (m.type) {
      case CovType::full:
        for (int64_t a = 0; a < d; ++a) s += log(m.prec[j * d * d + a * d + a]);
        break;
      case CovType::tied: s = tied; break;
      case CovType::diag:
        for (int64_t a = 0; a < d; ++a) s += log(m.prec[j * d + a]);
        break;
      case CovType::spherical: s = static_cast<double>(d) * log(m.prec[j]); break;
    }
    out[j] = s;
  }
  return out;
}

// w [n, k]: -0.5 (d log(2 pi) + |(x_i - mu_j) P_j|^2) + log_det_j + log_w_j.
void weighted_log_prob(const Mixture& m, const std::vector<float>& x, int64_t n, std::vector<double>& w);

// Row log-likelihoods l [n] and responsibilities resp [n, k] from w (log-sum-exp, binary32 exp / log).
void normalize(const std::vector<double>& w, int64_t n, int64_t k, std::vector<double>& l, std::vector<double>* resp);

double mean_of(const std::vector<double>& v);

// The M-step's statistics of resp: m.weights = nk (sum of resp + 10 eps), m.means, m.cov (with
// reg_covar); the precisions are not computed.
void gaussian_statistics(Mixture& m, const std::vector<float>& x, int64_t n, const std::vector<double>& resp,
                         double reg);

// Initial responsibilities [n, k] for kmeans, k-means++, random or random_from_data under seed.
std::vector<double> initial_resp(const Tensor& X, const std::vector<float>& x, int64_t n, int64_t d, int64_t k,
                                 const std::string& init, uint64_t seed);

// X checked (2-d, finite, at most kMaxFeatures columns, at least k rows) and read to the host.
std::vector<float> fit_rows(const std::string& est, const Tensor& X, int64_t k);

// What both mixtures read at fit: the parameters they share and the rows x of X (fit_rows).
struct FitSetup {
  int64_t k = 0, n = 0, d = 0, max_iter = 0, n_init = 0, random_state = 0;
  CovType type = CovType::full;
  double tol = 0.0, reg = 0.0;
  std::string init;
  std::vector<float> x;
};
FitSetup fit_setup(const std::string& est, const lin::ParamSet& params, const Tensor& X);

// The start of the n_init runs with the largest final bound (the first on ties), its bound, its
// iteration count and whether it converged.
template <class State>
struct BestRun {
  State state;
  double bound = -std::numeric_limits<double>::infinity();
  int64_t n_iter = 0;
  bool converged = false;
};

// The restart loop of both mixtures. For each run t of n_init, start(t) gives the initial state; then
// step(state) runs one iteration and returns its bound (the E-step's mean log-likelihood or the
// variational lower bound), until two successive bounds differ by less than tol (converged, the
// first bound compared with -inf) or after max_iter iterations. Progress is reported under stage;
// a best run that did not converge warns (ConvergenceWarning).
template <class State, class Start, class Step>
BestRun<State> best_of_runs(const FitSetup& f, const std::string& stage, Start start, Step step) {
  BestRun<State> best;
  bool have_best = false;
  for (int64_t t = 0; t < f.n_init; ++t) {
    State s = start(t);
    double lb = -std::numeric_limits<double>::infinity();
    bool conv = false;
    int64_t it = 0;
    for (it = 1; it <= f.max_iter; ++it) {
      const double prev = lb;
      lb = step(s);
      report_progress(stage, it, f.max_iter);
      if (std::fabs(lb - prev) < f.tol) {
        conv = true;
        break;
      }
    }
    if (it > f.max_iter) it = f.max_iter;
    if (!have_best || lb > best.bound) {
      best.bound = lb;
      best.state = std::move(s);
      best.n_iter = it;
      best.converged = conv;
      have_best = true;
    }
  }
  report_progress(stage, f.max_iter, f.max_iter);
  if (!best.converged && f.max_iter > 0) warn_not_converged(stage, f.max_iter);
  return best;
}

// A fitted mixture stored in binary32: the model state shared by the mixtures and the predictions
// from it. A subclass fits, saves / loads its own extra state and fills pm_.log_w / pm_.log_det in
// derive_logs (called after a fit or a load).
class MixtureEstimator : public lin::ParamEstimator {
 public:
  using lin::ParamEstimator::ParamEstimator;
  Tensor predict(const Tensor& X) const override;
  Tensor predict_proba(const Tensor& X) const override;
  Tensor score_samples(const Tensor& X) const override;
  double score(const Tensor& X, const Tensor&) const override;
  void save_state(nlohmann::json& state) const override;
  void load_state(const nlohmann::json& state) override;

 protected:
  virtual void save_extra(nlohmann::json&) const {}
  virtual void load_extra(const nlohmann::json&) {}
  virtual void derive_logs(Mixture& m) const = 0;
  // Stores the binary64 mixture rounded to binary32 and derives the prediction-time mixture.
  void store(const Mixture& m, int64_t n_iter, bool converged, double lower_bound);
  void derive();
  std::vector<double> weighted(const Tensor& X) const;

  int64_t k_ = 0, d_ = 0, n_iter_ = 0;
  CovType type_ = CovType::full;
  bool converged_ = false;
  float lower_bound_ = 0.0f;
  std::vector<float> weights_, means_, cov_, prec_;
  Mixture pm_;
};

}  // namespace bl::ml::mixture
