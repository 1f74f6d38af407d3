// svm.cpp: svc, nu_svc, svr, nu_svr and one_class_svm, scikit-learn's SVC, NuSVC, SVR, NuSVR and
// OneClassSVM (libsvm's C-SVC, nu-SVC, epsilon-SVR, nu-SVR and one-class SVM).
//
// Kernel: the pairwise kernels of ml/kernel/kernels.h (linear, poly, rbf, sigmoid). gamma=scale is
// 1 / (n_features * var(X)), var over all entries of X in binary64 on the host (row-major sums: the
// mean, then the squared deviations; 1 when the variance is 0), gamma=auto is 1 / n_features, each
// rounded once to binary32.
//
// Fit: the full kernel matrix K [n, n] of the training rows is computed once on X's device (row
// blocks of at most 2^24 entries) and copied to the host; n is limited to 2^14 rows. Each dual
// problem  min 0.5 a^T Q a + p^T a,  0 <= a_t <= C,  sum_t y_t a_t = const,  Q_st = y_s y_t K_st
// is solved by SMO as libsvm (Fan, Chen and Lin 2005) on the host in binary64, without shrinking:
//   from the initial a, G = p + Q a (rows t with a_t > 0 in ascending order, each added to G in
//   ascending order), i = argmax over {t: y_t = +1, a_t < C or y_t = -1, a_t > 0} of -y_t G_t,
//   j = argmin of the second-order objective decrease -(b_it^2) / a_it over the t with
//   -y_t G_t < -y_i G_i in the other index set (a_it = K_ii + K_tt - 2 K_it, 1e-12 when <= 0);
//   ties in both scans go to the last index, as libsvm's >= / <= comparisons. Stop when
//   max violation (m(a) - M(a)) < tol. The pair is updated analytically and clipped to the box as
//   libsvm; G_k += Q_ik da_i + Q_jk da_j for k in ascending order. rho: the mean of y_t G_t over the
//   free variables, else the midpoint of the bounds. max_iter caps the iterations (a convergence
//   warning); max_iter=-1 uses libsvm's own cap max(10^7, 100 l) (also a warning when reached).
//   The nu formulations (two equality constraints, libsvm's Solver_NU) select i within each sign
//   class (i+ over y = +1, i- over y = -1, the same scans as above), j over both classes against
//   the i of its own class, stop when max(m+ - M+, m- - M-) < tol, and take r1, r2: the mean of G_t
//   over the free variables of y = +1 (resp. -1), else the midpoint of their bounds;
//   rho = (r1 - r2) / 2, r = (r1 + r2) / 2.
// svc: one problem per class pair (a < b) in ascending class order; its variables are the rows of
//   class a (y = +1) then of class b (y = -1), each in ascending row order, as libsvm; p = -1. A row
//   is a support vector when its alpha is positive in some pair. Support vectors are listed by class,
//   ascending rows within a class; dual_coef [n_classes - 1, n_SV] and intercept (= -rho) in
//   libsvm's layout, and for two classes both negated, as scikit-learn (positive: classes[1]).
// nu_svc: as svc with the nu problem: C = 1, p = 0, initial a_t = min(1, remaining) with nu l / 2
//   to spend in each sign class in variable order; then coef_t = y_t a_t / r and rho / r. A pair
//   with nu (n_a + n_b) / 2 > min(n_a, n_b) is refused (libsvm's "specified nu is infeasible").
// svr: the 2l-variable problem of libsvm: variables t < l with y = +1, p_t = epsilon - y_t and
//   t >= l with y = -1, p_t = epsilon + y_{t-l}; coef_t = a_t - a_{t+l}; support vectors: coef != 0.
// nu_svr: the nu problem over the same 2l variables, p_t = -y_t, p_{t+l} = y_t, a_t = a_{t+l} =
//   min(C, remaining) from C nu l / 2 in row order; coef_t = a_t - a_{t+l}.
// one_class_svm: variables t < l, y = +1, p = 0, C = 1, a_t = 1 for t < floor(nu l), the next
//   nu l - floor(nu l), the rest 0 (sum a = nu l); coef_t = a_t; support vectors: a_t > 0.
// All fitted numbers are rounded to binary32 once.
//
// sample_weight (scikit-learn's per-sample C): each variable of row r gets its own bound
// C_t = C w_r (nu_svc, one_class_svm: C_t = w_r) in place of C in the selection, the clipping of
// the pair update (libsvm's rules with C_i and C_j) and rho; rows of weight 0 are left out of every
// problem (their kernel entries are still computed, and gamma=scale still reads them). The nu
// starts spend nu sum(w) / 2 per sign class (nu_svc), C nu sum(w) / 2 (nu_svr) or nu sum(w)
// (one_class_svm) in variable order, a_t = min(C_t, remaining); nu_svc's feasibility test compares
// the classes' weight sums. Platt's folds keep the rows' bounds. All-ones weights give the
// unweighted bits (C 1 = C, and the sums of ones are the counts).
//
// probability=true (svc, nu_svc): for each class pair, libsvm's Platt scaling: the pair's rows are
//   permuted (step i swaps i with i + philox_index(word i of Philox stream 1 + pair under
//   random_state, l - i)), split in 5 consecutive folds (fold f: positions [f l / 5, (f + 1) l / 5));
//   each fold's rows get the decision value (libsvm's orientation, binary64 from K) of the pair
//   problem trained on the other folds (their y = +1 rows, then y = -1 rows, in permuted order;
//   +1 / -1 when the other folds hold one class only); the sigmoid 1 / (1 + exp(A f + B)) is fit to
//   them by Newton's method with backtracking (Lin, Lin and Weng 2007: targets (N+ + 1) / (N+ + 2)
//   and 1 / (N- + 2), at most 100 iterations, step down to 1e-10, Hessian ridge 1e-12, stop when
//   both gradient entries are below 1e-5). predict_proba: each pair's sigmoid of its decision
//   value, clipped to [1e-7, 1 - 1e-7]; two classes: (p, 1 - p) in libsvm's orientation; more: the
//   pairwise coupling of Wu, Lin and Weng 2004 (libsvm's iterative method: at most max(100, k)
//   sweeps, stop when max_t |(Qp)_t - p^T Q p| < 0.005 / k). All in binary64 on the host; exp and
//   log in binary64 by basic operations only (ml/host_math.h), so the bits do not depend on libm.
//   The folds are not scikit-learn's (its libsvm draws them from its own generator), so the
//   probabilities agree with scikit-learn's only approximately.
//
// Predict: decision values K(X, SV) W + intercept through the contract GEMM on X's device in row
// blocks of X (W: the dual coefficients; for more than two classes one column per class pair, zero
// outside the pair's two classes). svr, nu_svr: the values. svc, nu_svc: two classes: classes[1]
// where the value is >= 0; more: one vote per pair (a if the value is > 0, else b), the first class
// of most votes. decision_function: two classes the value; more: ovo the pair values, ovr
// scikit-learn's transformation votes + s / (3 (|s| + 1)) of the summed pair values s, in binary64
// on the host. one_class_svm: decision_function the value, score_samples value + offset
// (offset = rho = -intercept, one binary32 addition), predict +1 where the value is > 0, else -1
// (libsvm's sign).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "core/error.h"
#include "contract/rng.h"
#include "ml/cluster/distances.h"
#include "ml/host_math.h"
#include "ml/kernel/kernels.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/weighted_fit.h"

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
  std::vector<int> y;        // +1 / -1
  std::vector<double> p;     // linear term
  std::vector<double> a0;    // initial alpha (empty: 0)
  bool nu = false;           // libsvm's Solver_NU (two equality constraints)
  double C = 1.0;
  std::vector<double> Cv;    // per-variable upper bounds (sample weights times C); empty: C for all
  double tol = 1e-3;
  int64_t max_iter = -1;
};

struct SmoResult {
  std::vector<double> alpha;
  double rho = 0.0;
  double r = 0.0;  // nu problems: (r1 + r2) / 2
  int64_t iters = 0;
  bool converged = true;
};

int64_t smo_cap(int64_t max_iter, int64_t l) {
  return max_iter > 0 ? max_iter : std::max<int64_t>(10000000, 100 * l);
}

SmoResult solve_smo(const SmoProblem& pr) {
  const int64_t l = static_cast<int64_t>(pr.idx.size());
  const std::vector<float>& Km = *pr.K;
  const int64_t n = pr.n;
  auto kv = [&](int64_t s, int64_t t) { return static_cast<double>(Km[pr.idx[s] * n + pr.idx[t]]); };
  const std::vector<double> Cb = pr.Cv.empty() ? std::vector<double>(static_cast<size_t>(l), pr.C) : pr.Cv;
  std::vector<double> a = pr.a0.empty() ? std::vector<double>(l, 0.0) : pr.a0, G = pr.p, QD(l);
  for (int64_t t = 0; t < l; ++t) QD[t] = kv(t, t);
  for (int64_t s = 0; s < l; ++s) {
    if (!(a[s] > 0.0)) continue;
    for (int64_t t = 0; t < l; ++t) G[t] += a[s] * (pr.y[s] * pr.y[t] * kv(s, t));
  }
  const int64_t cap = smo_cap(pr.max_iter, l);
  SmoResult r;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> Ki(l), Kj(l), Kn(l);
  auto kernel_row = [&](std::vector<double>& out, int64_t s) {
    for (int64_t t = 0; t < l; ++t) out[t] = kv(s, t);
  };
  // The largest -y_t G_t over I_up, the y = +1 rows into (g_pos, i_pos) and the y = -1 rows into
  // (g_neg, i_neg); given the same pair twice, one maximum over both signs. Ties: the later t.
  auto up_max = [&](double& g_pos, int64_t& i_pos, double& g_neg, int64_t& i_neg) {
    for (int64_t t = 0; t < l; ++t) {
      if (pr.y[t] == 1) {
        if (a[t] < Cb[t] && -G[t] >= g_pos) g_pos = -G[t], i_pos = t;
      } else if (a[t] > 0.0 && G[t] >= g_neg) {
        g_neg = G[t], i_neg = t;
      }
    }
  };
  // Second-order selection: row t with gradient gap gd > 0 and curvature qc (kTau where not
  // positive) becomes j when its objective is the lowest so far (ties: the later t).
  auto second_order = [&](int64_t t, double gd, double qc, int64_t& j, double& obj_min) {
    const double obj = -(gd * gd) / (qc > 0.0 ? qc : kTau);
    if (obj <= obj_min) j = t, obj_min = obj;
  };
  for (;;) {
    int64_t i = -1, j = -1;
    if (!pr.nu) {
      // i: the largest -y_t G_t over I_up.
      double gmax = -inf;
      up_max(gmax, i, gmax, i);
      if (i >= 0) kernel_row(Ki, i);
      // j: second-order selection over I_low.
      double gmax2 = -inf, obj_min = inf;
      for (int64_t t = 0; t < l; ++t) {
        if (pr.y[t] == 1) {
          if (!(a[t] > 0.0)) continue;
          const double gd = gmax + G[t];
          if (G[t] >= gmax2) gmax2 = G[t];
          if (i >= 0 && gd > 0.0)
            second_order(t, gd, QD[i] + QD[t] - 2.0 * static_cast<double>(pr.y[t]) * Ki[t], j, obj_min);
        } else {
          if (!(a[t] < Cb[t])) continue;
          const double gd = gmax - G[t];
          if (-G[t] >= gmax2) gmax2 = -G[t];
          if (i >= 0 && gd > 0.0)
            second_order(t, gd, QD[i] + QD[t] + 2.0 * static_cast<double>(pr.y[t]) * Ki[t], j, obj_min);
        }
      }
      if (gmax + gmax2 < pr.tol || j < 0) break;
    } else {
      // i+ over y = +1 (a < C), i- over y = -1 (a > 0); j against the i of its own sign.
      double gp = -inf, gn = -inf;
      int64_t ip = -1, in = -1;
      up_max(gp, ip, gn, in);
      if (ip >= 0) kernel_row(Ki, ip);
      if (in >= 0) kernel_row(Kn, in);
      double gp2 = -inf, gn2 = -inf, obj_min = inf;
      for (int64_t t = 0; t < l; ++t) {
        if (pr.y[t] == 1) {
          if (!(a[t] > 0.0)) continue;
          const double gd = gp + G[t];
          if (G[t] >= gp2) gp2 = G[t];
          if (ip >= 0 && gd > 0.0) second_order(t, gd, QD[ip] + QD[t] - 2.0 * Ki[t], j, obj_min);
        } else {
          if (!(a[t] < Cb[t])) continue;
          const double gd = gn - G[t];
          if (-G[t] >= gn2) gn2 = -G[t];
          if (in >= 0 && gd > 0.0) second_order(t, gd, QD[in] + QD[t] - 2.0 * Kn[t], j, obj_min);
        }
      }
      if (std::max(gp + gp2, gn + gn2) < pr.tol || j < 0) break;
      i = pr.y[j] == 1 ? ip : in;
      if (i == in) Ki.swap(Kn);
    }
    if (r.iters >= cap) {
      r.converged = false;
      break;
    }
    ++r.iters;
    kernel_row(Kj, j);
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
      if (diff > Cb[i] - Cb[j]) {
        if (ai > Cb[i]) ai = Cb[i], aj = Cb[i] - diff;
      } else if (aj > Cb[j]) {
        aj = Cb[j], ai = Cb[j] + diff;
      }
    } else {
      double qc = QD[i] + QD[j] - 2.0 * Qij;
      if (qc <= 0.0) qc = kTau;
      const double delta = (G[i] - G[j]) / qc;
      const double sum = ai + aj;
      ai -= delta;
      aj += delta;
      if (sum > Cb[i]) {
        if (ai > Cb[i]) ai = Cb[i], aj = sum - Cb[i];
      } else if (aj < 0.0) {
        aj = 0.0, ai = sum;
      }
      if (sum > Cb[j]) {
        if (aj > Cb[j]) aj = Cb[j], ai = sum - Cb[j];
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
  if (!pr.nu) {
    double ub = inf, lb = -inf, sum_free = 0.0;
    int64_t nr_free = 0;
    for (int64_t t = 0; t < l; ++t) {
      const double yG = pr.y[t] * G[t];
      if (a[t] >= Cb[t]) {
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
  } else {
    double ub[2] = {inf, inf}, lb[2] = {-inf, -inf}, sum_free[2] = {0.0, 0.0};
    int64_t nr_free[2] = {0, 0};
    for (int64_t t = 0; t < l; ++t) {
      const int s = pr.y[t] == 1 ? 0 : 1;
      if (a[t] >= Cb[t]) lb[s] = std::max(lb[s], G[t]);
      else if (a[t] <= 0.0) ub[s] = std::min(ub[s], G[t]);
      else ++nr_free[s], sum_free[s] += G[t];
    }
    double rr[2];
    for (int s = 0; s < 2; ++s)
      rr[s] = nr_free[s] > 0 ? sum_free[s] / static_cast<double>(nr_free[s]) : (ub[s] + lb[s]) / 2.0;
    r.r = (rr[0] + rr[1]) / 2.0;
    r.rho = (rr[0] - rr[1]) / 2.0;
  }
  r.alpha = std::move(a);
  return r;
}

// Platt's sigmoid (A, B) fitted to decision values f and labels (Lin, Lin and Weng 2007).
std::pair<double, double> sigmoid_fit(const std::vector<double>& f, const std::vector<int>& y) {
  const int64_t l = static_cast<int64_t>(f.size());
  double prior1 = 0.0, prior0 = 0.0;
  for (int v : y) (v > 0 ? prior1 : prior0) += 1.0;
  const double hi = (prior1 + 1.0) / (prior1 + 2.0), lo = 1.0 / (prior0 + 2.0);
  std::vector<double> t(static_cast<size_t>(l));
  for (int64_t i = 0; i < l; ++i) t[i] = y[i] > 0 ? hi : lo;
  double A = 0.0, B = log64((prior0 + 1.0) / (prior1 + 1.0));
  auto objective = [&](double a, double b) {
    double v = 0.0;
    for (int64_t i = 0; i < l; ++i) {
      const double z = f[i] * a + b;
      v += z >= 0.0 ? t[i] * z + log64(1.0 + exp64(-z)) : (t[i] - 1.0) * z + log64(1.0 + exp64(z));
    }
    return v;
  };
  double fval = objective(A, B);
  for (int iter = 0; iter < 100; ++iter) {
    double h11 = 1e-12, h22 = 1e-12, h21 = 0.0, g1 = 0.0, g2 = 0.0;
    for (int64_t i = 0; i < l; ++i) {
      const double z = f[i] * A + B;
      double p, q;
      if (z >= 0.0) {
        const double e = exp64(-z);
        p = e / (1.0 + e), q = 1.0 / (1.0 + e);
      } else {
        const double e = exp64(z);
        p = 1.0 / (1.0 + e), q = e / (1.0 + e);
      }
      const double d2 = p * q;
      h11 += f[i] * f[i] * d2;
      h22 += d2;
      h21 += f[i] * d2;
      const double d1 = t[i] - p;
      g1 += f[i] * d1;
      g2 += d1;
    }
    if (std::fabs(g1) < 1e-5 && std::fabs(g2) < 1e-5) break;
    const double det = h11 * h22 - h21 * h21;
    const double dA = -(h22 * g1 - h21 * g2) / det, dB = -(-h21 * g1 + h11 * g2) / det;
    const double gd = g1 * dA + g2 * dB;
    double step = 1.0;
    while (step >= 1e-10) {
      const double nA = A + step * dA, nB = B + step * dB, nf = objective(nA, nB);
      if (nf < fval + 0.0001 * step * gd) {
        A = nA, B = nB, fval = nf;
        break;
      }
      step /= 2.0;
    }
    if (step < 1e-10) break;  // line search failed
  }
  return {A, B};
}

double sigmoid_predict(double f, double A, double B) {
  const double z = f * A + B;
  if (z >= 0.0) {
    const double e = exp64(-z);
    return e / (1.0 + e);
  }
  return 1.0 / (1.0 + exp64(z));
}

// Pairwise coupling (Wu, Lin and Weng 2004, method 2): r [k, k] with r_ij = P(i | i or j).
std::vector<double> couple(int64_t k, const std::vector<double>& r) {
  std::vector<double> Q(static_cast<size_t>(k * k), 0.0), Qp(static_cast<size_t>(k)), p(static_cast<size_t>(k));
  for (int64_t t = 0; t < k; ++t) {
    p[t] = 1.0 / static_cast<double>(k);
    for (int64_t j = 0; j < t; ++j) {
      Q[t * k + t] += r[j * k + t] * r[j * k + t];
      Q[t * k + j] = Q[j * k + t];
    }
    for (int64_t j = t + 1; j < k; ++j) {
      Q[t * k + t] += r[j * k + t] * r[j * k + t];
      Q[t * k + j] = -r[j * k + t] * r[t * k + j];
    }
  }
  const int64_t max_iter = std::max<int64_t>(100, k);
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t iter = 0; iter < max_iter; ++iter) {
    double pQp = 0.0;
    for (int64_t t = 0; t < k; ++t) {
      Qp[t] = 0.0;
      for (int64_t j = 0; j < k; ++j) Qp[t] += Q[t * k + j] * p[j];
      pQp += p[t] * Qp[t];
    }
    double max_error = 0.0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::fabs(Qp[t] - pQp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diff = (-Qp[t] + pQp) / Q[t * k + t];
      p[t] += diff;
      pQp = (pQp + diff * (diff * Q[t * k + t] + 2.0 * Qp[t])) / (1.0 + diff) / (1.0 + diff);
      for (int64_t j = 0; j < k; ++j) {
        Qp[j] = (Qp[j] + diff * Q[t * k + j]) / (1.0 + diff);
        p[j] /= (1.0 + diff);
      }
    }
  }
  return p;
}

enum class Form { svc, nu_svc, svr, nu_svr, one_class };

const char* form_name(Form f) {
  switch (f) {
    case Form::svc: return "svc";
    case Form::nu_svc: return "nu_svc";
    case Form::svr: return "svr";
    case Form::nu_svr: return "nu_svr";
    default: return "one_class_svm";
  }
}

std::vector<ParamSpec> common_specs(Form f) {
  std::vector<ParamSpec> s{{"coef0", K::number, "0"},
                           {"degree", K::integer, "3", 0},
                           {"gamma", K::number_or_word, "scale", 0.0, {"scale", "auto"}},
                           {"kernel", K::choice, "rbf", 0, {"linear", "poly", "rbf", "sigmoid"}},
                           {"max_iter", K::integer, "-1", -1},
                           {"tol", K::number, "0.001", 0.0}};
  if (f == Form::svc || f == Form::svr || f == Form::nu_svr) s.push_back({"C", K::number, "1", 0.0});
  if (f == Form::nu_svc || f == Form::nu_svr || f == Form::one_class) s.push_back({"nu", K::number, "0.5", 0.0});
  if (f == Form::svc || f == Form::nu_svc) {
    s.push_back({"decision_function_shape", K::choice, "ovr", 0, {"ovr", "ovo"}});
    s.push_back({"probability", K::boolean, "false"});
    s.push_back({"random_state", K::integer, "0", 0});
  }
  if (f == Form::svr) s.push_back({"epsilon", K::number, "0.1", 0.0});
  return s;
}

class Svm final : public WeightedRowsFit<Svm, lin::ParamEstimator> {
 public:
  explicit Svm(Form f)
      : WeightedRowsFit(form_name(f), common_specs(f)),
        form_(f),
        svc_(f == Form::svc || f == Form::nu_svc) {}

  // The ParamSet's checks, then the ones between values (C, nu, tol, max_iter, degree).
  void set_params(const Params& p) override {
    Params rest = p;
    lin::ParamSet next = params_;
    next.set(rest);
    if (has_C())
      BL_CHECK(next.number("C") > 0.0, name_, ": parameter C=", next.text("C"), ": expected a number > 0");
    if (has_nu()) {
      const double nu = next.number("nu");
      BL_CHECK(nu > 0.0 && nu <= 1.0, name_, ": parameter nu=", next.text("nu"), ": expected a number in (0, 1]");
    }
    BL_CHECK(next.number("tol") > 0.0, name_, ": parameter tol=", next.text("tol"), ": expected a number > 0");
    BL_CHECK(next.integer("max_iter") != 0, name_, ": parameter max_iter=0: expected -1 (no limit) or >= 1");
    BL_CHECK(next.integer("degree") <= 64, name_, ": parameter degree=", next.text("degree"),
             " is too large (at most 64)");
    params_ = next;
  }

 private:
  friend WeightedRowsFit;

  // The fit; w (null: unweighted) scales each row's box bound, C_t = C w_t (nu_svc, one_class_svm:
  // C_t = w_t), and rows of weight 0 take no part in the dual problems.
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* w) {
    const bool one = form_ == Form::one_class;
    if (one) check_X(name_, X);
    else check_Xy(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n <= kMaxRows, name_, ": ", n, " rows would need a ", n, " x ", n,
             " kernel matrix on the host; the limit is ", kMaxRows, " rows (subsample the data)");
    lin::EncodedLabels enc;
    std::vector<float> yv;
    if (svc_) enc = lin::encode_labels(name_, y, 2);
    else if (!one) yv = lin::y_to_host(y);
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
    pr.C = has_C() ? params_.number("C") : 1.0;
    pr.tol = params_.number("tol");
    pr.max_iter = params_.integer("max_iter");
    const double nu = has_nu() ? params_.number("nu") : 0.0;
    bool converged = true;
    n_iter_.clear();
    prob_a_.clear();
    prob_b_.clear();
    offset_ = 0.0f;
    std::vector<double> dual;   // [rows of dual_coef, n_SV] row-major
    std::vector<double> rho;
    std::vector<int64_t> sv;
    if (svc_) {
      const int64_t c = static_cast<int64_t>(enc.classes.size());
      std::vector<std::vector<int64_t>> members(static_cast<size_t>(c));
      std::vector<double> mass(static_cast<size_t>(c), 0.0);  // rows, or weights, per class
      for (int64_t i = 0; i < n; ++i) {
        if (w != nullptr && !((*w)[i] > 0.0f)) continue;
        members[static_cast<size_t>(enc.index[i])].push_back(i);
        mass[static_cast<size_t>(enc.index[i])] += w != nullptr ? static_cast<double>((*w)[i]) : 1.0;
      }
      for (int64_t k = 0; k < c; ++k)
        BL_CHECK(!members[k].empty(), name_, ": class ", enc.classes[k],
                 " has no row of positive sample_weight (rows of weight 0 take no part in the fit)");
      if (form_ == Form::nu_svc)
        for (int64_t ca = 0; ca < c; ++ca)
          for (int64_t cb = ca + 1; cb < c; ++cb) {
            const double na = mass[ca], nb = mass[cb];
            BL_CHECK(!(nu * (na + nb) / 2.0 > std::min(na, nb)), name_, ": specified nu is infeasible (nu=",
                     params_.text("nu"), ": classes ", enc.classes[ca], " and ", enc.classes[cb], " have ", na,
                     " and ", nb, " rows; nu must be at most 2 min(n_a, n_b) / (n_a + n_b))");
          }
      const bool proba = params_.boolean("probability");
      const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
      std::vector<std::vector<double>> coefs;  // per pair, over its variables
      std::vector<char> nonzero(static_cast<size_t>(n), 0);
      int64_t pair = 0;
      for (int64_t ca = 0; ca < c; ++ca)
        for (int64_t cb = ca + 1; cb < c; ++cb, ++pair) {
          pr.idx.clear();
          pr.y.clear();
          for (int64_t r : members[ca]) pr.idx.push_back(r), pr.y.push_back(1);
          for (int64_t r : members[cb]) pr.idx.push_back(r), pr.y.push_back(-1);
          set_bounds(pr, w);
          if (proba) {
            const auto ab = platt(pr, nu, seed, static_cast<uint64_t>(pair), converged);
            prob_a_.push_back(static_cast<float>(ab.first));
            prob_b_.push_back(static_cast<float>(ab.second));
          }
          std::vector<double> cf;
          double pair_rho = 0.0;
          solve_pair(pr, nu, cf, pair_rho, converged);
          for (size_t t = 0; t < pr.idx.size(); ++t)
            if (cf[t] != 0.0) nonzero[static_cast<size_t>(pr.idx[t])] = 1;
          coefs.push_back(std::move(cf));
          rho.push_back(pair_rho);
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
    } else if (one) {
      pr.idx = kept_rows(n, w);
      const int64_t l = static_cast<int64_t>(pr.idx.size());
      pr.y.assign(static_cast<size_t>(l), 1);
      pr.p.assign(static_cast<size_t>(l), 0.0);
      pr.a0.assign(static_cast<size_t>(l), 0.0);
      set_bounds(pr, w);
      if (w == nullptr) {
        const double total = nu * static_cast<double>(l);
        const int64_t whole = static_cast<int64_t>(total);
        for (int64_t i = 0; i < whole && i < l; ++i) pr.a0[i] = 1.0;
        if (whole < l) pr.a0[whole] = total - static_cast<double>(whole);
      } else {  // nu sum(w) spent in row order, each a_t up to its bound w_t
        double left = nu * row_mass(pr.idx, w);
        for (int64_t t = 0; t < l && left > 0.0; ++t) {
          pr.a0[t] = std::min(pr.Cv[t], left);
          left -= pr.a0[t];
        }
      }
      SmoResult res = solve_smo(pr);
      converged = res.converged;
      n_iter_.push_back(res.iters);
      dual_.clear();
      for (int64_t t = 0; t < l; ++t)
        if (res.alpha[t] > 0.0) {
          sv.push_back(pr.idx[t]);
          dual_.push_back(static_cast<float>(res.alpha[t]));
        }
      n_support_ = {static_cast<int64_t>(sv.size())};
      intercept_ = {static_cast<float>(-res.rho)};
      offset_ = static_cast<float>(res.rho);
    } else {
      // Variables t < l (y = +1) and t + l (y = -1) over the rows of positive weight.
      const std::vector<int64_t> kept = kept_rows(n, w);
      const int64_t l = static_cast<int64_t>(kept.size());
      pr.idx.resize(static_cast<size_t>(2 * l));
      pr.y.resize(static_cast<size_t>(2 * l));
      pr.p.resize(static_cast<size_t>(2 * l));
      for (int64_t t = 0; t < l; ++t) {
        pr.idx[t] = kept[t], pr.idx[t + l] = kept[t];
        pr.y[t] = 1, pr.y[t + l] = -1;
      }
      set_bounds(pr, w);
      if (form_ == Form::svr) {
        const double eps = params_.number("epsilon");
        for (int64_t t = 0; t < l; ++t) {
          pr.p[t] = eps - static_cast<double>(yv[kept[t]]);
          pr.p[t + l] = eps + static_cast<double>(yv[kept[t]]);
        }
      } else {
        pr.nu = true;
        pr.a0.assign(static_cast<size_t>(2 * l), 0.0);
        double left = pr.C * nu * row_mass(kept, w) / 2.0;
        for (int64_t t = 0; t < l; ++t) {
          pr.a0[t] = pr.a0[t + l] = std::min(left, pr.Cv.empty() ? pr.C : pr.Cv[t]);
          left -= pr.a0[t];
          pr.p[t] = -static_cast<double>(yv[kept[t]]);
          pr.p[t + l] = static_cast<double>(yv[kept[t]]);
        }
      }
      SmoResult res = solve_smo(pr);
      converged = res.converged;
      n_iter_.push_back(res.iters);
      dual_.clear();
      for (int64_t t = 0; t < l; ++t) {
        const double cf = res.alpha[t] - res.alpha[t + l];
        if (cf != 0.0) {
          sv.push_back(kept[t]);
          dual_.push_back(static_cast<float>(cf));
        }
      }
      n_support_ = {static_cast<int64_t>(sv.size())};
      intercept_ = {static_cast<float>(-res.rho)};
    }
    support_ = sv;
    n_fit_ = n;
    sv_.clear();
    for (int64_t r : sv) sv_.insert(sv_.end(), x.begin() + r * d, x.begin() + (r + 1) * d);
    d_ = d;
    gamma_ = spec.gamma;
    fitted_ = true;
    if (!converged) warn_not_converged(name_ + " SMO", smo_cap(pr.max_iter, svc_ || one ? n : 2 * n));
    return *this;
  }

 public:
  Tensor predict(const Tensor& X) const override {
    Tensor D = raw_decision(X);
    if (form_ == Form::one_class) {
      std::vector<float> v = D.to(Device::cpu()).contiguous().to_vector<float>();
      for (float& e : v) e = e > 0.0f ? 1.0f : -1.0f;
      return Tensor::from_vector(v, {X.dim(0)}, X.device());
    }
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

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(svc_ && params_.boolean("probability"), name_,
             ": predict_proba is not supported without probability=true (Platt scaling at fit)");
    BL_CHECK(fitted_, name_, ": predict before fit");
    BL_CHECK(!prob_a_.empty(), name_, ": the model was fitted without probability=true");
    Tensor D = raw_decision(X);
    const int64_t m = X.dim(0), c = static_cast<int64_t>(classes_.size()), P = c * (c - 1) / 2;
    std::vector<float> v = D.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<float> out(static_cast<size_t>(m * c));
    std::vector<double> r(static_cast<size_t>(c * c));
    const double lo = 1e-7;
    for (int64_t i = 0; i < m; ++i) {
      int64_t p = 0;
      for (int64_t a = 0; a < c; ++a)
        for (int64_t b = a + 1; b < c; ++b, ++p) {
          const double f = c == 2 ? -static_cast<double>(v[i]) : static_cast<double>(v[i * P + p]);
          const double q = std::min(std::max(sigmoid_predict(f, prob_a_[p], prob_b_[p]), lo), 1.0 - lo);
          r[a * c + b] = q;
          r[b * c + a] = 1.0 - q;
        }
      if (c == 2) {
        out[i * 2] = static_cast<float>(r[1]);
        out[i * 2 + 1] = static_cast<float>(r[2]);
      } else {
        std::vector<double> pk = couple(c, r);
        for (int64_t k = 0; k < c; ++k) out[i * c + k] = static_cast<float>(pk[k]);
      }
    }
    return Tensor::from_vector(out, {m, c}, X.device());
  }

  Tensor decision_function(const Tensor& X) const override {
    if (form_ == Form::one_class) return raw_decision(X).reshape({X.dim(0)});
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

  Tensor score_samples(const Tensor& X) const override {
    if (form_ != Form::one_class) return Estimator::score_samples(X);
    Tensor D = raw_decision(X).reshape({X.dim(0)});
    return bl::add(D, Tensor::from_vector(std::vector<float>{offset_}, {1}, X.device()));
  }

  double score(const Tensor& X, const Tensor& y) const override {
    if (form_ == Form::one_class) return Estimator::score(X, y);
    return svc_ ? lin::accuracy_score(y, predict(X)) : lin::r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    if (svc_) {
      state["n_classes"] = static_cast<int64_t>(classes_.size());
      lin::put_labels(state, classes_, label_dtype_);
      if (!prob_a_.empty()) {
        lin::put_f32s(state, {{"prob_a", prob_a_}, {"prob_b", prob_b_}});
      }
    }
    if (form_ == Form::one_class) lin::put_f32(state, "offset", {offset_});
    lin::put_f32(state, "gamma", {gamma_});
    state["n_samples"] = n_fit_;
    state["support"] = support_;
    state["n_support"] = n_support_;
    state["n_iter"] = n_iter_;
    lin::put_f32s(state, {{"support_vectors", sv_}, {"dual_coef", dual_}, {"intercept", intercept_}});
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    int64_t c = 1;
    prob_a_.clear();
    prob_b_.clear();
    if (svc_) {
      c = lin::get_int(state, "n_classes", 2, name_);
      BL_CHECK(c <= 4096, name_, ": model state: n_classes=", c, " is too large");
      classes_ = lin::get_f32(state, "classes", c, name_);
      label_dtype_ = lin::get_label_dtype(state);
      if (state.contains("prob_a")) {
        prob_a_ = lin::get_f32(state, "prob_a", c * (c - 1) / 2, name_);
        prob_b_ = lin::get_f32(state, "prob_b", c * (c - 1) / 2, name_);
      }
    }
    if (form_ == Form::one_class) offset_ = lin::get_f32(state, "offset", 1, name_)[0];
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
    n_fit_ = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(n_fit_ <= kMaxRows, name_, ": model state: n_samples=", n_fit_, " is more than ", kMaxRows);
    support_ = ints("support");
    for (int64_t r : support_)
      BL_CHECK(r < n_fit_, name_, ": model state: support index ", r, " is not a row of the ", n_fit_, " training rows");
    n_support_ = ints("n_support");
    n_iter_ = ints("n_iter");
    // One iteration count per solved problem (a class pair; one otherwise), each at most libsvm's cap.
    const int64_t problems = svc_ ? c * (c - 1) / 2 : 1;
    BL_CHECK(static_cast<int64_t>(n_iter_.size()) == problems, name_, ": model state: n_iter has ",
             n_iter_.size(), " entries, expected ", problems);
    for (int64_t it : n_iter_)
      BL_CHECK(it <= (int64_t{1} << 31), name_, ": model state: n_iter ", it, " is more than any solver runs");
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
  // The rows of positive weight (all rows when w is null), ascending.
  static std::vector<int64_t> kept_rows(int64_t n, const std::vector<float>* w) {
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < n; ++i)
      if (w == nullptr || (*w)[i] > 0.0f) rows.push_back(i);
    return rows;
  }
  // sum of w over rows in order (their count when w is null).
  static double row_mass(const std::vector<int64_t>& rows, const std::vector<float>* w) {
    if (w == nullptr) return static_cast<double>(rows.size());
    double m = 0.0;
    for (int64_t r : rows) m += static_cast<double>((*w)[r]);
    return m;
  }
  // Per-variable bounds C w_row of pr's variables (none when w is null: C for all).
  static void set_bounds(SmoProblem& pr, const std::vector<float>* w) {
    pr.Cv.clear();
    if (w == nullptr) return;
    for (int64_t r : pr.idx) pr.Cv.push_back(pr.C * static_cast<double>((*w)[r]));
  }

  bool has_C() const { return form_ == Form::svc || form_ == Form::svr || form_ == Form::nu_svr; }
  bool has_nu() const { return form_ == Form::nu_svc || form_ == Form::nu_svr || form_ == Form::one_class; }

  // One class pair (pr.idx, pr.y set): coef_t (y_t alpha_t, nu_svc: divided by r) and rho.
  void solve_pair(SmoProblem& pr, double nu, std::vector<double>& coef, double& rho, bool& converged) {
    const size_t l = pr.idx.size();
    if (form_ == Form::nu_svc) {
      pr.nu = true;
      pr.C = 1.0;
      pr.p.assign(l, 0.0);
      pr.a0.assign(l, 0.0);
      double mass = static_cast<double>(l);  // the sum of the bounds (weights)
      if (!pr.Cv.empty()) {
        mass = 0.0;
        for (double b : pr.Cv) mass += b;
      }
      double left_pos = nu * mass / 2.0, left_neg = left_pos;
      for (size_t t = 0; t < l; ++t) {
        double& left = pr.y[t] == 1 ? left_pos : left_neg;
        pr.a0[t] = std::min(pr.Cv.empty() ? 1.0 : pr.Cv[t], left);
        left -= pr.a0[t];
      }
    } else {
      pr.p.assign(l, -1.0);
      pr.a0.clear();
    }
    SmoResult res = solve_smo(pr);
    converged = converged && res.converged;
    n_iter_.push_back(res.iters);
    coef.assign(l, 0.0);
    const double scale = form_ == Form::nu_svc ? res.r : 1.0;
    for (size_t t = 0; t < l; ++t) coef[t] = pr.y[t] * res.alpha[t] / scale;
    rho = res.rho / scale;
  }

  // Platt's (A, B) of one class pair from 5-fold decision values (see the file comment).
  std::pair<double, double> platt(const SmoProblem& full, double nu, uint64_t seed, uint64_t pair, bool& converged) {
    const int64_t l = static_cast<int64_t>(full.idx.size()), n = full.n;
    const std::vector<float>& Km = *full.K;
    std::vector<int64_t> perm(static_cast<size_t>(l));
    for (int64_t i = 0; i < l; ++i) perm[i] = i;
    for (int64_t i = 0; i < l; ++i) {
      const int64_t j = i + philox_index(random_u32_element(seed, 1 + pair, static_cast<uint64_t>(i)), l - i);
      std::swap(perm[i], perm[j]);
    }
    std::vector<double> dec(static_cast<size_t>(l), 0.0);
    const size_t saved_iters = n_iter_.size();
    for (int64_t f = 0; f < 5; ++f) {
      const int64_t begin = f * l / 5, end = (f + 1) * l / 5;
      SmoProblem sub = full;
      sub.idx.clear();
      sub.y.clear();
      sub.Cv.clear();
      for (int sign : {1, -1})
        for (int64_t k = 0; k < l; ++k) {
          if (k >= begin && k < end) continue;
          const int64_t t = perm[k];
          if (full.y[t] != sign) continue;
          sub.idx.push_back(full.idx[t]), sub.y.push_back(sign);
          if (!full.Cv.empty()) sub.Cv.push_back(full.Cv[t]);
        }
      int64_t npos = 0, nneg = 0;
      for (int v : sub.y) (v == 1 ? npos : nneg) += 1;
      if (npos == 0 || nneg == 0) {
        for (int64_t k = begin; k < end; ++k) dec[perm[k]] = npos > 0 ? 1.0 : (nneg > 0 ? -1.0 : 0.0);
        continue;
      }
      std::vector<double> coef;
      double rho = 0.0;
      solve_pair(sub, nu, coef, rho, converged);
      for (int64_t k = begin; k < end; ++k) {
        const int64_t row = full.idx[perm[k]];
        double v = 0.0;
        for (size_t s = 0; s < sub.idx.size(); ++s)
          if (coef[s] != 0.0) v += coef[s] * static_cast<double>(Km[sub.idx[s] * n + row]);
        dec[perm[k]] = v - rho;
      }
    }
    n_iter_.resize(saved_iters);  // n_iter lists the final problems only
    return sigmoid_fit(dec, full.y);
  }

  KernelSpec spec_from(int64_t d, const std::vector<float>* x) const {
    KernelSpec s;
    s.kernel = params_.text("kernel");
    s.coef0 = static_cast<float>(params_.number("coef0"));
    s.degree = params_.integer("degree");
    if (x == nullptr) {
      s.gamma = gamma_;  // predict: the fitted value
    } else if (params_.text("gamma") == "auto") {
      s.gamma = static_cast<float>(1.0 / static_cast<double>(d));
    } else if (params_.text("gamma") == "scale") {
      double mean = 0.0, var = 0.0;
      for (float v : *x) mean += static_cast<double>(v);
      mean /= static_cast<double>(x->size());
      for (float v : *x) var += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
      var /= static_cast<double>(x->size());
      s.gamma = static_cast<float>(var != 0.0 ? 1.0 / (static_cast<double>(d) * var) : 1.0);
    } else {
      s.gamma = static_cast<float>(params_.number("gamma"));
    }
    return s;
  }

  // Decision values [m, P] (P: class pairs, or 1) on X's device.
  Tensor raw_decision(const Tensor& X) const {
    check_predict_input(X, d_);
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
    for_row_blocks(name_ + " decision values", m, rows, [&](int64_t s, int64_t e) {
      parts.push_back(bl::add(bl::matmul(kernel_matrix(X.slice(0, s, e).contiguous(), S, spec), Wt), b));
    });
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

  Form form_;
  bool svc_;
  std::vector<float> classes_, sv_, dual_, intercept_;
  DType label_dtype_ = DType::f32;
  std::vector<int64_t> support_, n_support_, n_iter_;
  std::vector<float> prob_a_, prob_b_;  // Platt's A, B per class pair (probability=true)
  float offset_ = 0.0f;                 // one_class_svm: rho
  float gamma_ = 1.0f;
  int64_t d_ = 0;
  int64_t n_fit_ = 0;  // training rows (support indices are below it)
};

}  // namespace

std::unique_ptr<Estimator> make_svc() { return std::make_unique<Svm>(Form::svc); }
std::unique_ptr<Estimator> make_svr() { return std::make_unique<Svm>(Form::svr); }
std::unique_ptr<Estimator> make_nu_svc() { return std::make_unique<Svm>(Form::nu_svc); }
std::unique_ptr<Estimator> make_nu_svr() { return std::make_unique<Svm>(Form::nu_svr); }
std::unique_ptr<Estimator> make_one_class_svm() { return std::make_unique<Svm>(Form::one_class); }

}  // namespace bl::ml
