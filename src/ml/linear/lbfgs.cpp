// lbfgs.cpp: see lbfgs.h.
#include "ml/linear/lbfgs.h"

#include <utility>

#include "bitlearn/ml/progress.h"
#include "contract/arith.h"
#include "ml/linear/common.h"

namespace bl::ml {

namespace {

using Vec = std::vector<float>;

// max |g| where a coordinate at its lower bound with g > 0 counts as 0.
float projected_max_abs(const Vec& x, const Vec& g, const LbfgsOptions& opt) {
  float m = 0.0f;
  for (size_t i = 0; i < g.size(); ++i) {
    bool pinned = static_cast<int64_t>(i) == opt.bounded_index && x[i] <= opt.lower_bound && g[i] > 0.0f;
    if (!pinned) m = bl::max(m, bl::abs(g[i]));
  }
  return m;
}

}  // namespace

void LbfgsHistory::clear() {
  s.clear();
  y.clear();
  rho.clear();
}

void lbfgs_push_pair(LbfgsHistory& h, const Vec& x, const Vec& xn, const Vec& g, const Vec& gn, int limit) {
  const size_t p = x.size();
  Vec s(p), yv(p);
  for (size_t i = 0; i < p; ++i) {
    s[i] = bl::sub(xn[i], x[i]);
    yv[i] = bl::sub(gn[i], g[i]);
  }
  float sy = lin::dot(s, yv);
  if (!(sy > 0.0f) || limit <= 0) return;
  if (static_cast<int>(h.s.size()) >= limit) {
    h.s.erase(h.s.begin());
    h.y.erase(h.y.begin());
    h.rho.erase(h.rho.begin());
  }
  h.s.push_back(std::move(s));
  h.y.push_back(std::move(yv));
  h.rho.push_back(bl::div(1.0f, sy));
}

Vec lbfgs_direction(const Vec& g, const LbfgsHistory& h) {
  const size_t p = g.size(), pairs = h.s.size();
  Vec q = g;
  Vec alpha(pairs);
  for (size_t k = pairs; k-- > 0;) {
    alpha[k] = bl::mul(h.rho[k], lin::dot(h.s[k], q));
    for (size_t i = 0; i < p; ++i) q[i] = bl::fma(bl::neg(alpha[k]), h.y[k][i], q[i]);
  }
  if (pairs > 0) {
    float gamma = bl::div(lin::dot(h.s.back(), h.y.back()), lin::dot(h.y.back(), h.y.back()));
    for (auto& v : q) v = bl::mul(gamma, v);
  }
  for (size_t k = 0; k < pairs; ++k) {
    float beta = bl::mul(h.rho[k], lin::dot(h.y[k], q));
    for (size_t i = 0; i < p; ++i) q[i] = bl::fma(bl::sub(alpha[k], beta), h.s[k][i], q[i]);
  }
  Vec dir(p);
  for (size_t i = 0; i < p; ++i) dir[i] = bl::neg(q[i]);
  return dir;
}

LbfgsResult lbfgs_minimize(const LbfgsObjective& f, Vec x0, const LbfgsOptions& opt) {
  const size_t p = x0.size();
  Vec x = std::move(x0), g;
  if (opt.bounded_index >= 0) x[opt.bounded_index] = bl::max(x[opt.bounded_index], opt.lower_bound);
  float fx = f(x, g);
  LbfgsHistory hist;
  int64_t iters = 0;
  bool converged = false;  // left by a stopping rule, not by the iteration limit
  for (int64_t it = 0; it < opt.max_iter; ++it) {
    if (projected_max_abs(x, g, opt) <= opt.gtol) {
      converged = true;
      break;
    }
    Vec dir = lbfgs_direction(g, hist);
    auto pin = [&](Vec& dv) {
      if (opt.bounded_index >= 0 && x[opt.bounded_index] <= opt.lower_bound && dv[opt.bounded_index] < 0.0f)
        dv[opt.bounded_index] = 0.0f;
    };
    pin(dir);
    float gd = lin::dot(g, dir);
    if (!(gd < 0.0f)) {  // not a descent direction: restart from steepest descent
      hist.clear();
      for (size_t i = 0; i < p; ++i) dir[i] = bl::neg(g[i]);
      pin(dir);
      gd = lin::dot(g, dir);
      if (!(gd < 0.0f)) {
        converged = true;
        break;
      }
    }
    float step = hist.empty() ? bl::min(1.0f, bl::div(1.0f, bl::sqrt(lin::dot(dir, dir)))) : 1.0f;
    Vec xn(p), gn;
    float fn = 0.0f;
    bool accepted = false;
    auto trial = [&](float st, Vec& xt, Vec& gt) {
      for (size_t i = 0; i < p; ++i) xt[i] = bl::fma(st, dir[i], x[i]);
      if (opt.bounded_index >= 0) xt[opt.bounded_index] = bl::max(xt[opt.bounded_index], opt.lower_bound);
      return f(xt, gt);
    };
    int ls = 0;
    for (; ls < 60; ++ls) {
      fn = trial(step, xn, gn);
      if (fn <= bl::fma(bl::mul(1e-4f, step), gd, fx)) {
        accepted = true;
        break;
      }
      step = bl::mul(step, 0.5f);
    }
    if (accepted && ls == 0) {
      // The first trial was accepted: double the step while the objective keeps falling (reaches
      // the scale of the problem when curvature information is missing, e.g. on linear pieces).
      Vec x2(p), g2;
      for (int ex = 0; ex < 30; ++ex) {
        float step2 = bl::mul(step, 2.0f);
        float f2 = trial(step2, x2, g2);
        if (!(f2 < fn) || !(f2 <= bl::fma(bl::mul(1e-4f, step2), gd, fx))) break;
        step = step2;
        fn = f2;
        xn.swap(x2);
        gn.swap(g2);
      }
    }
    iters = it + 1;
    report_progress(opt.stage, it + 1, opt.max_iter);
    if (!accepted) {  // no decrease at binary32 resolution: converged
      converged = true;
      break;
    }
    lbfgs_push_pair(hist, x, xn, g, gn, opt.history);
    x = xn;
    g = gn;
    fx = fn;
  }
  report_progress(opt.stage, opt.max_iter, opt.max_iter);
  if (!converged) warn_not_converged(opt.stage, opt.max_iter);
  return LbfgsResult{x, fx, iters};
}

}  // namespace bl::ml
