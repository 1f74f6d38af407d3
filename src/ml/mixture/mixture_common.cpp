// mixture_common.cpp: see mixture_common.h.
#include "ml/mixture/mixture_common.h"

#include <algorithm>
#include <cmath>

#include "bitlearn/ml/estimator.h"
#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/cluster/distances.h"
#include "ml/cluster/kmeans.h"

namespace bl::ml::mixture {

namespace {

constexpr uint64_t kRespStream = 4, kRowStream = 5;
constexpr double kLog2Pi = 1.8378770664093454836;  // log(2 pi), rounded to binary64
constexpr double kTenEps = 10.0 * 2.220446049250313080847e-16;

double log32(double v) { return static_cast<double>(bl::log(static_cast<float>(v))); }

const char* kIllDefined =
    ": fitting the mixture model failed because some components have ill-defined empirical covariance "
    "(for instance caused by singleton or collapsed samples); try to decrease the number of components, "
    "increase reg_covar, or scale the input data";

}  // namespace

CovType cov_type_of(const std::string& s) {
  if (s == "full") return CovType::full;
  if (s == "tied") return CovType::tied;
  if (s == "diag") return CovType::diag;
  return CovType::spherical;
}

const char* cov_type_name(CovType t) {
  switch (t) {
    case CovType::full: return "full";
    case CovType::tied: return "tied";
    case CovType::diag: return "diag";
    default: return "spherical";
  }
}

int64_t cov_size(CovType t, int64_t k, int64_t d) {
  switch (t) {
    case CovType::full: return k * d * d;
    case CovType::tied: return d * d;
    case CovType::diag: return k * d;
    default: return k;
  }
}

void compute_precisions(Mixture& m, const std::string& est) {
  const int64_t d = m.d;
  m.prec.assign(m.cov.size(), 0.0);
  if (m.type == CovType::diag || m.type == CovType::spherical) {
    for (size_t i = 0; i < m.cov.size(); ++i) {
      BL_CHECK(m.cov[i] > 0.0 && std::isfinite(m.cov[i]), est, kIllDefined);
      m.prec[i] = 1.0 / std::sqrt(m.cov[i]);
    }
    return;
  }
  const int64_t blocks = m.type == CovType::full ? m.k : 1;
  std::vector<double> L(static_cast<size_t>(d * d)), M(static_cast<size_t>(d * d));
  for (int64_t b = 0; b < blocks; ++b) {
    const double* S = &m.cov[b * d * d];
    std::fill(L.begin(), L.end(), 0.0);
    for (int64_t j = 0; j < d; ++j) {
      double s = S[j * d + j];
      for (int64_t t = 0; t < j; ++t) s -= L[j * d + t] * L[j * d + t];
      BL_CHECK(s > 0.0 && std::isfinite(s), est, kIllDefined);
      const double ljj = std::sqrt(s);
      L[j * d + j] = ljj;
      for (int64_t i = j + 1; i < d; ++i) {
        double v = S[i * d + j];
        for (int64_t t = 0; t < j; ++t) v -= L[i * d + t] * L[j * d + t];
        L[i * d + j] = v / ljj;
      }
    }
    // M = L^-1 (lower) by forward substitution, column by column; P = M^T.
    std::fill(M.begin(), M.end(), 0.0);
    for (int64_t c = 0; c < d; ++c)
      for (int64_t i = c; i < d; ++i) {
        double v = i == c ? 1.0 : 0.0;
        for (int64_t t = c; t < i; ++t) v -= L[i * d + t] * M[t * d + c];
        M[i * d + c] = v / L[i * d + i];
      }
    double* P = &m.prec[b * d * d];
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) P[i * d + j] = M[j * d + i];
  }
}

void weighted_log_prob(const Mixture& m, const std::vector<float>& x, int64_t n, std::vector<double>& w) {
  const int64_t k = m.k, d = m.d;
  w.assign(static_cast<size_t>(n * k), 0.0);
  std::vector<double> diff(static_cast<size_t>(d));
  const double base = static_cast<double>(d) * kLog2Pi;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t a = 0; a < d; ++a) diff[a] = static_cast<double>(x[i * d + a]) - m.means[j * d + a];
      double q = 0.0;
      if (m.type == CovType::full || m.type == CovType::tied) {
        const double* P = m.type == CovType::full ? &m.prec[j * d * d] : m.prec.data();
        for (int64_t c = 0; c < d; ++c) {
          double y = 0.0;
          for (int64_t a = 0; a <= c; ++a) y += diff[a] * P[a * d + c];
          q += y * y;
        }
      } else if (m.type == CovType::diag) {
        for (int64_t a = 0; a < d; ++a) {
          const double y = diff[a] * m.prec[j * d + a];
          q += y * y;
        }
      } else {
        const double p = m.prec[j];
        for (int64_t a = 0; a < d; ++a) {
          const double y = diff[a] * p;
          q += y * y;
        }
      }
      w[i * k + j] = -0.5 * (base + q) + m.log_det[j] + m.log_w[j];
    }
  }
}

void normalize(const std::vector<double>& w, int64_t n, int64_t k, std::vector<double>& l, std::vector<double>* resp) {
  l.assign(static_cast<size_t>(n), 0.0);
  if (resp) resp->assign(static_cast<size_t>(n * k), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const double* r = &w[i * k];
    double mx = r[0];
    for (int64_t j = 1; j < k; ++j) mx = r[j] > mx ? r[j] : mx;
    double s = 0.0;
    for (int64_t j = 0; j < k; ++j) s += static_cast<double>(bl::exp(static_cast<float>(r[j] - mx)));
    l[i] = mx + log32(s);
    if (resp)
      for (int64_t j = 0; j < k; ++j) (*resp)[i * k + j] = static_cast<double>(bl::exp(static_cast<float>(r[j] - l[i])));
  }
}

double mean_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double a : v) s += a;
  return s / static_cast<double>(v.size());
}

void gaussian_statistics(Mixture& m, const std::vector<float>& x, int64_t n, const std::vector<double>& resp,
                         double reg) {
  const int64_t k = m.k, d = m.d;
  std::vector<double> nk(static_cast<size_t>(k), 0.0);
  m.means.assign(static_cast<size_t>(k * d), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const double r = resp[i * k + j];
      nk[j] += r;
      for (int64_t a = 0; a < d; ++a) m.means[j * d + a] += r * static_cast<double>(x[i * d + a]);
    }
  for (int64_t j = 0; j < k; ++j) {
    nk[j] += kTenEps;
    for (int64_t a = 0; a < d; ++a) m.means[j * d + a] /= nk[j];
  }
  const bool square = m.type == CovType::full || m.type == CovType::tied;
  std::vector<double> acc(static_cast<size_t>(square ? k * d * d : k * d), 0.0);
  std::vector<double> diff(static_cast<size_t>(d));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const double r = resp[i * k + j];
      if (r == 0.0) continue;
      for (int64_t a = 0; a < d; ++a) diff[a] = static_cast<double>(x[i * d + a]) - m.means[j * d + a];
      if (square) {
        double* S = &acc[j * d * d];
        for (int64_t a = 0; a < d; ++a) {
          const double ra = r * diff[a];
          for (int64_t b = a; b < d; ++b) S[a * d + b] += ra * diff[b];
        }
      } else {
        for (int64_t a = 0; a < d; ++a) acc[j * d + a] += r * diff[a] * diff[a];
      }
    }
  m.cov.assign(static_cast<size_t>(cov_size(m.type, k, d)), 0.0);
  if (m.type == CovType::full) {
    for (int64_t j = 0; j < k; ++j)
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = a; b < d; ++b) {
          double v = acc[j * d * d + a * d + b] / nk[j];
          if (a == b) v += reg;
          m.cov[j * d * d + a * d + b] = v;
          m.cov[j * d * d + b * d + a] = v;
        }
  } else if (m.type == CovType::tied) {
    double total = 0.0;
    for (int64_t j = 0; j < k; ++j) total += nk[j];
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = a; b < d; ++b) {
        double s = 0.0;
        for (int64_t j = 0; j < k; ++j) s += acc[j * d * d + a * d + b];
        double v = s / total;
        if (a == b) v += reg;
        m.cov[a * d + b] = v;
        m.cov[b * d + a] = v;
      }
  } else {
    for (int64_t j = 0; j < k; ++j) {
      double sph = 0.0;
      for (int64_t a = 0; a < d; ++a) {
        const double v = acc[j * d + a] / nk[j] + reg;
        if (m.type == CovType::diag) m.cov[j * d + a] = v;
        sph += v;
      }
      if (m.type == CovType::spherical) m.cov[j] = sph / static_cast<double>(d);
    }
  }
  m.weights = nk;
}

std::vector<double> initial_resp(const Tensor& X, const std::vector<float>& x, int64_t n, int64_t d, int64_t k,
                                 const std::string& init, uint64_t seed) {
  std::vector<double> resp(static_cast<size_t>(n * k), 0.0);
  if (init == "kmeans") {
    auto km = make_estimator("kmeans", {{"n_clusters", std::to_string(k)}, {"random_state", std::to_string(seed)}});
    km->fit(X);
    std::vector<int64_t> lab = km->predict(X).to(Device::cpu()).to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) resp[i * k + lab[i]] = 1.0;
  } else if (init == "k-means++") {
    std::vector<float> centers = kmeans_plus_plus(X, k, seed);
    for (int64_t j = 0; j < k; ++j) {
      int64_t row = 0;
      for (int64_t i = 0; i < n; ++i)
        if (std::equal(x.begin() + i * d, x.begin() + (i + 1) * d, centers.begin() + j * d)) {
          row = i;
          break;
        }
      resp[row * k + j] = 1.0;
    }
  } else if (init == "random") {
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t j = 0; j < k; ++j) {
        const double u =
            static_cast<double>(uniform_co(random_u32_element(seed, kRespStream, static_cast<uint64_t>(i * k + j))));
        resp[i * k + j] = u;
        s += u;
      }
      if (s == 0.0) {
        for (int64_t j = 0; j < k; ++j) resp[i * k + j] = 1.0 / static_cast<double>(k);
      } else {
        for (int64_t j = 0; j < k; ++j) resp[i * k + j] /= s;
      }
    }
  } else {  // random_from_data
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = i + philox_index(random_u32_element(seed, kRowStream, static_cast<uint64_t>(i)), n - i);
      std::swap(perm[i], perm[j]);
    }
    for (int64_t j = 0; j < k; ++j) resp[perm[j] * k + j] = 1.0;
  }
  return resp;
}

std::vector<float> fit_rows(const std::string& est, const Tensor& X, int64_t k) {
  check_X(est, X);
  const int64_t n = X.dim(0), d = X.dim(1);
  BL_CHECK(d <= kMaxFeatures, est, ": ", d, " features is too many (the limit is ", kMaxFeatures, ")");
  BL_CHECK(k <= n, est, ": expected n_samples >= n_components but got n_components = ", k, ", n_samples = ", n);
  return X.to(Device::cpu()).contiguous().to_vector<float>();
}

FitSetup fit_setup(const std::string& est, const lin::ParamSet& params, const Tensor& X) {
  FitSetup f;
  f.k = params.integer("n_components");
  f.x = fit_rows(est, X, f.k);
  f.n = X.dim(0);
  f.d = X.dim(1);
  f.type = cov_type_of(params.text("covariance_type"));
  f.tol = params.number("tol");
  f.reg = params.number("reg_covar");
  f.max_iter = params.integer("max_iter");
  f.n_init = params.integer("n_init");
  f.random_state = params.integer("random_state");
  f.init = params.text("init_params");
  return f;
}

// ---- MixtureEstimator ----

Tensor MixtureEstimator::predict(const Tensor& X) const {
  std::vector<double> w = weighted(X);
  const int64_t n = X.dim(0), k = k_;
  std::vector<int64_t> lab(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (w[i * k + j] > w[i * k + best]) best = j;
    lab[i] = best;
  }
  return Tensor::from_vector(lab, {n}, X.device());
}

Tensor MixtureEstimator::predict_proba(const Tensor& X) const {
  std::vector<double> w = weighted(X), l, resp;
  const int64_t n = X.dim(0);
  normalize(w, n, k_, l, &resp);
  std::vector<float> out(resp.begin(), resp.end());
  return Tensor::from_vector(out, {n, k_}, X.device());
}

Tensor MixtureEstimator::score_samples(const Tensor& X) const {
  std::vector<double> w = weighted(X), l;
  normalize(w, X.dim(0), k_, l, nullptr);
  std::vector<float> out(l.begin(), l.end());
  return Tensor::from_vector(out, {X.dim(0)}, X.device());
}

double MixtureEstimator::score(const Tensor& X, const Tensor&) const {
  std::vector<double> w = weighted(X), l;
  normalize(w, X.dim(0), k_, l, nullptr);
  return mean_of(l);
}

void MixtureEstimator::save_state(nlohmann::json& state) const {
  lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}});
  state["covariance_type"] = cov_type_name(type_);
  state["n_iter"] = n_iter_;
  state["converged"] = converged_;
  lin::put_f32s(state, {{"lower_bound", {lower_bound_}}, {"weights", weights_}, {"means", means_},
                        {"covariances", cov_}, {"precisions_cholesky", prec_}});
  save_extra(state);
}

void MixtureEstimator::load_state(const nlohmann::json& state) {
  d_ = lin::get_int(state, "n_features", 1, name_);
  k_ = lin::get_int(state, "n_components", 1, name_);
  BL_CHECK(d_ <= kMaxFeatures && k_ <= (int64_t{1} << 16), name_, ": model state: n_features=", d_,
           " or n_components=", k_, " is too large");
  BL_CHECK(state.contains("covariance_type") && state["covariance_type"].is_string(), name_,
           ": model state: covariance_type must be full, tied, diag or spherical");
  const std::string t = state["covariance_type"].get<std::string>();
  BL_CHECK(t == "full" || t == "tied" || t == "diag" || t == "spherical", name_,
           ": model state: covariance_type must be full, tied, diag or spherical, got ", t);
  type_ = cov_type_of(t);
  n_iter_ = lin::get_int(state, "n_iter", 0, name_);
  BL_CHECK(state.contains("converged") && state["converged"].is_boolean(), name_,
           ": model state: converged must be a boolean");
  converged_ = state["converged"].get<bool>();
  lower_bound_ = lin::get_f32(state, "lower_bound", 1, name_)[0];
  weights_ = lin::get_f32(state, "weights", k_, name_);
  for (float v : weights_)
    BL_CHECK(v > 0.0f && std::isfinite(v), name_, ": model state: weights must be positive, got ", v);
  means_ = lin::get_f32(state, "means", k_ * d_, name_);
  const int64_t cs = cov_size(type_, k_, d_);
  cov_ = lin::get_f32(state, "covariances", cs, name_);
  prec_ = lin::get_f32(state, "precisions_cholesky", cs, name_);
  for (float v : means_) BL_CHECK(std::isfinite(v), name_, ": model state: means must be finite");
  for (float v : prec_) BL_CHECK(std::isfinite(v), name_, ": model state: precisions_cholesky must be finite");
  const int64_t blocks = type_ == CovType::full ? k_ : type_ == CovType::tied ? 1 : 0;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t a = 0; a < d_; ++a)
      BL_CHECK(prec_[b * d_ * d_ + a * d_ + a] > 0.0f, name_,
               ": model state: precisions_cholesky must have a positive diagonal");
  if (blocks == 0)
    for (float v : prec_) BL_CHECK(v > 0.0f, name_, ": model state: precisions_cholesky must be positive");
  load_extra(state);
  derive();
  fitted_ = true;
}

void MixtureEstimator::store(const Mixture& m, int64_t n_iter, bool converged, double lower_bound) {
  k_ = m.k;
  d_ = m.d;
  type_ = m.type;
  weights_.assign(m.weights.begin(), m.weights.end());
  means_.assign(m.means.begin(), m.means.end());
  cov_.assign(m.cov.begin(), m.cov.end());
  prec_.assign(m.prec.begin(), m.prec.end());
  n_iter_ = n_iter;
  converged_ = converged;
  lower_bound_ = static_cast<float>(lower_bound);
}

void MixtureEstimator::derive() {
  pm_ = Mixture();
  pm_.type = type_;
  pm_.k = k_;
  pm_.d = d_;
  pm_.weights.assign(weights_.begin(), weights_.end());
  pm_.means.assign(means_.begin(), means_.end());
  pm_.cov.assign(cov_.begin(), cov_.end());
  pm_.prec.assign(prec_.begin(), prec_.end());
  derive_logs(pm_);
}

std::vector<double> MixtureEstimator::weighted(const Tensor& X) const {
  check_predict_input(X, d_);
  std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
  std::vector<double> w;
  weighted_log_prob(pm_, x, X.dim(0), w);
  return w;
}

}  // namespace bl::ml::mixture
