// lars.cpp: least angle regression (lars) and its lasso variant (lasso_lars), as scikit-learn's
// Lars and LassoLars (Efron, Hastie, Johnstone, Tibshirani 2004).
//
// On centered Xc, yc (fit_intercept; no scaling), G = Xc^T Xc and c = Xc^T yc (contract GEMMs),
// host binary32 in a fixed order: each step takes C = max_j |c_j|, adds the inactive feature with
// the largest |c_j| (lowest index on ties) with its sign s, solves (s s^T o G_AA) g = 1 by Cholesky,
// AA = 1 / sqrt(sum g), direction dw_A = AA s o g, a = G[:, A] dw_A, and moves w += gamma dw,
// c -= gamma a with gamma = min(C / AA, positive (C - c_j)/(AA - a_j), (C + c_j)/(AA + a_j) over
// inactive j). lasso_lars also stops a step where an active coefficient crosses zero (that feature
// leaves the active set) and ends at the step where C / n reaches alpha, interpolated; lars ends
// after n_nonzero_coefs steps or when every feature is active (the least-squares fit). The path
// also ends when G_AA is singular (collinear features) or after max_iter steps (lasso_lars).

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/centered_problem.h"
#include "ml/linear/cholesky.h"
#include "ml/linear/lars.h"
#include "ml/linear/linear_base.h"
#include "ml/registry.h"

namespace bl::ml {

std::vector<float> lars_path_gram(const std::vector<float>& G, std::vector<float> c, int64_t d, float nf,
                                  float alpha_target, int64_t max_steps, bool lasso, const std::string& who,
                                  int64_t* n_steps) {
  using Vec = std::vector<float>;
  Vec w(static_cast<size_t>(d), 0.0f);
  std::vector<int64_t> active;
  Vec sgn;
  std::vector<bool> is_active(static_cast<size_t>(d), false);
  bool dropped_last = false;
  int64_t steps = 0;
  while (steps < max_steps) {
    float C = 0.0f;
    for (int64_t j = 0; j < d; ++j) C = bl::max(C, bl::abs(c[j]));
    if (lasso && bl::div(C, nf) <= alpha_target) break;
    if (!(C > 0.0f)) break;
    if (!dropped_last) {
      int64_t best = -1;
      for (int64_t j = 0; j < d; ++j)
        if (!is_active[j] && (best < 0 || bl::abs(c[j]) > bl::abs(c[best]))) best = j;
      if (best < 0) break;  // every feature active: the previous step reached least squares
      active.push_back(best);
      sgn.push_back(c[best] < 0.0f ? -1.0f : 1.0f);
      is_active[best] = true;
    }
    dropped_last = false;
    const int64_t k = static_cast<int64_t>(active.size());
    Vec GA(static_cast<size_t>(k * k));
    for (int64_t a = 0; a < k; ++a)
      for (int64_t b = 0; b < k; ++b)
        GA[a * k + b] = bl::mul(bl::mul(sgn[a], sgn[b]), G[active[a] * d + active[b]]);
    Vec L;
    if (!cholesky_factor(GA, k, L)) {  // collinear: the last added feature cannot enter
      is_active[active.back()] = false;
      active.pop_back();
      sgn.pop_back();
      break;
    }
    Vec g = cholesky_solve_factored(L, k, Vec(static_cast<size_t>(k), 1.0f));
    float sg = 0.0f;
    for (float v : g) sg = bl::add(sg, v);
    const float AA = bl::div(1.0f, bl::sqrt(sg));
    Vec dw(static_cast<size_t>(k));
    for (int64_t a = 0; a < k; ++a) dw[a] = bl::mul(sgn[a], bl::mul(AA, g[a]));
    Vec corr(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      float s = 0.0f;
      for (int64_t a = 0; a < k; ++a) s = bl::fma(G[j * d + active[a]], dw[a], s);
      corr[j] = s;
    }
    float gamma = bl::div(C, AA);
    for (int64_t j = 0; j < d; ++j) {
      if (is_active[j]) continue;
      float g1 = bl::div(bl::sub(C, c[j]), bl::sub(AA, corr[j]));
      float g2 = bl::div(bl::add(C, c[j]), bl::add(AA, corr[j]));
      if (g1 > 0.0f && g1 < gamma) gamma = g1;
      if (g2 > 0.0f && g2 < gamma) gamma = g2;
    }
    int64_t drop = -1;
    if (lasso) {
      for (int64_t a = 0; a < k; ++a) {
        float z = bl::div(bl::neg(w[active[a]]), dw[a]);
        if (z > 0.0f && z < gamma) {
          gamma = z;
          drop = a;
        }
      }
    }
    bool last = false;
    if (lasso && bl::div(bl::sub(C, bl::mul(gamma, AA)), nf) < alpha_target) {
      gamma = bl::div(bl::sub(C, bl::mul(nf, alpha_target)), AA);
      drop = -1;
      last = true;
    }
    for (int64_t a = 0; a < k; ++a) w[active[a]] = bl::fma(gamma, dw[a], w[active[a]]);
    for (int64_t j = 0; j < d; ++j) c[j] = bl::fma(bl::neg(gamma), corr[j], c[j]);
    ++steps;
    if (!who.empty()) report_progress(who + " path", steps, max_steps);
    if (drop >= 0) {
      w[active[drop]] = 0.0f;
      is_active[active[drop]] = false;
      active.erase(active.begin() + drop);
      sgn.erase(sgn.begin() + drop);
      dropped_last = true;
    }
    if (last) break;
    if (!lasso && k == d) break;  // least squares on every feature
  }
  if (n_steps) *n_steps = steps;
  return w;
}

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
using Vec = std::vector<float>;

class Lars final : public LinearModelBase {
 public:
  explicit Lars(bool lasso)
      : LinearModelBase(lasso ? "lasso_lars" : "lars",
                        lasso ? std::vector<ParamSpec>{{"alpha", K::number, "1", 0.0},
                                                       {"fit_intercept", K::boolean, "true"},
                                                       {"max_iter", K::integer, "500", 1}}
                              : std::vector<ParamSpec>{{"fit_intercept", K::boolean, "true"},
                                                       {"n_nonzero_coefs", K::integer, "500", 1}}),
        lasso_(lasso) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    Tensor yf;
    const lin::CenteredProblem cp = lin::check_and_center(name_, X, y, params_.boolean("fit_intercept"), &yf);
    const int64_t n = X.dim(0), d = X.dim(1);
    const float nf = static_cast<float>(n);
    const float alpha_target = lasso_ ? static_cast<float>(params_.number("alpha")) : -1.0f;
    const int64_t max_steps = lasso_ ? params_.integer("max_iter") : params_.integer("n_nonzero_coefs");
    int64_t steps = 0;
    const Vec w = lars_path_gram(cp.gram, cp.xty, d, nf, alpha_target, max_steps, lasso_, name_, &steps);
    report_progress(name_ + " path", max_steps, max_steps);
    set_fit(w, lin::centered_intercept(cp, w), steps);
    return *this;
  }

 private:
  bool lasso_;
};

}  // namespace

std::unique_ptr<Estimator> make_lars() { return std::make_unique<Lars>(false); }
std::unique_ptr<Estimator> make_lasso_lars() { return std::make_unique<Lars>(true); }

}  // namespace bl::ml
