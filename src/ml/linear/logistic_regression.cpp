// logistic_regression.cpp: binary (one sigmoid output) and multinomial (softmax) logistic
// regression with l2, l1 or no penalty (see bitlearn/ml/linear.h).
//
// Objective in standardized coordinates Xs = (X - mean) / std, with W [d, m] and b [m]:
//   f = mean_i loss_i + penalty (with sample weights: mean_i w_i loss_i, scikit-learn's objective
//   C sum_i w_i loss_i + penalty divided by C n),  loss = softplus(z) - y z (m = 1) or -log_softmax(z)[y] (m = K),
//   penalty = sum (W_jc / std_j)^2 / (2 C n) (l2) or sum |W_jc / std_j| / (C n) (l1); b is free.
// The data-sized parts (Z = Xs W + b, the loss, the gradient Xs^T (P - Y) / n) are Tensor ops, so
// they run on X's device with identical bits; the optimizer state lives on the host in binary32.
//   l2 / none: L-BFGS with 10 pairs; first step 1 / ||g||_2, later 1; Armijo backtracking (c1 = 1e-4,
//              halving, at most 40 times); stops when max |g| <= tol, a line search fails, or max_iter.
//   l1:        FISTA with backtracking on the Lipschitz estimate L (from 1, doubling); stops when
//              max |x_new - x| <= tol * max(1, max |x|) or max_iter.
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/linear/lbfgs.h"
#include "ml/linear/linear_classifier.h"
#include "ml/linear/linear_models.h"
#include "ml/registry.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using Vec = std::vector<float>;

// The smooth part of the objective over the data, as a function of theta = [W (d*m), b (m)].
class LogisticLoss {
 public:
  // weights: one per row, or nullptr (unweighted).
  LogisticLoss(const Tensor& Xs, const std::vector<int64_t>& index, int64_t n_classes,
               const std::vector<float>* weights)
      : Xs_(Xs), n_(Xs.dim(0)), d_(Xs.dim(1)), m_(n_classes == 2 ? 1 : n_classes) {
    Device dev = Xs.device();
    if (weights) weight_ = Tensor::from_vector(*weights, {n_, 1}, dev);
    if (m_ == 1) {
      Vec y(static_cast<size_t>(n_));
      for (int64_t i = 0; i < n_; ++i) y[i] = index[i] == 1 ? 1.0f : 0.0f;
      target_ = Tensor::from_vector(y, {n_, 1}, dev);
    } else {
      Vec oh(static_cast<size_t>(n_ * m_), 0.0f);
      for (int64_t i = 0; i < n_; ++i) oh[i * m_ + index[i]] = 1.0f;
      target_ = Tensor::from_vector(oh, {n_, m_}, dev);
      idx_ = Tensor::from_vector(index, {n_, 1}, dev);
    }
    inv_n_ = Tensor::scalar(static_cast<double>(n_), DType::f32, dev);
  }
  int64_t outputs() const { return m_; }
  int64_t size() const { return (d_ + 1) * m_; }

  // Mean loss; with grad != nullptr also its gradient.
  float eval(const Vec& theta, Vec* grad) const {
    Device dev = Xs_.device();
    Vec w(theta.begin(), theta.begin() + d_ * m_), b(theta.begin() + d_ * m_, theta.end());
    Tensor W = Tensor::from_vector(w, {d_, m_}, dev);
    Tensor B = Tensor::from_vector(b, {m_}, dev);
    Tensor Z = bl::add(bl::matmul(Xs_, W), B);
    Tensor loss, P;
    if (m_ == 1) {
      loss = bl::mean(weighted(bl::sub(bl::softplus(Z), bl::mul(target_, Z))));
      if (grad) P = bl::sigmoid(Z);
    } else {
      Tensor logp = bl::log_softmax(Z, 1);
      loss = bl::neg(bl::mean(weighted(bl::gather(logp, 1, idx_))));
      if (grad) P = bl::softmax(Z, 1);
    }
    if (grad) {
      Tensor R = weighted(bl::sub(P, target_));
      Vec gw = bl::div(bl::matmul(Xs_, R, true, false), inv_n_).to(Device::cpu()).to_vector<float>();
      Vec gb = bl::mean(R, {0}).to(Device::cpu()).to_vector<float>();
      grad->assign(gw.begin(), gw.end());
      grad->insert(grad->end(), gb.begin(), gb.end());
    }
    return static_cast<float>(loss.item());
  }

 private:
  // Rows [n, k] times their weights (unchanged without weights).
  Tensor weighted(const Tensor& rows) const { return weight_.defined() ? bl::mul(rows, weight_) : rows; }
  Tensor Xs_, target_, idx_, inv_n_, weight_;
  int64_t n_, d_, m_;
};

class LogisticRegression final : public WeightedRowsFit<LogisticRegression> {
 public:
  LogisticRegression()
      : params_("logistic_regression", {{"C", K::number, "1", 1e-300},
                                        {"fit_intercept", K::boolean, "true"},
                                        {"max_iter", K::integer, "100", 1},
                                        {"penalty", K::choice, "l2", 0, {"l2", "l1", "none"}},
                                        {"tol", K::number, "0.0001", 0.0}}) {}
  std::string name() const override { return "logistic_regression"; }
  Params get_params() const override { return params_.all(); }
  void set_params(const Params& p) override { params_.set(p); }
  bool fitted() const override { return fit_.fitted; }

  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* weights) {
    check_Xy(name(), X, y);
    lin::EncodedLabels enc = lin::encode_labels(name(), y);
    const int64_t n = X.dim(0), d = X.dim(1);
    lin::ColumnStats st = lin::column_stats(X, params_.boolean("fit_intercept"));
    Tensor Xs = lin::standardize(X, st);
    LogisticLoss loss(Xs, enc.index, static_cast<int64_t>(enc.classes.size()), weights);
    const int64_t m = loss.outputs();
    const std::string penalty = params_.text("penalty");
    const float lam = penalty == "none" ? 0.0f
                                        : static_cast<float>(1.0 / (params_.number("C") * static_cast<double>(n)));
    // Per-coordinate penalty weight: lam / std_j^2 (l2) or lam / std_j (l1); 0 for intercepts.
    Vec weight(static_cast<size_t>(loss.size()), 0.0f);
    for (int64_t j = 0; j < d; ++j)
      for (int64_t c = 0; c < m; ++c)
        weight[j * m + c] = penalty == "l1" ? bl::div(lam, st.scale[j])
                                            : bl::div(lam, bl::mul(st.scale[j], st.scale[j]));
    fixed_intercept_ = !params_.boolean("fit_intercept");
    Vec theta = penalty == "l1" ? fista(loss, weight) : lbfgs(loss, weight);
    // Back to original coordinates: coef [m, d], intercept [m].
    fit_.classes = enc.classes;
    fit_.label_dtype = y.dtype();
    fit_.n_features = d;
    fit_.outputs = m;
    fit_.coef.assign(static_cast<size_t>(m * d), 0.0f);
    fit_.intercept.assign(static_cast<size_t>(m), 0.0f);
    for (int64_t c = 0; c < m; ++c) {
      float b = theta[d * m + c];
      for (int64_t j = 0; j < d; ++j) {
        float w = bl::div(theta[j * m + c], st.scale[j]);
        fit_.coef[c * d + j] = w;
        b = bl::fma(bl::neg(st.mean[j]), w, b);
      }
      fit_.intercept[c] = b;
    }
    fit_.fitted = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override { return fit_.predict(name(), X); }
  Tensor decision_function(const Tensor& X) const override { return fit_.decision_scores(name(), X); }

  Tensor predict_proba(const Tensor& X) const override {
    Tensor Z = fit_.decision_function(name(), X);
    if (fit_.outputs > 1) return bl::softmax(Z, 1);
    Tensor p = bl::sigmoid(Z);
    Tensor q = bl::sigmoid(bl::neg(Z));
    return bl::concat({q, p}, 1);
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override { fit_.save(state); }
  void load_state(const nlohmann::json& state) override {
    lin::LinearClassifierFit loaded;
    loaded.load(state, name());
    fit_ = std::move(loaded);
  }

  LinearView view() const { return LinearView{fit_.coef, fit_.intercept, fit_.outputs}; }

 private:
  // Penalized objective value and gradient (l2 / none).
  float objective(const LogisticLoss& loss, const Vec& w8, const Vec& x, Vec* g) const {
    float f = loss.eval(x, g);
    float pen = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
      pen = bl::fma(bl::mul(w8[i], x[i]), x[i], pen);
      if (g) (*g)[i] = bl::fma(w8[i], x[i], (*g)[i]);
    }
    if (fixed_intercept_ && g)
      for (size_t i = x.size() - loss.outputs(); i < x.size(); ++i) (*g)[i] = 0.0f;
    return bl::fma(0.5f, pen, f);
  }

  Vec lbfgs(const LogisticLoss& loss, const Vec& w8) {
    const int64_t max_iter = params_.integer("max_iter");
    const int hist = 10;
    const float tol = static_cast<float>(params_.number("tol"));
    const size_t p = static_cast<size_t>(loss.size());
    Vec x(p, 0.0f), g;
    float f = objective(loss, w8, x, &g);
    LbfgsHistory pairs;
    fit_.n_iter = 0;
    bool converged = false;  // left by a stopping rule, not by the iteration limit
    for (int64_t it = 0; it < max_iter; ++it) {
      if (lin::max_abs(g) <= tol) {
        converged = true;
        break;
      }
      Vec dir = lbfgs_direction(g, pairs);
      float gd = lin::dot(g, dir);
      if (!(gd < 0.0f)) {  // not a descent direction: restart from steepest descent
        pairs.clear();
        for (size_t i = 0; i < p; ++i) dir[i] = bl::neg(g[i]);
        gd = lin::dot(g, dir);
      }
      float step = pairs.empty() ? bl::div(1.0f, bl::sqrt(lin::dot(g, g))) : 1.0f;
      if (step > 1.0f) step = 1.0f;
      Vec xn(p), gn;
      float fn = 0.0f;
      bool accepted = false;
      for (int ls = 0; ls < 40; ++ls) {
        for (size_t i = 0; i < p; ++i) xn[i] = bl::fma(step, dir[i], x[i]);
        fn = objective(loss, w8, xn, &gn);
        if (fn <= bl::fma(bl::mul(1e-4f, step), gd, f)) {
          accepted = true;
          break;
        }
        step = bl::mul(step, 0.5f);
      }
      fit_.n_iter = it + 1;
      report_progress("logistic_regression L-BFGS", it + 1, max_iter);
      if (!accepted) {  // no decrease at binary32 resolution: converged
        converged = true;
        break;
      }
      lbfgs_push_pair(pairs, x, xn, g, gn, hist);
      x = xn;
      g = gn;
      f = fn;
    }
    report_progress("logistic_regression L-BFGS", max_iter, max_iter);
    if (!converged) warn_not_converged("logistic_regression L-BFGS", max_iter);
    return x;
  }

  Vec fista(const LogisticLoss& loss, const Vec& w8) {
    const int64_t max_iter = params_.integer("max_iter");
    const float tol = static_cast<float>(params_.number("tol"));
    const size_t p = static_cast<size_t>(loss.size());
    const size_t first_b = p - static_cast<size_t>(loss.outputs());
    Vec x(p, 0.0f), yv = x, gy;
    float t = 1.0f, L = 1.0f;
    float fy = loss.eval(yv, &gy);
    fit_.n_iter = 0;
    bool converged = false;
    for (int64_t it = 0; it < max_iter; ++it) {
      Vec xn(p);
      for (int bt = 0; bt < 60; ++bt) {
        float inv_l = bl::div(1.0f, L);
        for (size_t i = 0; i < p; ++i) {
          float v = bl::fma(bl::neg(inv_l), gy[i], yv[i]);
          if (i >= first_b) {
            xn[i] = fixed_intercept_ ? 0.0f : v;
          } else {
            float mag = bl::sub(bl::abs(v), bl::mul(w8[i], inv_l));
            xn[i] = mag > 0.0f ? bl::copysign(mag, v) : 0.0f;
          }
        }
        float fx = loss.eval(xn, nullptr);
        float lin_term = 0.0f, sq = 0.0f;
        for (size_t i = 0; i < p; ++i) {
          float dlt = bl::sub(xn[i], yv[i]);
          lin_term = bl::fma(gy[i], dlt, lin_term);
          sq = bl::fma(dlt, dlt, sq);
        }
        float bound = bl::add(bl::add(fy, lin_term), bl::mul(bl::mul(0.5f, L), sq));
        if (fx <= bound) break;
        L = bl::mul(L, 2.0f);
      }
      float tn = bl::mul(0.5f, bl::add(1.0f, bl::sqrt(bl::fma(bl::mul(4.0f, t), t, 1.0f))));
      float mom = bl::div(bl::sub(t, 1.0f), tn);
      float max_dx = 0.0f;
      for (size_t i = 0; i < p; ++i) {
        float dx = bl::sub(xn[i], x[i]);
        max_dx = bl::max(max_dx, bl::abs(dx));
        yv[i] = bl::fma(mom, dx, xn[i]);
      }
      x = xn;
      t = tn;
      fit_.n_iter = it + 1;
      report_progress("logistic_regression FISTA", it + 1, max_iter);
      if (max_dx <= bl::mul(tol, bl::max(1.0f, lin::max_abs(x)))) {
        converged = true;
        break;
      }
      fy = loss.eval(yv, &gy);
    }
    report_progress("logistic_regression FISTA", max_iter, max_iter);
    if (!converged) warn_not_converged("logistic_regression FISTA", max_iter);
    return x;
  }

  lin::ParamSet params_;
  lin::LinearClassifierFit fit_;
  bool fixed_intercept_ = false;
};

}  // namespace

std::unique_ptr<Estimator> make_logistic_regression() { return std::make_unique<LogisticRegression>(); }

bool logistic_view(const Estimator& est, LinearView& out) {
  return view_if<LogisticRegression>(est, out);
}

}  // namespace bl::ml
