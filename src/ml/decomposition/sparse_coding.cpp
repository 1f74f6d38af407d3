// sparse_coding.cpp: the binary64 host routines of sparse_coding.h (fixed order; rows coded
// independently by the worker pool, each task owning whole rows).
#include "ml/decomposition/sparse_coding.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/linear/common.h"
#include "ml/linear/lars.h"

namespace bl::ml::dec {

namespace {

constexpr int64_t kRowBlock = 32;
constexpr double kUnusedAtom = 1e-6;
constexpr double kOmpTiny = 0x1p-52;
constexpr uint64_t kStreamRow = 1;
constexpr uint64_t kStreamNoise = 2;

double soft(double rho, double alpha, bool positive) {
  if (positive) return std::max(rho - alpha, 0.0);
  const double mag = std::fabs(rho) - alpha;
  return mag > 0.0 ? (rho < 0.0 ? -mag : mag) : 0.0;
}

// Lasso by coordinate descent for one row: g = D D^T [k, k], q = D x [k], xx = ||x||^2; c [k] warm
// start in, solution out. Returns false when max_iter sweeps end it.
bool lasso_row(const std::vector<double>& g, const double* q, double xx, int64_t k, const SparseCodingOptions& o,
               double* c) {
  std::vector<double> h(static_cast<size_t>(k), 0.0);  // h = G c
  for (int64_t s = 0; s < k; ++s)
    if (c[s] != 0.0)
      for (int64_t t = 0; t < k; ++t) h[t] += g[t * k + s] * c[s];
  for (int64_t it = 0; it < o.max_iter; ++it) {
    double max_dc = 0.0, max_c = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const double gjj = g[j * k + j];
      const double old = c[j];
      const double nc = gjj > 0.0 ? soft(q[j] - h[j] + gjj * old, o.alpha, o.positive) / gjj : 0.0;
      const double dc = nc - old;
      if (dc != 0.0) {
        for (int64_t t = 0; t < k; ++t) h[t] += g[t * k + j] * dc;
        c[j] = nc;
      }
      max_dc = std::max(max_dc, std::fabs(dc));
      max_c = std::max(max_c, std::fabs(nc));
    }
    if (max_c == 0.0 || max_dc / max_c < o.tol || it == o.max_iter - 1) {
      // Duality gap with the residual R = x - D^T c scaled into the dual feasible set.
      double cq = 0.0, ch = 0.0, l1 = 0.0, dual = 0.0;
      for (int64_t j = 0; j < k; ++j) {
        cq += c[j] * q[j];
        ch += c[j] * h[j];
        l1 += std::fabs(c[j]);
        const double corr = q[j] - h[j];
        dual = std::max(dual, o.positive ? corr : std::fabs(corr));
      }
      const double r2 = xx - 2.0 * cq + ch;
      const double scale = dual > o.alpha ? o.alpha / dual : 1.0;
      const double gap = 0.5 * r2 * (1.0 + scale * scale) + o.alpha * l1 - scale * (xx - cq);
      if (gap <= o.tol * xx) return true;
    }
  }
  return false;
}

// Orthogonal matching pursuit on the Gram matrix for one row (c [k] zero on entry).
void omp_row(const std::vector<double>& g, const double* q, int64_t k, int64_t n_nonzero, double* c) {
  std::vector<int64_t> chosen;
  std::vector<double> l;  // lower Cholesky factor of G restricted to the chosen atoms, [m, m] with stride kmax
  const int64_t kmax = std::min(n_nonzero, k);
  l.assign(static_cast<size_t>(kmax * kmax), 0.0);
  std::vector<double> corr(q, q + k), gamma;
  for (int64_t step = 0; step < kmax; ++step) {
    int64_t lam = 0;
    for (int64_t j = 1; j < k; ++j)
      if (std::fabs(corr[j]) > std::fabs(corr[lam])) lam = j;
    if (corr[lam] * corr[lam] < kOmpTiny || std::find(chosen.begin(), chosen.end(), lam) != chosen.end()) break;
    const int64_t m = static_cast<int64_t>(chosen.size());
    // New row of the factor: L w = G[chosen, lam], diagonal sqrt(G_lam,lam - w.w).
    double ww = 0.0;
    for (int64_t a = 0; a < m; ++a) {
      double v = g[chosen[a] * k + lam];
      for (int64_t b = 0; b < a; ++b) v -= l[a * kmax + b] * l[m * kmax + b];
      v /= l[a * kmax + a];
      l[m * kmax + a] = v;
      ww += v * v;
    }
    const double piv = g[lam * k + lam] - ww;
    if (!(piv > kOmpTiny)) break;  // linearly dependent on the chosen atoms
    l[m * kmax + m] = std::sqrt(piv);
    chosen.push_back(lam);
    const int64_t mm = m + 1;
    gamma.assign(static_cast<size_t>(mm), 0.0);
    for (int64_t a = 0; a < mm; ++a) {  // forward: L y = q_chosen
      double v = q[chosen[a]];
      for (int64_t b = 0; b < a; ++b) v -= l[a * kmax + b] * gamma[b];
      gamma[a] = v / l[a * kmax + a];
    }
    for (int64_t a = mm - 1; a >= 0; --a) {  // backward: L^T gamma = y
      double v = gamma[a];
      for (int64_t b = a + 1; b < mm; ++b) v -= l[b * kmax + a] * gamma[b];
      gamma[a] = v / l[a * kmax + a];
    }
    for (int64_t j = 0; j < k; ++j) {
      double v = q[j];
      for (int64_t a = 0; a < mm; ++a) v -= g[j * k + chosen[a]] * gamma[a];
      corr[j] = v;
    }
  }
  for (size_t a = 0; a < chosen.size(); ++a) c[chosen[a]] = gamma[a];
}

}  // namespace

int64_t sparse_encode(const std::vector<double>& x, int64_t n, int64_t d, const std::vector<double>& dict, int64_t k,
                      const SparseCodingOptions& o, std::vector<double>& code) {
  const bool lasso = o.algorithm == "lasso_cd";
  if (!lasso || code.size() != static_cast<size_t>(n * k)) code.assign(static_cast<size_t>(n * k), 0.0);
  std::vector<double> g(static_cast<size_t>(k * k));
  for (int64_t a = 0; a < k; ++a)
    for (int64_t b = 0; b < k; ++b) {
      double s = 0.0;
      for (int64_t j = 0; j < d; ++j) s += dict[a * d + j] * dict[b * d + j];
      g[a * k + b] = s;
    }
  // lars and lasso_lars run lars.cpp's binary32 path on the rounded Gram matrix and correlations.
  const bool lars = o.algorithm == "lars" || o.algorithm == "lasso_lars";
  std::vector<float> g32;
  if (lars) g32.assign(g.begin(), g.end());
  const int64_t blocks = (n + kRowBlock - 1) / kRowBlock;
  std::vector<int64_t> unconverged(static_cast<size_t>(blocks), 0);
  default_pool().parallel_for(blocks, [&](int64_t blk) {
    std::vector<double> q(static_cast<size_t>(k));
    for (int64_t i = blk * kRowBlock; i < std::min(n, (blk + 1) * kRowBlock); ++i) {
      const double* xi = &x[i * d];
      double xx = 0.0;
      for (int64_t j = 0; j < d; ++j) xx += xi[j] * xi[j];
      for (int64_t a = 0; a < k; ++a) {
        double s = 0.0;
        for (int64_t j = 0; j < d; ++j) s += dict[a * d + j] * xi[j];
        q[a] = s;
      }
      double* ci = &code[i * k];
      if (lasso) {
        if (!lasso_row(g, q.data(), xx, k, o, ci)) ++unconverged[blk];
      } else if (lars) {
        const bool lasso_path = o.algorithm == "lasso_lars";
        const std::vector<float> w =
            lars_path_gram(g32, std::vector<float>(q.begin(), q.end()), k, 1.0f,
                           lasso_path ? static_cast<float>(o.alpha) : -1.0f, lasso_path ? o.max_iter : o.n_nonzero,
                           lasso_path, std::string(), nullptr);
        for (int64_t a = 0; a < k; ++a) ci[a] = static_cast<double>(w[a]);
      } else if (o.algorithm == "omp") {
        omp_row(g, q.data(), k, o.n_nonzero, ci);
      } else {
        for (int64_t a = 0; a < k; ++a) ci[a] = soft(q[a], o.alpha, o.positive);
      }
    }
  });
  int64_t total = 0;
  for (int64_t u : unconverged) total += u;
  return total;
}

double sparse_coding_cost(const std::vector<double>& x, int64_t n, int64_t d, const std::vector<double>& code,
                          const std::vector<double>& dict, int64_t k, double alpha) {
  double sq = 0.0, l1 = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      double r = x[i * d + j];
      for (int64_t t = 0; t < k; ++t) r -= code[i * k + t] * dict[t * d + j];
      sq += r * r;
    }
    for (int64_t t = 0; t < k; ++t) l1 += std::fabs(code[i * k + t]);
  }
  return 0.5 * sq + alpha * l1;
}

void svd_code_and_dictionary(const std::vector<double>& x, int64_t n, int64_t d, int64_t k, std::vector<double>& code,
                             std::vector<double>& dict, const char* who) {
  const int64_t r = std::min(n, d), m = std::min(k, r);
  code.assign(static_cast<size_t>(n * k), 0.0);
  dict.assign(static_cast<size_t>(k * d), 0.0);
  if (d <= n) {
    // Right singular vectors from X^T X [d, d]; U[:, t] = X v_t / s_t, then the sign rule on U.
    std::vector<double> gram = column_gram_lower(x, n, d);
    SymmetricEigen64 e = symmetric_eigen64(gram, d, m, who);
    for (int64_t t = 0; t < m; ++t) {
      const double s = std::sqrt(std::max(e.values[t], 0.0));
      if (!(s > 0.0)) continue;
      const double* v = &e.vectors[t * d];
      int64_t best = 0;
      for (int64_t i = 0; i < n; ++i) {
        double u = 0.0;
        for (int64_t j = 0; j < d; ++j) u += x[i * d + j] * v[j];
        code[i * k + t] = u / s;
        if (std::fabs(code[i * k + t]) > std::fabs(code[best * k + t])) best = i;
      }
      const double sign = code[best * k + t] < 0.0 ? -1.0 : 1.0;
      for (int64_t i = 0; i < n; ++i) code[i * k + t] *= sign;
      for (int64_t j = 0; j < d; ++j) dict[t * d + j] = sign * s * v[j];
    }
    return;
  }
  // Left singular vectors from X X^T [n, n] (their sign rule is the eigenvectors'); S V^T row t = u_t^T X.
  std::vector<double> gram = row_gram_lower(x, n, d);
  SymmetricEigen64 e = symmetric_eigen64(gram, n, m, who);
  for (int64_t t = 0; t < m; ++t) {
    const double s = std::sqrt(std::max(e.values[t], 0.0));
    if (!(s > 0.0)) continue;
    for (int64_t i = 0; i < n; ++i) code[i * k + t] = e.vectors[t * n + i];
    right_vector_from_left(&e.vectors[t * n], x, n, d, 1.0, &dict[t * d]);
  }
}

void read_dictionary_learning_params(const lin::ParamSet& params, DictionaryLearningSetup& setup) {
  setup.alpha = params.number("alpha");
  setup.max_iter = params.integer("max_iter");
  setup.tol = params.number("tol");
  setup.seed = static_cast<uint64_t>(params.integer("random_state"));
}

DictionaryLearningResult learn_dictionary(const std::vector<double>& x, int64_t n, int64_t d, int64_t k,
                                          const DictionaryLearningSetup& setup, const std::string& who) {
  DictionaryLearningResult res;
  svd_code_and_dictionary(x, n, d, k, res.code, res.dict, who.c_str());
  SparseCodingOptions o;
  o.alpha = setup.alpha;
  o.max_iter = setup.code_max_iter;
  o.positive = setup.positive_code;
  o.algorithm = setup.coding;
  int64_t unconverged = 0;
  uint64_t event = 0;
  std::vector<double>& c = res.code;
  std::vector<double>& dict = res.dict;
  std::vector<double> sum(static_cast<size_t>(d));
  for (int64_t it = 0; it < setup.max_iter; ++it) {
    unconverged += sparse_encode(x, n, d, dict, k, o, c);
    const std::vector<double> a = mul64_tn(c, c, n, k, k), b = mul64_tn(x, c, n, d, k);  // C^T C, X^T C
    for (int64_t t = 0; t < k; ++t) {
      double* atom = &dict[t * d];
      const double att = a[t * k + t];
      if (att > kUnusedAtom) {
        std::fill(sum.begin(), sum.end(), 0.0);
        for (int64_t s = 0; s < k; ++s)
          for (int64_t j = 0; j < d; ++j) sum[j] += a[t * k + s] * dict[s * d + j];
        for (int64_t j = 0; j < d; ++j) atom[j] += (b[j * k + t] - sum[j]) / att;
      } else {
        const double u = static_cast<double>(uniform_element(setup.seed, kStreamRow, event));
        const int64_t row = std::min(static_cast<int64_t>(u * static_cast<double>(n)), n - 1);
        const double* xr = &x[row * d];
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < d; ++j) mean += xr[j];
        mean /= static_cast<double>(d);
        for (int64_t j = 0; j < d; ++j) var += (xr[j] - mean) * (xr[j] - mean);
        const double sd = std::sqrt(var / static_cast<double>(d));
        const double level = 0.01 * (sd > 0.0 ? sd : 1.0);
        for (int64_t j = 0; j < d; ++j)
          atom[j] = xr[j] + level * static_cast<double>(normal_element(setup.seed, kStreamNoise, event * d + j));
        for (int64_t i = 0; i < n; ++i) c[i * k + t] = 0.0;
        ++event;
      }
      if (setup.positive_dict)
        for (int64_t j = 0; j < d; ++j) atom[j] = std::max(atom[j], 0.0);
      double norm2 = 0.0;
      for (int64_t j = 0; j < d; ++j) norm2 += atom[j] * atom[j];
      const double norm = std::sqrt(norm2);
      if (norm > 1.0)
        for (int64_t j = 0; j < d; ++j) atom[j] /= norm;
    }
    res.errors.push_back(sparse_coding_cost(x, n, d, c, dict, k, setup.alpha));
    res.n_iter = it + 1;
    report_progress(who + " dictionary learning", it + 1, setup.max_iter);
    if (it > 0) {
      const double drop = res.errors[it - 1] - res.errors[it];
      if (drop < setup.tol * res.errors[it]) {
        res.converged = true;
        break;
      }
    }
  }
  report_progress(who + " dictionary learning", setup.max_iter, setup.max_iter);
  if (!res.converged) warn_not_converged(who + " dictionary learning", setup.max_iter);
  if (unconverged > 0) warn_not_converged(who + " lasso coordinate descent (sparse coding)", setup.code_max_iter);
  return res;
}

}  // namespace bl::ml::dec
