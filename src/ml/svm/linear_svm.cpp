// linear_svm.cpp: linear_svc and linear_svr, scikit-learn's LinearSVC and LinearSVR (the liblinear
// problems with an l2 penalty, solved by dual coordinate descent: Hsieh et al. 2008 for the
// classifier, Ho and Lin 2012 for the regressor).
//
// Data: the rows of X (binary32, each value widened exactly to binary64 where it is used) on the
// host; with fit_intercept a last column equal to intercept_scaling (binary64) is appended, so the
// intercept is a regularized weight as in liblinear (intercept_ = intercept_scaling * w_last). Every sum runs over the columns in order, in binary64
// with add, sub, mul, div only (no contraction), so a fit is a pure function of the data, the
// parameters and random_state on every device and thread count; the results are rounded to binary32
// once. Q_ii = sum_j x_ij^2 (+ the diagonal term below).
//
// Visiting order: in outer iteration `it` of problem k the rows are visited in seeded_permutation
// order (Fisher-Yates over Philox, bitlearn/ml/model_selection.h) with seed random_state and stream
// (k << 32) | it; a fixed order for given (data, random_state), independent of the thread count.
// No shrinking.
//
// linear_svc: one problem per class (one-vs-rest, y_i = +1 for the class and -1 otherwise); two
//   classes solve one problem with classes[1] positive. Dual: min 0.5 a^T Qbar a - sum a,
//   0 <= a_i <= U with Qbar = (y_i y_j x_i.x_j) + D, D_ii = 1 / (2 C) and U = inf (squared_hinge)
//   or D_ii = 0 and U = C (hinge); w = sum_i a_i y_i x_i is kept up to date. For row i:
//   G = y_i w.x_i - 1 + D_ii a_i; projected PG = min(G, 0) at a_i = 0, max(G, 0) at a_i = U, else G;
//   when PG != 0, a_i <- min(max(a_i - G / Qbar_ii, 0), U) and w += (a_i_new - a_i_old) y_i x_i.
//   An outer iteration ends with max PG - min PG over its rows; <= tol stops (converged).
//   dual=auto, true and false all run this solver (for the l2 penalty the primal and the dual have
//   the same minimizer); penalty=l1 (primal coordinate descent) is refused, as are hinge with
//   dual=false (scikit-learn refuses it too) and multi_class=crammer_singer.
// linear_svr: variables b_i in [-U, U], w = sum b_i x_i; dual min 0.5 w.w + sum_i (eps |b_i| - y_i b_i
//   + lambda b_i^2 / 2) with lambda = 0, U = C (epsilon_insensitive) or lambda = 1 / (2 C), U = inf
//   (squared_epsilon_insensitive). For row i: G = w.x_i - y_i + lambda b_i, Gp = G + eps, Gn = G - eps,
//   H = Q_ii + lambda; the step is the minimizer of the one-variable problem: -Gp / H when
//   Gp < H b_i, -Gn / H when Gn > H b_i, else -b_i, then clipped to [-U, U]. The violation of row i
//   is the distance of 0 from its projected subgradient (b_i = 0: max(-Gp, Gn, 0); b_i = U:
//   max(Gp, 0); b_i = -U: max(-Gn, 0); b_i > 0: |Gp|; b_i < 0: |Gn|); the outer iteration's sum of
//   violations, compared with the first iteration's, stops at <= tol times it (converged).
// sample_weight: row i's C becomes C_i = C w_i (U_i = C_i, D_ii = 1 / (2 C_i), lambda_i =
//   1 / (2 C_i)), as liblinear's weighted problems; a row of weight 0 is skipped in every sweep (its
//   variable stays 0 and adds nothing to the stopping measures; it keeps its place in the visiting
//   order). All-ones weights give the unweighted bits.
// A problem not converged after max_iter outer iterations keeps its last iterate and warns
// (ConvergenceWarning). n_iter: the largest outer-iteration count over the problems.
// Predict: X coef^T + intercept on X's device (lin::LinearClassifierFit, LinearModelBase).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "bitlearn/ml/model_selection.h"
#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/linear/linear_base.h"
#include "ml/linear/linear_classifier.h"
#include "ml/registry.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

// The rows (binary32, widened exactly to binary64 where used), the intercept column's value and
// the rows' squared norms. d1 = d + 1 with an intercept column (last), else d.
struct HostRows {
  std::vector<float> x;
  std::vector<double> sq;
  int64_t n = 0, d = 0, d1 = 0;
  double scaling = 0.0;
  const float* row(int64_t i) const { return x.data() + i * d; }
};

HostRows host_rows(const Tensor& X, bool fit_intercept, double scaling) {
  HostRows r;
  r.x = X.to(Device::cpu()).contiguous().to_vector<float>();
  r.n = X.dim(0);
  r.d = X.dim(1);
  r.d1 = r.d + (fit_intercept ? 1 : 0);
  r.scaling = scaling;
  r.sq.assign(static_cast<size_t>(r.n), 0.0);
  for (int64_t i = 0; i < r.n; ++i) {
    const float* xi = r.row(i);
    double s = 0.0;
    for (int64_t j = 0; j < r.d; ++j) s += static_cast<double>(xi[j]) * static_cast<double>(xi[j]);
    if (fit_intercept) s += scaling * scaling;
    r.sq[i] = s;
  }
  return r;
}

// w.x_i over the columns in order (the intercept column last).
double dot_row(const std::vector<double>& w, const HostRows& r, int64_t i) {
  const float* x = r.row(i);
  double s = 0.0;
  for (int64_t j = 0; j < r.d; ++j) s += w[j] * static_cast<double>(x[j]);
  if (r.d1 > r.d) s += w[r.d] * r.scaling;
  return s;
}

// w += a x_i.
void axpy_row(std::vector<double>& w, double a, const HostRows& r, int64_t i) {
  const float* x = r.row(i);
  for (int64_t j = 0; j < r.d; ++j) w[j] += a * static_cast<double>(x[j]);
  if (r.d1 > r.d) w[r.d] += a * r.scaling;
}

struct CdResult {
  std::vector<double> w;
  int64_t iters = 0;
  bool converged = false;
};

struct CdConfig {
  double C = 1.0, tol = 1e-4, epsilon = 0.0;
  bool squared = true;
  int64_t max_iter = 1000;
  uint64_t seed = 0;
  const std::vector<float>* weights = nullptr;  // sample weights (null: none)
  // Row i's C_i = C w_i (C without weights).
  double row_C(int64_t i) const { return weights == nullptr ? C : C * static_cast<double>((*weights)[i]); }
};

// The outer loop shared by both problems: `sweep(i)` updates row i and accumulates its part of the
// stopping measure; `done(it)` decides after each pass (and resets the measure).
template <typename Sweep, typename Done>
CdResult run_cd(const HostRows& r, const CdConfig& c, uint64_t problem, Sweep sweep, Done done) {
  CdResult out;
  std::vector<int64_t> perm(static_cast<size_t>(r.n));
  for (int64_t it = 0; it < c.max_iter; ++it) {
    seeded_permutation(perm, c.seed, (problem << 32) | static_cast<uint64_t>(it));
    for (int64_t s = 0; s < r.n; ++s) {
      if (s + 2 < r.n) {  // the permuted rows are far apart: fetch two rows ahead (no effect on results)
        const char* ahead = reinterpret_cast<const char*>(r.row(perm[s + 2]));
        for (int64_t off = 0; off < r.d * 4; off += 64) __builtin_prefetch(ahead + off);
      }
      sweep(perm[s]);
    }
    out.iters = it + 1;
    if (done(it)) {
      out.converged = true;
      break;
    }
  }
  return out;
}

// linear_svc's dual problem for labels y (+1 / -1); returns w (with the intercept weight last).
CdResult svc_dual(const HostRows& r, const std::vector<int>& y, const CdConfig& c, uint64_t problem) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> a(static_cast<size_t>(r.n), 0.0), w(static_cast<size_t>(r.d1), 0.0);
  double pg_max = -inf, pg_min = inf;
  auto sweep = [&](int64_t i) {
    const double Ci = c.row_C(i);
    if (Ci == 0.0) return;  // weight 0: the row takes no part
    const double U = c.squared ? inf : Ci;
    const double Dii = c.squared ? 0.5 / Ci : 0.0;
    const double yi = static_cast<double>(y[i]);
    const double G = yi * dot_row(w, r, i) - 1.0 + Dii * a[i];
    double pg = G;
    if (a[i] == 0.0) pg = std::min(G, 0.0);
    else if (a[i] == U) pg = std::max(G, 0.0);
    pg_max = std::max(pg_max, pg);
    pg_min = std::min(pg_min, pg);
    if (pg == 0.0) return;
    const double q = r.sq[i] + Dii;
    const double old = a[i];
    // q = 0 only for a zero row with hinge (U = C): the objective is linear in a_i, -G its slope.
    a[i] = q > 0.0 ? std::min(std::max(old - G / q, 0.0), U) : (G < 0.0 ? U : 0.0);
    if (a[i] != old) axpy_row(w, (a[i] - old) * yi, r, i);
  };
  auto done = [&](int64_t) {
    const bool stop = pg_max - pg_min <= c.tol;
    pg_max = -inf;
    pg_min = inf;
    return stop;
  };
  CdResult out = run_cd(r, c, problem, sweep, done);
  out.w = std::move(w);
  return out;
}

// linear_svr's dual problem for targets y.
CdResult svr_dual(const HostRows& r, const std::vector<double>& y, const CdConfig& c) {
  const double inf = std::numeric_limits<double>::infinity();
  const double eps = c.epsilon;
  std::vector<double> b(static_cast<size_t>(r.n), 0.0), w(static_cast<size_t>(r.d1), 0.0);
  double viol_sum = 0.0, viol_first = 0.0;
  auto sweep = [&](int64_t i) {
    const double Ci = c.row_C(i);
    if (Ci == 0.0) return;  // weight 0: the row takes no part
    const double U = c.squared ? inf : Ci;
    const double lam = c.squared ? 0.5 / Ci : 0.0;
    const double G = dot_row(w, r, i) - y[i] + lam * b[i];
    const double Gp = G + eps, Gn = G - eps;
    double v = 0.0;
    if (b[i] == 0.0) v = std::max(std::max(-Gp, Gn), 0.0);
    else if (b[i] >= U) v = std::max(Gp, 0.0);
    else if (b[i] <= -U) v = std::max(-Gn, 0.0);
    else if (b[i] > 0.0) v = std::abs(Gp);
    else v = std::abs(Gn);
    viol_sum += v;
    const double H = r.sq[i] + lam;
    if (!(H > 0.0)) return;  // a zero row with lambda = 0: w does not depend on b_i
    double step = -b[i];
    if (Gp < H * b[i]) step = -Gp / H;
    else if (Gn > H * b[i]) step = -Gn / H;
    const double nb = std::min(std::max(b[i] + step, -U), U);
    if (nb != b[i]) {
      axpy_row(w, nb - b[i], r, i);
      b[i] = nb;
    }
  };
  auto done = [&](int64_t it) {
    if (it == 0) viol_first = viol_sum;
    const bool stop = viol_sum <= c.tol * viol_first;
    viol_sum = 0.0;
    return stop;
  };
  CdResult out = run_cd(r, c, 0, sweep, done);
  out.w = std::move(w);
  return out;
}

// coef (binary32) and intercept from a solution with the intercept weight last.
void split_weights(const std::vector<double>& w, int64_t d, bool fit_intercept, double scaling, float* coef,
                   float& intercept) {
  for (int64_t j = 0; j < d; ++j) coef[j] = static_cast<float>(w[j]);
  intercept = fit_intercept ? static_cast<float>(scaling * w[d]) : 0.0f;
}

std::vector<ParamSpec> common_specs(std::vector<ParamSpec> extra) {
  std::vector<ParamSpec> s = {{"C", K::number, "1", 0.0, {}, true},
                              {"dual", K::choice, "auto", 0, {"auto", "true", "false"}},
                              {"fit_intercept", K::boolean, "true"},
                              {"intercept_scaling", K::number, "1", 0.0, {}, true},
                              {"max_iter", K::integer, "1000", 1},
                              {"random_state", K::integer, "0", 0},
                              {"tol", K::number, "0.0001", 0.0, {}, true}};
  for (ParamSpec& e : extra) s.push_back(std::move(e));
  std::sort(s.begin(), s.end(), [](const ParamSpec& a, const ParamSpec& b) { return a.name < b.name; });
  return s;
}

CdConfig cd_config(const lin::ParamSet& p) {
  CdConfig c;
  c.C = p.number("C");
  c.tol = p.number("tol");
  c.max_iter = p.integer("max_iter");
  c.seed = static_cast<uint64_t>(p.integer("random_state"));
  return c;
}

class LinearSvc final : public WeightedRowsFit<LinearSvc, LinearClassifierBase> {
 public:
  LinearSvc()
      : WeightedRowsFit("linear_svc",
                        common_specs({{"loss", K::choice, "squared_hinge", 0, {"squared_hinge", "hinge"}},
                                      {"multi_class", K::choice, "ovr", 0, {"ovr", "crammer_singer"}},
                                      {"penalty", K::choice, "l2", 0, {"l2", "l1"}}})) {}

  friend WeightedRowsFit;

  void save_state(nlohmann::json& state) const override {
    state["written_by"] = name();
    fit_.save(state);
  }
  void load_state(const nlohmann::json& state) override {
    check_written_by(state, name());
    lin::LinearClassifierFit loaded;
    loaded.load(state, name());
    fit_ = std::move(loaded);
  }

 private:
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* w) {
    check_Xy(name(), X, y);
    CdConfig c = cd_config(params_);
    c.weights = w;
    const std::string loss = params_.text("loss");
    c.squared = loss == "squared_hinge";
    BL_CHECK(params_.text("penalty") == "l2", name(),
             ": penalty=l1 (primal coordinate descent) is not supported; use penalty=l2");
    BL_CHECK(params_.text("multi_class") == "ovr", name(),
             ": multi_class=crammer_singer is not supported; use multi_class=ovr");
    BL_CHECK(c.squared || params_.text("dual") != "false", name(),
             ": loss=hinge needs the dual problem (dual=true or auto), got dual=false");
    lin::EncodedLabels enc = lin::encode_labels(name(), y);
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t n_classes = static_cast<int64_t>(enc.classes.size());
    const int64_t m = n_classes == 2 ? 1 : n_classes;
    const bool fi = params_.boolean("fit_intercept");
    const double scaling = params_.number("intercept_scaling");
    const HostRows rows = host_rows(X, fi, scaling);
    std::vector<CdResult> res(static_cast<size_t>(m));
    default_pool().parallel_for(m, [&](int64_t k) {
      const int64_t positive = m == 1 ? 1 : k;
      std::vector<int> yk(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) yk[i] = enc.index[i] == positive ? 1 : -1;
      res[k] = svc_dual(rows, yk, c, static_cast<uint64_t>(k));
    });
    fit_.coef.assign(static_cast<size_t>(m * d), 0.0f);
    fit_.intercept.assign(static_cast<size_t>(m), 0.0f);
    fit_.n_iter = 0;
    bool converged = true;
    for (int64_t k = 0; k < m; ++k) {
      split_weights(res[k].w, d, fi, scaling, fit_.coef.data() + k * d, fit_.intercept[k]);
      fit_.n_iter = std::max(fit_.n_iter, res[k].iters);
      converged = converged && res[k].converged;
    }
    report_progress("linear_svc coordinate descent", fit_.n_iter, fit_.n_iter);
    if (!converged) warn_not_converged("linear_svc coordinate descent", c.max_iter);
    fit_.classes = enc.classes;
    fit_.label_dtype = y.dtype();
    fit_.n_features = d;
    fit_.outputs = m;
    fit_.fitted = true;
    return *this;
  }
};

class LinearSvr final : public WeightedRowsFit<LinearSvr, LinearModelBase> {
 public:
  LinearSvr()
      : WeightedRowsFit("linear_svr",
                        common_specs({{"epsilon", K::number, "0", 0.0},
                                      {"loss", K::choice, "epsilon_insensitive", 0,
                                       {"epsilon_insensitive", "squared_epsilon_insensitive"}}})) {}

 private:
  friend WeightedRowsFit;

  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* w) {
    check_Xy(name_, X, y);
    CdConfig c = cd_config(params_);
    c.weights = w;
    c.squared = params_.text("loss") == "squared_epsilon_insensitive";
    c.epsilon = params_.number("epsilon");
    BL_CHECK(c.squared || params_.text("dual") != "false", name_,
             ": loss=epsilon_insensitive needs the dual problem (dual=true or auto), got dual=false");
    const int64_t d = X.dim(1);
    const bool fi = params_.boolean("fit_intercept");
    const double scaling = params_.number("intercept_scaling");
    const HostRows rows = host_rows(X, fi, scaling);
    const std::vector<float> yf = lin::y_to_host(y);
    const std::vector<double> yd(yf.begin(), yf.end());
    CdResult r = svr_dual(rows, yd, c);
    report_progress("linear_svr coordinate descent", r.iters, r.iters);
    if (!r.converged) warn_not_converged("linear_svr coordinate descent", c.max_iter);
    std::vector<float> coef(static_cast<size_t>(d));
    float b = 0.0f;
    split_weights(r.w, d, fi, scaling, coef.data(), b);
    set_fit(std::move(coef), b, r.iters);
    return *this;
  }
};

}  // namespace

std::unique_ptr<Estimator> make_linear_svc() { return std::make_unique<LinearSvc>(); }
std::unique_ptr<Estimator> make_linear_svr() { return std::make_unique<LinearSvr>(); }

}  // namespace bl::ml
