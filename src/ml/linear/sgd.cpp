// sgd.cpp: sgd_classifier and sgd_regressor, stochastic gradient descent on a regularized linear
// model as scikit-learn's SGDClassifier / SGDRegressor define it (plain SGD, no averaging).
//
// For each epoch the rows are visited in a permutation drawn by Fisher-Yates from Philox keyed by
// random_state with stream (class << 32) | epoch (shuffle=false: row order). For each row x with
// target y (classifiers: y = +1 for the positive class, -1 otherwise):
//   p = (w . x) * wscale + b        (w . x: multiply then add per feature, index order; then one fma)
//   eta = 1 / (alpha (t0 + t - 1))       learning_rate=optimal, t0 = 1 / (eta_init alpha),
//                                        eta_init = sqrt(1 / sqrt(alpha)) / max(1, dloss(1, -sqrt(1/sqrt(alpha))))
//       = eta0 / t^power_t               invscaling (t^0.5 = sqrt(t), t^0.25 = sqrt(sqrt(t)), else pow)
//       = eta0                           constant
// (t counts the rows seen over all epochs, from 1). Losses are scikit-learn's; log_loss is computed
// exactly as log(1 + e) (+ |z| for z < 0) with e = exp(-|z|), without scikit-learn's +-18 cutoffs.
//   update = -eta * clip(dloss(y, p), +-1e12)
//   l2 / elasticnet: wscale *= max(0, 1 - (1 - l1_ratio) eta alpha)    (w = wscale * v)
//   v += (update / wscale) x (multiply then add);  b += update (fit_intercept)
//   l1 / elasticnet: cumulative truncated-gradient penalty u += l1_ratio eta alpha (Tsuruoka et al.)
// After each epoch the mean of loss + alpha ((1 - l1_ratio) ||w||^2 / 2 + l1_ratio ||w||_1) over the
// epoch's rows (summed in float-float) is compared with the best so far: n_iter_no_change epochs in a
// row without an improvement of tol stop the fit (tol < 0: run max_iter epochs). Several classes
// train one-vs-all, one independent task per class. sample_weight (as scikit-learn): each row's
// update (weights and intercept) is multiplied by its weight, update = w_i (-eta clip(dloss)); the
// decay, the learning-rate schedule and the stopping objective stay per visited row, unweighted, as
// there (a row of weight 0 still counts in t and in the epoch's mean). All arithmetic is binary32 on the host in the
// order above, so the result depends on the data and parameters only (CUDA inputs are copied).
#include <algorithm>
#include <utility>

#include "bitlearn/ml/model_selection.h"
#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math.h"
#include "contract/rng.h"
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
using Vec = std::vector<float>;

enum class Loss { hinge, log_loss, modified_huber, perceptron, squared_error, huber, epsilon_insensitive,
                  squared_epsilon_insensitive };
enum class Schedule { optimal, invscaling, constant };
enum class Penalty { none, l2, l1, elasticnet };

struct SgdConfig {
  Loss loss = Loss::hinge;
  float epsilon = 0.1f;
  Penalty penalty = Penalty::l2;
  float alpha = 1e-4f, l1_ratio = 0.15f;
  bool fit_intercept = true;
  int64_t max_iter = 1000;
  float tol = 1e-3f;
  bool use_tol = true;
  bool shuffle = true;
  uint64_t seed = 0;
  Schedule schedule = Schedule::optimal;
  float eta0 = 0.01f, power_t = 0.5f;
  int64_t n_iter_no_change = 5;
};

struct LossValue {
  float loss, dloss;
};

// Loss and its derivative in p for target y (+-1 for classification losses).
LossValue eval_loss(Loss l, float eps, float y, float p) {
  switch (l) {
    case Loss::hinge:
    case Loss::perceptron: {
      float threshold = l == Loss::hinge ? 1.0f : 0.0f;
      float z = bl::mul(p, y);
      if (z <= threshold) return {bl::sub(threshold, z), bl::neg(y)};
      return {0.0f, 0.0f};
    }
    case Loss::log_loss: {  // log(1 + exp(-z)) and -y / (1 + exp(z)) from one e = exp(-|z|)
      float z = bl::mul(p, y);
      float e = bl::exp(bl::neg(bl::abs(z)));
      float inv = bl::div(1.0f, bl::add(1.0f, e));
      float l = bl::log1p(e);
      if (z >= 0.0f) return {l, bl::neg(bl::mul(y, bl::mul(e, inv)))};
      return {bl::sub(l, z), bl::neg(bl::mul(y, inv))};
    }
    case Loss::modified_huber: {
      float z = bl::mul(p, y);
      if (z >= 1.0f) return {0.0f, 0.0f};
      if (z >= -1.0f) {
        float m = bl::sub(1.0f, z);
        return {bl::mul(m, m), bl::mul(bl::mul(2.0f, m), bl::neg(y))};
      }
      return {bl::mul(-4.0f, z), bl::mul(-4.0f, y)};
    }
    case Loss::squared_error: {
      float r = bl::sub(p, y);
      return {bl::mul(0.5f, bl::mul(r, r)), r};
    }
    case Loss::huber: {
      float r = bl::sub(p, y), a = bl::abs(r);
      if (a <= eps) return {bl::mul(0.5f, bl::mul(r, r)), r};
      return {bl::sub(bl::mul(eps, a), bl::mul(0.5f, bl::mul(eps, eps))), bl::copysign(eps, r)};
    }
    case Loss::epsilon_insensitive: {
      float r = bl::sub(y, p);
      float ex = bl::sub(bl::abs(r), eps);
      float g = r > eps ? -1.0f : bl::neg(r) > eps ? 1.0f : 0.0f;
      return {ex > 0.0f ? ex : 0.0f, g};
    }
    case Loss::squared_epsilon_insensitive: {
      float r = bl::sub(y, p);
      float ex = bl::sub(bl::abs(r), eps);
      float g = r > eps ? bl::mul(-2.0f, bl::sub(r, eps)) : r < bl::neg(eps) ? bl::mul(2.0f, bl::sub(bl::neg(r), eps)) : 0.0f;
      return {ex > 0.0f ? bl::mul(ex, ex) : 0.0f, g};
    }
  }
  return {0.0f, 0.0f};
}

struct SgdResult {
  Vec w;
  float b = 0.0f;
  int64_t epochs = 0;
  bool converged = true;  // false: max_iter epochs ran while the tolerance was still in use
};

// One binary (or regression) problem: X host row-major [n, d], targets y [n].
SgdResult sgd_fit_one(const float* X, int64_t n, int64_t d, const Vec& y, const SgdConfig& c, uint64_t cls,
                      const std::string& est, const Vec* sample_weight) {
  const float alpha = c.alpha;
  const float l1r = c.penalty == Penalty::l2 ? 0.0f : c.penalty == Penalty::l1 ? 1.0f : c.l1_ratio;
  const bool decay = c.penalty == Penalty::l2 || c.penalty == Penalty::elasticnet;
  const bool l1 = c.penalty == Penalty::l1 || c.penalty == Penalty::elasticnet;
  const bool has_penalty = c.penalty != Penalty::none;
  Vec w(static_cast<size_t>(d), 0.0f), q(l1 ? static_cast<size_t>(d) : 0, 0.0f);
  float wscale = 1.0f, b = 0.0f, u = 0.0f;
  float sq = 0.0f, l1n = 0.0f;  // sum v_j^2 and sum |v_j| of the unscaled weights
  float optimal_init = 0.0f;
  if (c.schedule == Schedule::optimal) {
    float typw = bl::sqrt(bl::div(1.0f, bl::sqrt(alpha)));
    float g0 = eval_loss(c.loss, c.epsilon, 1.0f, bl::neg(typw)).dloss;
    float eta_init = bl::div(typw, bl::max(1.0f, g0));
    optimal_init = bl::div(1.0f, bl::mul(eta_init, alpha));
  }
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  const float inv_n = bl::div(1.0f, static_cast<float>(n));
  float best = bl::float_of(0x7F800000u);  // +inf
  int64_t no_improve = 0, t = 1, epochs = 0;
  auto norms = [&]() {
    float s = 0.0f, a = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      s = bl::add(s, bl::mul(w[j], w[j]));
      a = bl::add(a, bl::abs(w[j]));
    }
    sq = s;
    l1n = a;
  };
  for (int64_t epoch = 0; epoch < c.max_iter; ++epoch) {
    if (c.shuffle) seeded_permutation(perm, c.seed, (cls << 32) | static_cast<uint64_t>(epoch));
    ff obj{0.0f, 0.0f};
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = perm[k];
      const float* x = X + i * d;
      if (k + 2 < n) {  // the shuffled rows are far apart: fetch two rows ahead (no effect on results)
        const char* ahead = reinterpret_cast<const char*>(X + perm[k + 2] * d);
        for (int64_t off = 0; off < d * 4; off += 64) __builtin_prefetch(ahead + off);
      }
      float dot = 0.0f;
      for (int64_t j = 0; j < d; ++j) dot = bl::add(dot, bl::mul(w[j], x[j]));
      const float p = bl::fma(dot, wscale, b);
      float eta = c.eta0;
      if (c.schedule == Schedule::optimal) {
        eta = bl::div(1.0f, bl::mul(alpha, bl::add(optimal_init, static_cast<float>(t - 1))));
      } else if (c.schedule == Schedule::invscaling) {
        const float tf = static_cast<float>(t);
        const float tp = c.power_t == 0.5f ? bl::sqrt(tf) : c.power_t == 0.25f ? bl::sqrt(bl::sqrt(tf))
                                                                                 : bl::pow(tf, c.power_t);
        eta = bl::div(c.eta0, tp);
      }
      LossValue lv = eval_loss(c.loss, c.epsilon, y[i], p);
      if (c.use_tol) {
        float o = lv.loss;
        if (has_penalty) {
          float l2part = bl::mul(bl::mul(0.5f, bl::sub(1.0f, l1r)), bl::mul(bl::mul(wscale, wscale), sq));
          float l1part = bl::mul(l1r, bl::mul(bl::abs(wscale), l1n));
          o = bl::fma(alpha, bl::add(l2part, l1part), o);
        }
        obj = ff_add_f(obj, o);
      }
      float dl = bl::min(bl::max(lv.dloss, -1e12f), 1e12f);
      float update = bl::neg(bl::mul(eta, dl));
      if (sample_weight != nullptr) update = bl::mul(update, (*sample_weight)[i]);
      bool changed = false;
      if (decay) {
        wscale = bl::mul(wscale, bl::max(0.0f, bl::sub(1.0f, bl::mul(bl::mul(bl::sub(1.0f, l1r), eta), alpha))));
        if (wscale < 1e-9f) {
          for (int64_t j = 0; j < d; ++j) w[j] = bl::mul(w[j], wscale);
          wscale = 1.0f;
          changed = true;
        }
      }
      if (update != 0.0f) {
        const float cst = bl::div(update, wscale);
        for (int64_t j = 0; j < d; ++j) w[j] = bl::add(w[j], bl::mul(x[j], cst));
        changed = true;
      }
      if (c.fit_intercept) b = bl::add(b, update);
      if (l1) {
        u = bl::fma(bl::mul(l1r, eta), alpha, u);
        for (int64_t j = 0; j < d; ++j) {
          const float z = w[j];
          const float wz = bl::mul(wscale, z);
          if (wz > 0.0f) w[j] = bl::max(0.0f, bl::sub(w[j], bl::div(bl::add(u, q[j]), wscale)));
          else if (wz < 0.0f) w[j] = bl::min(0.0f, bl::add(w[j], bl::div(bl::sub(u, q[j]), wscale)));
          q[j] = bl::fma(wscale, bl::sub(w[j], z), q[j]);
        }
        changed = true;
      }
      if (changed && c.use_tol && has_penalty) norms();
      ++t;
    }
    epochs = epoch + 1;
    bool finite = bl::is_finite(b);
    for (int64_t j = 0; j < d; ++j) finite = finite && bl::is_finite(w[j]);
    BL_CHECK(finite, est, ": floating-point overflow at epoch ", epoch + 1,
             " (the weights became inf or NaN); scale the features (e.g. standardize X) or lower eta0");
    if (c.use_tol) {
      float mean_obj = bl::mul(bl::add(obj.hi, obj.lo), inv_n);
      if (mean_obj > bl::sub(best, c.tol)) ++no_improve;
      else no_improve = 0;
      if (mean_obj < best) best = mean_obj;
      if (no_improve >= c.n_iter_no_change) break;
    }
  }
  for (int64_t j = 0; j < d; ++j) w[j] = bl::mul(w[j], wscale);
  // With tol < 0 every epoch is asked for; otherwise running all of them means the tolerance never stopped the fit.
  const bool converged = !c.use_tol || no_improve >= c.n_iter_no_change;
  return SgdResult{w, b, epochs, converged};
}

std::vector<ParamSpec> sgd_specs(bool classifier) {
  std::vector<ParamSpec> s = {
      {"alpha", K::number, "0.0001", 0.0},
      {"epsilon", K::number, "0.1", 0.0},
      {"eta0", K::number, "0.01", 0.0},
      {"fit_intercept", K::boolean, "true"},
      {"l1_ratio", K::number, "0.15", 0.0},
      {"max_iter", K::integer, "1000", 1},
      {"n_iter_no_change", K::integer, "5", 1},
      {"penalty", K::choice, "l2", 0, {"l2", "l1", "elasticnet", "none"}},
      {"random_state", K::integer, "0", 0},
      {"shuffle", K::boolean, "true"},
      {"tol", K::number, "0.001"},
  };
  if (classifier) {
    s.push_back({"learning_rate", K::choice, "optimal", 0, {"optimal", "invscaling", "constant"}});
    s.push_back({"loss", K::choice, "hinge", 0,
                 {"hinge", "log_loss", "modified_huber", "perceptron", "squared_error", "huber"}});
    s.push_back({"power_t", K::number, "0.5"});
  } else {
    s.push_back({"learning_rate", K::choice, "invscaling", 0, {"optimal", "invscaling", "constant"}});
    s.push_back({"loss", K::choice, "squared_error", 0,
                 {"squared_error", "huber", "epsilon_insensitive", "squared_epsilon_insensitive"}});
    s.push_back({"power_t", K::number, "0.25"});
  }
  return s;
}

SgdConfig sgd_config(const lin::ParamSet& p, const std::string& est) {
  SgdConfig c;
  const std::string& loss = p.text("loss");
  c.loss = loss == "hinge" ? Loss::hinge
           : loss == "log_loss" ? Loss::log_loss
           : loss == "modified_huber" ? Loss::modified_huber
           : loss == "perceptron" ? Loss::perceptron
           : loss == "squared_error" ? Loss::squared_error
           : loss == "huber" ? Loss::huber
           : loss == "epsilon_insensitive" ? Loss::epsilon_insensitive
                                           : Loss::squared_epsilon_insensitive;
  c.epsilon = static_cast<float>(p.number("epsilon"));
  const std::string& pen = p.text("penalty");
  c.penalty = pen == "l2" ? Penalty::l2 : pen == "l1" ? Penalty::l1 : pen == "elasticnet" ? Penalty::elasticnet
                                                                                          : Penalty::none;
  c.alpha = static_cast<float>(p.number("alpha"));
  c.l1_ratio = static_cast<float>(p.number("l1_ratio"));
  BL_CHECK(c.l1_ratio <= 1.0f, est, ": parameter l1_ratio must lie in [0, 1]");
  c.fit_intercept = p.boolean("fit_intercept");
  c.max_iter = p.integer("max_iter");
  double tol = p.number("tol");
  c.use_tol = tol >= 0.0;
  c.tol = static_cast<float>(tol);
  c.shuffle = p.boolean("shuffle");
  c.seed = static_cast<uint64_t>(p.integer("random_state"));
  const std::string& lr = p.text("learning_rate");
  c.schedule = lr == "optimal" ? Schedule::optimal : lr == "invscaling" ? Schedule::invscaling : Schedule::constant;
  c.eta0 = static_cast<float>(p.number("eta0"));
  c.power_t = static_cast<float>(p.number("power_t"));
  c.n_iter_no_change = p.integer("n_iter_no_change");
  BL_CHECK(c.schedule != Schedule::optimal || c.alpha > 0.0f, est,
           ": learning_rate=optimal needs alpha > 0 (got alpha=", p.text("alpha"), ")");
  BL_CHECK(c.schedule == Schedule::optimal || c.eta0 > 0.0f, est, ": learning_rate=", lr,
           " needs eta0 > 0 (got eta0=", p.text("eta0"), ")");
  return c;
}

// X as a contiguous host copy.
Tensor host_X(const Tensor& X) { return X.to(Device::cpu()).contiguous(); }

class SgdRegressor final : public WeightedRowsFit<SgdRegressor, LinearModelBase> {
 public:
  SgdRegressor() : WeightedRowsFit("sgd_regressor", sgd_specs(false)) {}

 private:
  friend WeightedRowsFit;

  Estimator& fit_rows(const Tensor& X, const Tensor& y, const Vec* sample_weight) {
    check_Xy(name_, X, y);
    SgdConfig c = sgd_config(params_, name_);
    Tensor Xh = host_X(X);
    Vec yv = lin::y_to_host(y);
    SgdResult r = sgd_fit_one(Xh.data<float>(), X.dim(0), X.dim(1), yv, c, 0, name_, sample_weight);
    report_progress("sgd_regressor epochs", r.epochs, r.epochs);
    if (!r.converged) warn_not_converged("sgd_regressor", c.max_iter);
    set_fit(r.w, r.b, r.epochs);
    return *this;
  }
};

class SgdClassifier final : public WeightedRowsFit<SgdClassifier, LinearClassifierBase> {
 public:
  SgdClassifier() : WeightedRowsFit("sgd_classifier", sgd_specs(true)) {}

  friend WeightedRowsFit;

  // log_loss only: sigmoid of the decision; several classes normalize the one-vs-all sigmoids.
  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(!fit_.fitted || log_loss_, name(), ": predict_proba needs loss=log_loss (this model was fit with loss=",
             loss_name_or_default(), ")");
    Tensor Z = fit_.decision_function(name(), X);
    Tensor p = bl::sigmoid(Z);
    if (fit_.outputs == 1) return bl::concat({bl::sigmoid(bl::neg(Z)), p}, 1);
    return bl::div(p, bl::sum(p, {1}, true));
  }

  void save_state(nlohmann::json& state) const override {
    state["written_by"] = name();
    state["log_loss"] = log_loss_;
    fit_.save(state);
  }
  void load_state(const nlohmann::json& state) override {
    check_written_by(state, name());
    lin::LinearClassifierFit loaded;
    loaded.load(state, name());
    BL_CHECK(state.contains("log_loss") && state["log_loss"].is_boolean(), name(),
             ": model state has no boolean field 'log_loss'");
    log_loss_ = state["log_loss"].get<bool>();
    fit_ = std::move(loaded);
  }

 private:
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const Vec* sample_weight) {
    check_Xy(name(), X, y);
    SgdConfig c = sgd_config(params_, name());
    lin::EncodedLabels enc = lin::encode_labels(name(), y);
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t n_classes = static_cast<int64_t>(enc.classes.size());
    const int64_t m = n_classes == 2 ? 1 : n_classes;
    Tensor Xh = host_X(X);
    std::vector<SgdResult> res(static_cast<size_t>(m));
    default_pool().parallel_for(m, [&](int64_t k) {
      const int64_t positive = m == 1 ? 1 : k;
      Vec yk(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) yk[i] = enc.index[i] == positive ? 1.0f : -1.0f;
      res[k] = sgd_fit_one(Xh.data<float>(), n, d, yk, c, static_cast<uint64_t>(k), name(), sample_weight);
    });
    fit_.coef.assign(static_cast<size_t>(m * d), 0.0f);
    fit_.intercept.assign(static_cast<size_t>(m), 0.0f);
    fit_.n_iter = 0;
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t j = 0; j < d; ++j) fit_.coef[k * d + j] = res[k].w[j];
      fit_.intercept[k] = res[k].b;
      fit_.n_iter = std::max(fit_.n_iter, res[k].epochs);
    }
    report_progress("sgd_classifier epochs", fit_.n_iter, fit_.n_iter);
    // Warned here, on the calling thread: the classes were fitted on the pool's threads.
    bool converged = true;
    for (const SgdResult& r : res) converged = converged && r.converged;
    if (!converged) warn_not_converged("sgd_classifier", c.max_iter);
    fit_.classes = enc.classes;
    fit_.label_dtype = y.dtype();
    fit_.n_features = d;
    fit_.outputs = m;
    log_loss_ = params_.text("loss") == "log_loss";
    fit_.fitted = true;
    return *this;
  }

  std::string loss_name_or_default() const { return params_.text("loss"); }

  bool log_loss_ = false;
};

}  // namespace

std::unique_ptr<Estimator> make_sgd_classifier() { return std::make_unique<SgdClassifier>(); }
std::unique_ptr<Estimator> make_sgd_regressor() { return std::make_unique<SgdRegressor>(); }

}  // namespace bl::ml
