// latent_dirichlet_allocation.cpp: latent_dirichlet_allocation (scikit-learn's
// LatentDirichletAllocation), learning_method batch or online: variational Bayes over a count matrix
// X [n, d].
//
// Everything is binary64 on the host with host_math.h (exp64, digamma64, lgamma64, log64).
// Notation: lambda [k, d] (components_), E[log beta] = psi(lambda) - psi(row sum of lambda),
// Eb = exp(E[log beta]) (exp_dirichlet_component_), alpha = doc_topic_prior, eta = topic_word_prior
// (none: 1 / n_components each).
// init: lambda[t, j] = gamma(shape 100, scale 1/100) variate of element t d + j on stream 1 of
//   random_state (gamma_variate below, which also reads stream 2).
// E-step, per document in parallel (each document's work is sequential, so the result does not
//   depend on the thread count): gamma_d starts at gamma(100, 1/100) variates (fit: element
//   i k + t of stream 3 + 2 iteration) or at ones (transform, final bound); Et = exp(psi(gamma_d) -
//   psi(sum gamma_d)); then up to max_doc_update_iter times, over the document's non-zero words j
//   (ascending): phi_j = sum_t Et_t Eb[t, j] + 2^-52, gamma_d[t] = alpha + Et_t sum_j c_j Eb[t, j] /
//   phi_j, Et recomputed; stop when mean |change of gamma_d| < mean_change_tol.
//   Sufficient statistics S[t, j] = Eb[t, j] sum_d Et_d[t] c_dj / phi_dj (phi_dj from the final Et_d),
//   summed over documents in ascending order, each topic row in parallel.
// M-step (batch): lambda = eta + S over all n documents, Eb recomputed.
// online: each pass cuts X into mini-batches of batch_size documents in row order (the last one
//   shorter); EM step s (0, 1, ... over the whole fit) runs the E-step above on its batch of m rows
//   only (gamma_d variates: element i k + t, i the row of X, of stream 3 + 2s) and sets
//   lambda = (1 - rho) lambda + rho (eta + n / m S) with rho = (learning_offset + s + 1)^-learning_decay
//   = exp64(-learning_decay log64(learning_offset + s + 1)), elementwise, Eb recomputed.
//   (total_samples is accepted for scikit-learn's signature; like scikit-learn's fit, fit uses n.)
// fit runs max_iter passes (batch: one EM step each); with evaluate_every > 0 every evaluate_every-th
//   pass computes the perplexity and stops when it moved by less than perp_tol.
// The approximate bound (score): sum_d sum_j c_dj logsumexp_t(E[log theta_dt] + E[log beta_tj])
//   + sum (alpha - gamma) E[log theta] + sum (lgamma(gamma) - lgamma(alpha))
//   + sum_d (lgamma(k alpha) - lgamma(sum_t gamma_dt)), and the same three terms for (eta, lambda) with
//   d in place of k; perplexity = exp(-bound / sum X). bound_ = the training perplexity after the fit.
// transform(X) = gamma_d / sum gamma_d from an E-step started at ones. Outputs are rounded once to
// binary32.
//
// gamma_variate (shape a >= 1, scale s): Marsaglia and Tsang's method in binary64 with dd = a - 1/3,
// c = 1 / sqrt(9 dd); attempt r (0 .. 15) of element i reads the Philox normal_element and
// uniform_element of counter i 16 + r (the uniform on the stream after the normal's); x, u give
// v = (1 + c x)^3, accepted when v > 0 and (u < 1 - 0.0331 x^4 or log u < x^2 / 2 + dd (1 - v + log v));
// the value is dd v s. Sixteen rejections in a row (probability below 1e-40 at a = 100) give dd s.
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/decomposition/dense64.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

// The gamma sampler reads two streams (s and s + 1): components 1 and 2, EM step i 3 + 2i and 4 + 2i.
constexpr uint64_t kStreamComponents = 1;
constexpr uint64_t kStreamDocs = 3;
constexpr int kGammaTries = 16;
constexpr double kInitShape = 100.0;
constexpr double kPhiEps = 0x1p-52;  // scikit-learn's float64 epsilon

double gamma_variate(uint64_t seed, uint64_t stream, uint64_t i, double shape, double scale) {
  const double dd = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * dd);
  for (int r = 0; r < kGammaTries; ++r) {
    const uint64_t at = i * kGammaTries + static_cast<uint64_t>(r);
    const double x = normal_element(seed, stream, at);
    const double u = uniform_element(seed, stream + 1, at);
    const double base = 1.0 + c * x;
    if (!(base > 0.0)) continue;
    const double v = base * base * base;
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return dd * v * scale;
    if (u > 0.0 && log64(u) < 0.5 * x * x + dd * (1.0 - v + log64(v))) return dd * v * scale;
  }
  return dd * scale;
}

// out[t] = exp(psi(a[t]) - psi(sum a)) over one row of k entries (the sum in ascending order).
void exp_dirichlet_row(const double* a, int64_t k, double* out) {
  double s = 0.0;
  for (int64_t t = 0; t < k; ++t) s += a[t];
  const double ps = digamma64(s);
  for (int64_t t = 0; t < k; ++t) out[t] = exp64(digamma64(a[t]) - ps);
}

// E[log] of each row: psi(a) - psi(row sum).
std::vector<double> dirichlet_log_rows(const std::vector<double>& a, int64_t rows, int64_t k) {
  std::vector<double> out(a.size());
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t t = 0; t < k; ++t) s += a[r * k + t];
    const double ps = digamma64(s);
    for (int64_t t = 0; t < k; ++t) out[r * k + t] = digamma64(a[r * k + t]) - ps;
  }
  return out;
}

// The rows of X as (column, count) lists of the non-zero entries.
struct SparseRows {
  std::vector<int64_t> start, col;
  std::vector<double> cnt;
  double total = 0.0;
};

class LDA final : public lin::ParamEstimator {
 public:
  LDA()
      : lin::ParamEstimator("latent_dirichlet_allocation",
                            {{"batch_size", K::integer, "128", 1},
                             {"doc_topic_prior", K::number_or_word, "none", 0.0, {"none"}, true},
                             {"evaluate_every", K::integer, "-1", -1e308},
                             {"learning_decay", K::number, "0.7", 0.0},
                             {"learning_method", K::choice, "batch", 0, {"batch", "online"}},
                             {"learning_offset", K::number, "1e+01", 1.0},
                             {"max_doc_update_iter", K::integer, "100", 1},
                             {"max_iter", K::integer, "10", 1},
                             {"mean_change_tol", K::number, "0.001", 0.0},
                             {"n_components", K::integer, "10", 1},
                             {"perp_tol", K::number, "0.1", 0.0},
                             {"random_state", K::integer, "0", 0},
                             {"topic_word_prior", K::number_or_word, "none", 0.0, {"none"}, true},
                             {"total_samples", K::number, "1e+06", 0.0, {}, true}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const bool online = params_.text("learning_method") == "online";
    BL_CHECK(params_.number("learning_decay") <= 1.0, name_, ": parameter learning_decay=",
             params_.number("learning_decay"), ": expected a number in [0, 1]");
    const SparseRows xs = counts(X, "fit");
    const int64_t n = X.dim(0), d = X.dim(1), k = params_.integer("n_components");
    d_ = d;
    k_ = k;
    alpha_ = prior("doc_topic_prior");
    eta_ = prior("topic_word_prior");
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    lambda_.assign(static_cast<size_t>(k * d), 0.0);
    for (int64_t i = 0; i < k * d; ++i)
      lambda_[i] = gamma_variate(seed, kStreamComponents, static_cast<uint64_t>(i), kInitShape, 1.0 / kInitShape);
    update_eb();
    const int64_t max_iter = params_.integer("max_iter"), every = params_.integer("evaluate_every");
    const double perp_tol = params_.number("perp_tol");
    const int64_t batch = online ? std::min(params_.integer("batch_size"), n) : n;
    double last = 0.0;
    n_iter_ = 0;
    n_batch_iter_ = 0;
    for (int64_t it = 0; it < max_iter; ++it) {
      for (int64_t r0 = 0; r0 < n; r0 += batch) em_step(xs, r0, std::min(n, r0 + batch), n, online, seed);
      ++n_iter_;
      if (every > 0 && (it + 1) % every == 0) {
        const double p = perplexity(xs, e_step(xs, 0, n, false, 0, 0, nullptr), n);
        if (last != 0.0 && std::fabs(last - p) < perp_tol) break;
        last = p;
      }
    }
    bound_ = perplexity(xs, e_step(xs, 0, n, false, 0, 0, nullptr), n);
    components_ = dec::rounded32(lambda_);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const SparseRows xs = counts(X, "transform");
    const int64_t n = X.dim(0);
    std::vector<double> g = e_step(xs, 0, n, false, 0, 0, nullptr);
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t t = 0; t < k_; ++t) s += g[i * k_ + t];
      for (int64_t t = 0; t < k_; ++t) g[i * k_ + t] /= s;
    }
    return dec::to_tensor32(g, {n, k_}, X.device());
  }

  // The approximate variational bound of X (scikit-learn's score).
  double score(const Tensor& X, const Tensor&) const override {
    check_transform_X(X, d_);
    const SparseRows xs = counts(X, "score");
    return bound(xs, e_step(xs, 0, X.dim(0), false, 0, 0, nullptr), X.dim(0));
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}, {"n_iter", n_iter_}, {"n_batch_iter", n_batch_iter_}});
    state["priors_f64"] = density_detail::f64_to_hex({alpha_, eta_});
    state["components_f64"] = density_detail::f64_to_hex(lambda_);
    lin::put_f32s(state, {{"components", components_}, {"exp_dirichlet_component", dec::rounded32(eb_)},
                          {"bound", {static_cast<float>(bound_)}}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= (int64_t{1} << 20) && d_ <= (int64_t{1} << 30) / k_, name_, ": model state: n_components ", k_,
             " x n_features ", d_, " is too large");
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    // Model files written before the online method have no n_batch_iter: one EM step per pass.
    n_batch_iter_ = state.contains("n_batch_iter") ? lin::get_int(state, "n_batch_iter", 0, name_) : n_iter_;
    const std::vector<double> priors = prep::get_finite_f64(state, "priors_f64", 2, name_);
    alpha_ = priors[0];
    eta_ = priors[1];
    BL_CHECK(alpha_ > 0.0 && eta_ > 0.0, name_, ": model state: the priors must be positive");
    lambda_ = prep::get_finite_f64(state, "components_f64", k_ * d_, name_);
    for (double v : lambda_)
      BL_CHECK(v > 0.0, name_, ": model state: components_f64 must be positive (got ", v, ")");
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    bound_ = lin::get_f32(state, "bound", 1, name_)[0];
    update_eb();
    fitted_ = true;
  }

 private:
  double prior(const char* key) const {
    const std::string& t = params_.text(key);
    return t == "none" ? 1.0 / static_cast<double>(params_.integer("n_components")) : params_.number(key);
  }

  // X's non-zero entries by row; a negative entry is refused (scikit-learn's wording).
  SparseRows counts(const Tensor& X, const char* whom) const {
    const std::vector<double> xh = dec::to_host64(X);
    const int64_t n = X.dim(0), d = X.dim(1);
    SparseRows s;
    s.start.push_back(0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        const double v = xh[i * d + j];
        BL_CHECK(v >= 0.0, name_, ": Negative values in data passed to latent_dirichlet_allocation.", whom, " (X[", i,
                 ", ", j, "] = ", v, ")");
        if (v == 0.0) continue;
        s.col.push_back(j);
        s.cnt.push_back(v);
        s.total += v;
      }
      s.start.push_back(static_cast<int64_t>(s.col.size()));
    }
    return s;
  }

  // One EM step on the rows [r0, r1) of the n documents (batch: all of them), EM step n_batch_iter_.
  void em_step(const SparseRows& xs, int64_t r0, int64_t r1, int64_t n, bool online, uint64_t seed) {
    std::vector<double> ss(lambda_.size(), 0.0);
    e_step(xs, r0, r1, true, seed, kStreamDocs + 2 * static_cast<uint64_t>(n_batch_iter_), &ss);
    ++n_batch_iter_;
    if (!online) {
      for (size_t i = 0; i < ss.size(); ++i) lambda_[i] = eta_ + ss[i];
    } else {
      const double rho =
          exp64(-params_.number("learning_decay") *
                log64(params_.number("learning_offset") + static_cast<double>(n_batch_iter_)));
      const double ratio = static_cast<double>(n) / static_cast<double>(r1 - r0);
      for (size_t i = 0; i < ss.size(); ++i) lambda_[i] = (1.0 - rho) * lambda_[i] + rho * (eta_ + ratio * ss[i]);
    }
    update_eb();
  }

  void update_eb() {
    eb_.assign(lambda_.size(), 0.0);
    for (int64_t t = 0; t < k_; ++t) exp_dirichlet_row(&lambda_[t * d_], d_, &eb_[t * d_]);
  }

  // gamma [r1 - r0, k] of the documents r0 .. r1 - 1; with ss, their sufficient statistics are added
  // to *ss.
  std::vector<double> e_step(const SparseRows& xs, int64_t r0, int64_t r1, bool random_init, uint64_t seed,
                             uint64_t stream, std::vector<double>* ss) const {
    const int64_t k = k_, n = r1 - r0;
    const int64_t max_doc = params_.integer("max_doc_update_iter");
    const double tol = params_.number("mean_change_tol");
    std::vector<double> g(static_cast<size_t>(n * k), 1.0), et(static_cast<size_t>(n * k));
    const int64_t base = xs.start[r0];
    std::vector<double> ratio(static_cast<size_t>(xs.start[r1] - base));  // c_dj / phi_dj at the final Et_d
    default_pool().parallel_for(n, [&](int64_t li) {
      const int64_t i = r0 + li;
      double* gd = &g[li * k];
      double* ed = &et[li * k];
      if (random_init)
        for (int64_t t = 0; t < k; ++t)
          gd[t] = gamma_variate(seed, stream, static_cast<uint64_t>(i * k + t), kInitShape, 1.0 / kInitShape);
      exp_dirichlet_row(gd, k, ed);
      const int64_t b = xs.start[i], e = xs.start[i + 1];
      std::vector<double> acc(static_cast<size_t>(k)), last(static_cast<size_t>(k));
      auto ratios = [&]() {
        for (int64_t p = b; p < e; ++p) {
          double phi = 0.0;
          for (int64_t t = 0; t < k; ++t) phi += ed[t] * eb_[t * d_ + xs.col[p]];
          ratio[p - base] = xs.cnt[p] / (phi + kPhiEps);
        }
      };
      for (int64_t it = 0; it < max_doc; ++it) {
        std::copy(gd, gd + k, last.begin());
        ratios();
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t p = b; p < e; ++p)
          for (int64_t t = 0; t < k; ++t) acc[t] += ratio[p - base] * eb_[t * d_ + xs.col[p]];
        for (int64_t t = 0; t < k; ++t) gd[t] = ed[t] * acc[t] + alpha_;
        exp_dirichlet_row(gd, k, ed);
        double change = 0.0;
        for (int64_t t = 0; t < k; ++t) change += std::fabs(last[t] - gd[t]);
        if (change / static_cast<double>(k) < tol) break;
      }
      if (ss) ratios();
    });
    if (ss) {
      default_pool().parallel_for(k, [&](int64_t t) {
        double* row = &(*ss)[t * d_];
        for (int64_t i = r0; i < r1; ++i)
          for (int64_t p = xs.start[i]; p < xs.start[i + 1]; ++p) row[xs.col[p]] += et[(i - r0) * k + t] * ratio[p - base];
        for (int64_t j = 0; j < d_; ++j) row[j] *= eb_[t * d_ + j];
      });
    }
    return g;
  }

  // sum (prior - a) E[log a] + sum (lgamma a - lgamma prior) + sum_rows (lgamma(prior size) - lgamma(row sum)).
  static double dirichlet_terms(double pri, const std::vector<double>& a, const std::vector<double>& ela, int64_t rows,
                                int64_t size) {
    double s = 0.0;
    const double lp = lgamma64(pri), lps = lgamma64(pri * static_cast<double>(size));
    for (int64_t r = 0; r < rows; ++r) {
      double rs = 0.0;
      for (int64_t t = 0; t < size; ++t) {
        const double v = a[r * size + t];
        s += (pri - v) * ela[r * size + t] + (lgamma64(v) - lp);
        rs += v;
      }
      s += lps - lgamma64(rs);
    }
    return s;
  }

  double bound(const SparseRows& xs, const std::vector<double>& g, int64_t n) const {
    const int64_t k = k_;
    const std::vector<double> elt = dirichlet_log_rows(g, n, k), elb = dirichlet_log_rows(lambda_, k, d_);
    std::vector<double> per_doc(static_cast<size_t>(n), 0.0);
    default_pool().parallel_for(n, [&](int64_t i) {
      std::vector<double> tmp(static_cast<size_t>(k));
      double s = 0.0;
      for (int64_t p = xs.start[i]; p < xs.start[i + 1]; ++p) {
        double m = -HUGE_VAL;
        for (int64_t t = 0; t < k; ++t) {
          tmp[t] = elt[i * k + t] + elb[t * d_ + xs.col[p]];
          m = std::max(m, tmp[t]);
        }
        double z = 0.0;
        for (int64_t t = 0; t < k; ++t) z += exp64(tmp[t] - m);
        s += xs.cnt[p] * (m + log64(z));
      }
      per_doc[i] = s;
    });
    double score = 0.0;
    for (double v : per_doc) score += v;
    score += dirichlet_terms(alpha_, g, elt, n, k);
    score += dirichlet_terms(eta_, lambda_, elb, k, d_);
    return score;
  }

  double perplexity(const SparseRows& xs, const std::vector<double>& g, int64_t n) const {
    return exp64(-bound(xs, g, n) / xs.total);
  }

  std::vector<double> lambda_, eb_;
  std::vector<float> components_;
  double alpha_ = 0.0, eta_ = 0.0, bound_ = 0.0;
  int64_t d_ = 0, k_ = 0, n_iter_ = 0, n_batch_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_latent_dirichlet_allocation() { return std::make_unique<LDA>(); }

}  // namespace bl::ml
