// svm.cpp: svc and svr, scikit-learn's SVC and SVR (libsvm's C-SVC and epsilon-SVR).
//
// Kernel: the pairwise kernels of ml/kernel/kernels.h (linear, poly, rbf, sigmoid). gamma=scale is
// 1 / (n_features * var(X)), var over all entries of X in binary64 on the host (row-major sums: the
// mean, then the squared deviations; 1 when the variance is 0), gamma=auto is 1 / n_features, each
// rounded once to binary32.
//
// Fit: the full kernel matrix K [n, n] of the training rows is computed once on X's device (row
// blocks of at most 2^24 entries) and copied to the host; n is limited to 2^14 rows. Each dual
// problem  min 0.5 a^T Q a + p^T a,  0 <= a_t <= C,  sum_t y_t a_t = 0,  Q_st = y_s y_t K_st
// is solved by SMO as libsvm (Fan, Chen and Lin 2005) on the host in binary64, without shrinking:
//   from a = 0, G = p: i = argmax over {t: y_t = +1, a_t < C or y_t = -1, a_t > 0} of -y_t G_t,
//   j = argmin of the second-order objective decrease -(b_it^2) / a_it over the t with
//   -y_t G_t < -y_i G_i in the other index set (a_it = K_ii + K_tt - 2 K_it, 1e-12 when <= 0);
//   ties in both scans go to the last index, as libsvm's >= / <= comparisons. Stop when
//   max violation (m(a) - M(a)) < tol. The pair is updated analytically and clipped to the box as
//   libsvm; G_k += Q_ik da_i + Q_jk da_j for k in ascending order. rho: the mean of y_t G_t over the
//   free variables, else the midpoint of the bounds. max_iter caps the iterations (a convergence
//   warning); max_iter=-1 uses libsvm's own cap max(10^7, 100 l) (also a warning when reached).
// svc: one problem per class pair (a < b) in ascending class order; its variables are the rows of
//   class a (y = +1) then of class b (y = -1), each in ascending row order, as libsvm; p = -1. A row
//   is a support vector when its alpha is positive in some pair. Support vectors are listed by class,
//   ascending rows within a class; dual_coef [n_classes - 1, n_SV] and intercept (= -rho) in
//   libsvm's layout, and for two classes both negated, as scikit-learn (positive: classes[1]).
// svr: the 2l-variable problem of libsvm: variables t < l with y = +1, p_t = epsilon - y_t and
//   t >= l with y = -1, p_t = epsilon + y_{t-l}; coef_t = a_t - a_{t+l}; support vectors: coef != 0.
// All fitted numbers are rounded to binary32 once.
//
// Predict: decision values K(X, SV) W + intercept through the contract GEMM on X's device in row
// blocks of X (W: the dual coefficients; for more than two classes one column per class pair, zero
// outside the pair's two classes). svr: the values. svc: two classes: classes[1] where the value is
// >= 0; more: one vote per pair (a if the value is > 0, else b), the first class of most votes.
// decision_function: two classes the value; more: ovo the pair values, ovr scikit-learn's
// transformation votes + s / (3 (|s| + 1)) of the summed pair values s, in binary64 on the host.
#include "ml/svm/svm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/kernel/kernels.h"
#include "ml/linear/common.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr int64_t kMaxRows = int64_t{1} << 14;
constexpr int64_t kBlockElems = int64_t{1} << 24;
constexpr double kTau = 1e-12;

// One SMO problem over variables t = 0..l-1 that use kernel rows idx[t] of the n x n matrix K.
struct SmoProblem {
  const std::vector<float>* K = nullptr;
  int64_t n = 0;
  std::vector<int64_t> idx;
  std::vector<int> y;     // +1 / -1
  std::vector<double> p;  // linear term
  double C = 1.0;
  double tol = 1e-3;
  int64_t max_iter = -1;
};

struct SmoResult {
  std::vector<double> alpha;
  double rho = 0.0;
  int64_t iters = 0;
  bool converged = true;
};

SmoResult solve_smo(const SmoProblem& pr) {
  const int64_t l = static_cast<int64_t>(pr.idx.size());
  const std::vector<float>& Km = *pr.K;
  const int64_t n = pr.n;
  auto kv = [&](int64_t s, int64_t t) { return static_cast<double>(Km[pr.idx[s] * n + pr.idx[t]]); };
  const double C = pr.C;
  std::vector<double> a(l, 0.0), G = pr.p, QD(l);
  for (int64_t t = 0; t < l; ++t) QD[t] = kv(t, t);
  const int64_t cap = pr.max_iter > 0 ? pr.max_iter : std::max<int64_t>(10000000, 100 * l);
  SmoResult r;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> Ki(l), Kj(l);
  for (;;) {
    // i: the largest -y_t G_t over I_up.
    double gmax = -inf;
    int64_t i = -1;
    for (int64_t t = 0; t < l; ++t) {
      if (pr.y[t] == 1) {
        if (a[t] < C && -G[t] >= gmax) gmax = -G[t], i = t;
      } else if (a[t] > 0.0 && G[t] >= gmax) {
        gmax = G[t], i = t;
      }
    }
    if (i >= 0)
      for (int64_t t = 0; t < l; ++t) Ki[t] = kv(i, t);
    // j: second-order selection over I_low.
    double gmax2 = -inf, obj_min = inf;
    int64_t j = -1;
    for (int64_t t = 0; t < l; ++t) {
      if (pr.y[t] == 1) {
        if (!(a[t] > 0.0)) continue;
        const double gd = gmax + G[t];
        if (G[t] >= gmax2) gmax2 = G[t];
        if (i >= 0 && gd > 0.0) {
          const double qc = QD[i] + QD[t] - 2.0 * static_cast<double>(pr.y[t]) * Ki[t];
          const double obj = -(gd * gd) / (qc > 0.0 ? qc : kTau);
          if (obj <= obj_min) j = t, obj_min = obj;
        }
      } else {
        if (!(a[t] < C)) continue;
        const double gd = gmax - G[t];
        if (-G[t] >= gmax2) gmax2 = -G[t];
        if (i >= 0 && gd > 0.0) {
          const double qc = QD[i] + QD[t] + 2.0 * static_cast<double>(pr.y[t]) * Ki[t];
          const double obj = -(gd * gd) / (qc > 0.0 ? qc : kTau);
          if (obj <= obj_min) j = t, obj_min = obj;
        }
      }
    }
    if (gmax + gmax2 < pr.tol || j < 0) break;
    if (r.iters >= cap) {
      r.converged = false;
      break;
    }
    ++r.iters;
    for (int64_t t = 0; t < l; ++t) Kj[t] = kv(j, t);
    const double yi = pr.y[i], yj = pr.y[j];
    const double Qij = yi * yj * Ki[j];
    const double oi = a[i], oj = a[j];
    double ai = oi, aj = oj;
    if (pr.y[i] != pr.y[j]) {
      double qc = QD[i] + QD[j] + 2.0 * Qij;
      if (qc <= 0.0) qc = kTau;
      const double delta = (-G[i] - G[j]) / qc;
      const double diff = ai - aj;
      ai += delta;
      aj += delta;
      if (diff > 0.0) {
        if (aj < 0.0) aj = 0.0, ai = diff;
      } else if (ai < 0.0) {
        ai = 0.0, aj = -diff;
      }
      if (diff > 0.0) {  // C_i - C_j = 0
        if (ai > C) ai = C, aj = C - diff;
      } else if (aj > C) {
        aj = C, ai = C + diff;
      }
    } else {
      double qc = QD[i] + QD[j] - 2.0 * Qij;
      if (qc <= 0.0) qc = kTau;
      const double delta = (G[i] - G[j]) / qc;
      const double sum = ai + aj;
      ai -= delta;
      aj += delta;
      if (sum > C) {
        if (ai > C) ai = C, aj = sum - C;
      } else if (aj < 0.0) {
        aj = 0.0, ai = sum;
      }
      if (sum > C) {
        if (aj > C) aj = C, ai = sum - C;
      } else if (ai < 0.0) {
        ai = 0.0, aj = sum;
      }
    }
    a[i] = ai;
    a[j] = aj;
    const double dai = ai - oi, daj = aj - oj;
    for (int64_t k = 0; k < l; ++k) {
      const double yk = pr.y[k];
      G[k] += yi * yk * Ki[k] * dai + yj * yk * Kj[k] * daj;
    }
  }
  // rho.
  double ub = inf, lb = -inf, sum_free = 0.0;
  int64_t nr_free = 0;
  for (int64_t t = 0; t < l; ++t) {
    const double yG = pr.y[t] * G[t];
    if (a[t] >= C) {
      if (pr.y[t] == -1) ub = std::min(ub, yG);
      else lb = std::max(lb, yG);
    } else if (a[t] <= 0.0) {
      if (pr.y[t] == 1) ub = std::min(ub, yG);
      else lb = std::max(lb, yG);
    } else {
      ++nr_free;
      sum_free += yG;
    }
  }
  r.rho = nr_free > 0 ? sum_free / static_cast<double>(nr_free) : (ub + lb) / 2.0;
  r.alpha = std::move(a);
  return r;
}

std::vector<ParamSpec> common_specs(bool classifier) {
  std::vector<ParamSpec> s{{"C", K::number, "1", 0.0},
                           {"coef0", K::number, "0"},
                           {"degree", K::integer, "3", 0},
                           {"kernel", K::choice, "rbf", 0, {"linear", "poly", "rbf", "sigmoid"}},
                           {"max_iter", K::integer, "-1", -1},
                           {"tol", K::number, "0.001", 0.0}};
  if (classifier) {
    s.push_back({"decision_function_shape", K::choice, "ovr", 0, {"ovr", "ovo"}});
    s.push_back({"probability", K::boolean, "false"});
  } else {
    s.push_back({"epsilon", K::number, "0.1", 0.0});
  }
  return s;
}

class Svm final : public lin::ParamEstimator {
 public:
  explicit Svm(bool classifier)
      : lin::ParamEstimator(classifier ? "svc" : "svr", common_specs(classifier)), svc_(classifier) {}

  // gamma: scale, auto or a number >= 0, kept apart from the ParamSet for its words.
  Params get_params() const override {
    Params p = params_.all();
    p["gamma"] = gamma_text_;
    return p;
  }
  void set_params(const Params& p) override {
    Params rest = p;
    auto it = rest.find("gamma");
    std::string gamma = gamma_text_;
    if (it != rest.end()) {
      if (it->second == "scale" || it->second == "auto") {
        gamma = it->second;
      } else {
        const double g = param_double(name_, "gamma", it->second);
        BL_CHECK(std::isfinite(g) && g >= 0.0, name_, ": parameter gamma=", it->second,
                 ": expected scale, auto or a finite number >= 0");
        gamma = param_text(g);
      }
      rest.erase(it);
    }
    lin::ParamSet next = params_;
    next.set(rest);
    BL_CHECK(next.number("C") > 0.0, name_, ": parameter C=", next.text("C"), ": expected a number > 0");
    BL_CHECK(next.number("tol") > 0.0, name_, ": parameter tol=", next.text("tol"), ": expected a number > 0");
    BL_CHECK(next.integer("max_iter") != 0, name_, ": parameter max_iter=0: expected -1 (no limit) or >= 1");
    BL_CHECK(next.integer("degree") <= 64, name_, ": parameter degree=", next.text("degree"),
             " is too large (at most 64)");
    if (svc_)
      BL_CHECK(!next.boolean("probability"), name_,
               ": parameter probability=true is not supported yet (Platt scaling); use decision_function");
    params_ = next;
    gamma_text_ = gamma;
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n <= kMaxRows, name_, ": ", n, " rows would need a ", n, " x ", n,
             " kernel matrix on the host; the limit is ", kMaxRows, " rows (subsample the data)");
    lin::EncodedLabels enc;
    std::vector<float> yv;
    if (svc_) enc = lin::encode_labels(name_, y, 2);
    else yv = lin::y_to_host(y);
    Tensor Xc = X.contiguous();
    std::vector<float> x = Xc.to(Device::cpu()).contiguous().to_vector<float>();
    KernelSpec spec = spec_from(d, &x);
    // K [n, n] in row blocks.
    std::vector<float> Km;
    Km.reserve(static_cast<size_t>(n * n));
    const int64_t rows = std::max<int64_t>(1, kBlockElems / n);
    for (int64_t s = 0; s < n; s += rows) {
      const int64_t e = std::min(n, s + rows);
      std::vector<float> part =
          kernel_matrix(Xc.slice(0, s, e).contiguous(), Xc, spec).to(Device::cpu()).contiguous().to_vector<float>();
      Km.insert(Km.end(), part.begin(), part.end());
    }
    for (int64_t i = 0; i < n * n; ++i)
      BL_CHECK(std::isfinite(Km[i]), name_, ": the ", spec.kernel, " kernel matrix holds a non-finite value at (",
               i / n, ", ", i % n, "); lower gamma or degree, or scale X");
    SmoProblem pr;
    pr.K = &Km;
    pr.n = n;
    pr.C = params_.number("C");
    pr.tol = params_.number("tol");
    pr.max_iter = params_.integer("max_iter");
    bool converged = true;
    n_iter_.clear();
    std::vector<double> dual;   // [rows of dual_coef, n_SV] row-major
    std::vector<double> rho;
    std::vector<int64_t> sv;
    if (svc_) {
      const int64_t c = static_cast<int64_t>(enc.classes.size());
      std::vector<std::vector<int64_t>> members(static_cast<size_t>(c));
      for (int64_t i = 0; i < n; ++i) members[static_cast<size_t>(enc.index[i])].push_back(i);
      std::vector<std::vector<double>> coefs;  // per pair, over its variables
      std::vector<char> nonzero(static_cast<size_t>(n), 0);
      for (int64_t ca = 0; ca < c; ++ca)
        for (int64_t cb = ca + 1; cb < c; ++cb) {
          pr.idx.clear();
          pr.y.clear();
          for (int64_t r : members[ca]) pr.idx.push_back(r), pr.y.push_back(1);
          for (int64_t r : members[cb]) pr.idx.push_back(r), pr.y.push_back(-1);
          pr.p.assign(pr.idx.size(), -1.0);
          SmoResult res = solve_smo(pr);
          converged = converged && res.converged;
          n_iter_.push_back(res.iters);
          std::vector<double> cf(pr.idx.size());
          for (size_t t = 0; t < pr.idx.size(); ++t) {
            cf[t] = pr.y[t] * res.alpha[t];
            if (res.alpha[t] > 0.0) nonzero[static_cast<size_t>(pr.idx[t])] = 1;
          }
          coefs.push_back(std::move(cf));
          rho.push_back(res.rho);
        }
      std::vector<int64_t> pos(static_cast<size_t>(n), -1);
      n_support_.assign(static_cast<size_t>(c), 0);
      for (int64_t k = 0; k < c; ++k)
        for (int64_t r : members[k])
          if (nonzero[r]) {
            pos[r] = static_cast<int64_t>(sv.size());
            sv.push_back(r);
            ++n_support_[k];
          }
      const int64_t nsv = static_cast<int64_t>(sv.size());
      dual.assign(static_cast<size_t>((c - 1) * nsv), 0.0);
      int64_t p = 0;
      for (int64_t ca = 0; ca < c; ++ca)
        for (int64_t cb = ca + 1; cb < c; ++cb, ++p) {
          size_t t = 0;
          for (int64_t r : members[ca]) {
            if (nonzero[r]) dual[(cb - 1) * nsv + pos[r]] = coefs[p][t];
            ++t;
          }
          for (int64_t r : members[cb]) {
            if (nonzero[r]) dual[ca * nsv + pos[r]] = coefs[p][t];
            ++t;
          }
        }
      const double sign = c == 2 ? -1.0 : 1.0;  // scikit-learn's two-class orientation
      dual_.assign(dual.size(), 0.0f);
      for (size_t k = 0; k < dual.size(); ++k) dual_[k] = static_cast<float>(sign * dual[k]);
      intercept_.assign(rho.size(), 0.0f);
      for (size_t k = 0; k < rho.size(); ++k) intercept_[k] = static_cast<float>(-sign * rho[k]);
      classes_ = enc.classes;
      label_dtype_ = y.dtype();
    } else {
      const double eps = params_.number("epsilon");
      pr.idx.resize(static_cast<size_t>(2 * n));
      pr.y.resize(static_cast<size_t>(2 * n));
      pr.p.resize(static_cast<size_t>(2 * n));
      for (int64_t i = 0; i < n; ++i) {
        pr.idx[i] = i, pr.idx[i + n] = i;
        pr.y[i] = 1, pr.y[i + n] = -1;
        pr.p[i] = eps - static_cast<double>(yv[i]);
        pr.p[i + n] = eps + static_cast<double>(yv[i]);
      }
      SmoResult res = solve_smo(pr);
      converged = res.converged;
      n_iter_.push_back(res.iters);
      dual_.clear();
      for (int64_t i = 0; i < n; ++i) {
        const double cf = res.alpha[i] - res.alpha[i + n];
        if (cf != 0.0) {
          sv.push_back(i);
          dual_.push_back(static_cast<float>(cf));
        }
      }
      n_support_ = {static_cast<int64_t>(sv.size())};
      intercept_ = {static_cast<float>(-res.rho)};
    }
    support_ = sv;
    sv_.clear();
    for (int64_t r : sv) sv_.insert(sv_.end(), x.begin() + r * d, x.begin() + (r + 1) * d);
    d_ = d;
    gamma_ = spec.gamma;
    fitted_ = true;
    if (!converged) warn_not_converged(name_ + " SMO", pr.max_iter > 0 ? pr.max_iter : std::max<int64_t>(10000000, 100 * n));
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    Tensor D = raw_decision(X);
    if (!svc_) return D.reshape({X.dim(0)});
    const int64_t m = X.dim(0), c = static_cast<int64_t>(classes_.size());
    std::vector<int64_t> idx(static_cast<size_t>(m));
    if (c == 2) {
      std::vector<float> v = D.to(Device::cpu()).contiguous().to_vector<float>();
      for (int64_t i = 0; i < m; ++i) idx[i] = v[i] >= 0.0f ? 1 : 0;
    } else {
      std::vector<int64_t> votes = ovo_votes(D, m);
      for (int64_t i = 0; i < m; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < c; ++k)
          if (votes[i * c + k] > votes[i * c + best]) best = k;
        idx[i] = best;
      }
    }
    return lin::labels_from_index(classes_, Tensor::from_vector(idx, {m}, X.device()), label_dtype_, X.device());
  }

  Tensor decision_function(const Tensor& X) const override {
    if (!svc_) return Estimator::decision_function(X);
    Tensor D = raw_decision(X);
    const int64_t m = X.dim(0), c = static_cast<int64_t>(classes_.size());
    if (c == 2) return D.reshape({m});
    if (params_.text("decision_function_shape") == "ovo") return D;
    const int64_t P = c * (c - 1) / 2;
    std::vector<float> v = D.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<int64_t> votes = ovo_votes(D, m);
    std::vector<float> out(static_cast<size_t>(m * c));
    std::vector<double> conf(static_cast<size_t>(c));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(conf.begin(), conf.end(), 0.0);
      int64_t p = 0;
      for (int64_t a = 0; a < c; ++a)
        for (int64_t b = a + 1; b < c; ++b, ++p) {
          const double dv = v[i * P + p];
          conf[a] += dv;
          conf[b] -= dv;
        }
      for (int64_t k = 0; k < c; ++k)
        out[i * c + k] = static_cast<float>(static_cast<double>(votes[i * c + k]) +
                                            conf[k] / (3.0 * (std::fabs(conf[k]) + 1.0)));
    }
    return Tensor::from_vector(out, {m, c}, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return svc_ ? lin::accuracy_score(y, predict(X)) : lin::r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    if (svc_) {
      state["n_classes"] = static_cast<int64_t>(classes_.size());
      lin::put_labels(state, classes_, label_dtype_);
    }
    lin::put_f32(state, "gamma", {gamma_});
    state["support"] = support_;
    state["n_support"] = n_support_;
    state["n_iter"] = n_iter_;
    lin::put_f32(state, "support_vectors", sv_);
    lin::put_f32(state, "dual_coef", dual_);
    lin::put_f32(state, "intercept", intercept_);
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    int64_t c = 1;
    if (svc_) {
      c = lin::get_int(state, "n_classes", 2, name_);
      BL_CHECK(c <= 4096, name_, ": model state: n_classes=", c, " is too large");
      classes_ = lin::get_f32(state, "classes", c, name_);
      label_dtype_ = lin::get_label_dtype(state);
    }
    gamma_ = lin::get_f32(state, "gamma", 1, name_)[0];
    auto ints = [&](const char* key) {
      BL_CHECK(state.contains(key) && state[key].is_array(), name_, ": model state: ", key,
               " is missing or not an array");
      std::vector<int64_t> v;
      for (const auto& e : state[key]) {
        BL_CHECK(e.is_number_integer() && e.get<int64_t>() >= 0, name_, ": model state: ", key,
                 " holds a value that is not a count or index");
        v.push_back(e.get<int64_t>());
      }
      return v;
    };
    support_ = ints("support");
    n_support_ = ints("n_support");
    n_iter_ = ints("n_iter");
    BL_CHECK(static_cast<int64_t>(n_support_.size()) == c, name_, ": model state: n_support has ",
             n_support_.size(), " entries, expected ", c);
    int64_t nsv = 0;
    for (int64_t k : n_support_) nsv += k;
    BL_CHECK(nsv == static_cast<int64_t>(support_.size()) && nsv <= kMaxRows && d_ <= (int64_t{1} << 40) / std::max<int64_t>(1, nsv),
             name_, ": model state: n_support does not match support");
    sv_ = lin::get_f32(state, "support_vectors", nsv * d_, name_);
    dual_ = lin::get_f32(state, "dual_coef", (svc_ ? c - 1 : 1) * nsv, name_);
    intercept_ = lin::get_f32(state, "intercept", svc_ ? c * (c - 1) / 2 : 1, name_);
    fitted_ = true;
  }

 private:
  KernelSpec spec_from(int64_t d, const std::vector<float>* x) const {
    KernelSpec s;
    s.kernel = params_.text("kernel");
    s.coef0 = static_cast<float>(params_.number("coef0"));
    s.degree = params_.integer("degree");
    if (x == nullptr) {
      s.gamma = gamma_;  // predict: the fitted value
    } else if (gamma_text_ == "auto") {
      s.gamma = static_cast<float>(1.0 / static_cast<double>(d));
    } else if (gamma_text_ == "scale") {
      double mean = 0.0, var = 0.0;
      for (float v : *x) mean += static_cast<double>(v);
      mean /= static_cast<double>(x->size());
      for (float v : *x) var += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
      var /= static_cast<double>(x->size());
      s.gamma = static_cast<float>(var != 0.0 ? 1.0 / (static_cast<double>(d) * var) : 1.0);
    } else {
      s.gamma = static_cast<float>(param_double(name_, "gamma", gamma_text_));
    }
    return s;
  }

  // Decision values [m, P] (P: class pairs, or 1) on X's device.
  Tensor raw_decision(const Tensor& X) const {
    BL_CHECK(fitted_, name_, ": predict before fit");
    lin::check_predict_X(name_, X, d_);
    const Device dev = X.device();
    const int64_t m = X.dim(0), nsv = static_cast<int64_t>(support_.size());
    const int64_t c = svc_ ? static_cast<int64_t>(classes_.size()) : 2;
    const int64_t P = c * (c - 1) / 2;
    std::vector<float> W(static_cast<size_t>(nsv * P), 0.0f);
    if (c == 2) {
      W = dual_;
    } else {
      std::vector<int64_t> start(static_cast<size_t>(c + 1), 0);
      for (int64_t k = 0; k < c; ++k) start[k + 1] = start[k] + n_support_[k];
      int64_t p = 0;
      for (int64_t a = 0; a < c; ++a)
        for (int64_t b = a + 1; b < c; ++b, ++p) {
          for (int64_t s = start[a]; s < start[a + 1]; ++s) W[s * P + p] = dual_[(b - 1) * nsv + s];
          for (int64_t s = start[b]; s < start[b + 1]; ++s) W[s * P + p] = dual_[a * nsv + s];
        }
    }
    Tensor b = Tensor::from_vector(intercept_, {1, P}, dev);
    if (nsv == 0) return bl::add(Tensor::zeros({m, P}, DType::f32, dev), b);
    const KernelSpec spec = spec_from(d_, nullptr);
    Tensor S = Tensor::from_vector(sv_, {nsv, d_}, dev);
    Tensor Wt = Tensor::from_vector(W, {nsv, P}, dev);
    const int64_t rows = std::max<int64_t>(1, kBlockElems / nsv);
    std::vector<Tensor> parts;
    for (int64_t s = 0; s < m; s += rows) {
      const int64_t e = std::min(m, s + rows);
      parts.push_back(bl::add(bl::matmul(kernel_matrix(X.slice(0, s, e).contiguous(), S, spec), Wt), b));
    }
    return parts.size() == 1 ? parts[0] : bl::concat(parts, 0);
  }

  // Votes [m, c] of the pair decisions D [m, P]: a when the value is > 0, else b.
  std::vector<int64_t> ovo_votes(const Tensor& D, int64_t m) const {
    const int64_t c = static_cast<int64_t>(classes_.size()), P = c * (c - 1) / 2;
    std::vector<float> v = D.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<int64_t> votes(static_cast<size_t>(m * c), 0);
    for (int64_t i = 0; i < m; ++i) {
      int64_t p = 0;
      for (int64_t a = 0; a < c; ++a)
        for (int64_t b = a + 1; b < c; ++b, ++p) ++votes[i * c + (v[i * P + p] > 0.0f ? a : b)];
    }
    return votes;
  }

  bool svc_;
  std::string gamma_text_ = "scale";
  std::vector<float> classes_, sv_, dual_, intercept_;
  DType label_dtype_ = DType::f32;
  std::vector<int64_t> support_, n_support_, n_iter_;
  float gamma_ = 1.0f;
  int64_t d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_svc() { return std::make_unique<Svm>(true); }
std::unique_ptr<Estimator> make_svr() { return std::make_unique<Svm>(false); }

}  // namespace bl::ml
