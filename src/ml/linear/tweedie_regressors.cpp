// tweedie_regressors.cpp: generalized linear models with a Tweedie distribution, as scikit-learn's
// PoissonRegressor (power 1), GammaRegressor (power 2) and TweedieRegressor (power, link).
//
// Minimizes (1/n) sum_i l(y_i, r_i) + (alpha/2) ||w||^2 over w, b with r = X w + b and the half
// Tweedie loss l of the mean mu = exp(r) (log link; for power p, constants in y dropped):
//   p = 0: exp(2r)/2 - y exp(r)      p = 1: exp(r) - y r      p = 2: r + y exp(-r)
//   else:  exp((2-p) r)/(2-p) - y exp((1-p) r)/(1-p)
// or (r - y)^2 / 2 with the identity link (power 0 only; link=auto picks identity for power 0 and
// log otherwise, as scikit-learn). Standardized coordinates (w_j = ws_j / std_j), loss and gradient
// as Tensor ops on X's device, L-BFGS on the host (lbfgs.h); start w = 0, b = link(mean(y)).
// score is D^2, the fraction of Tweedie deviance explained, as scikit-learn's.

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/math.h"
#include "core/error.h"
#include "ml/linear/lbfgs.h"
#include "ml/linear/linear_base.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
using Vec = std::vector<float>;

// Unit deviance of one observation (binary32 contract math).
float unit_deviance(float y, float mu, float p) {
  if (p == 0.0f) {
    float r = bl::sub(y, mu);
    return bl::mul(r, r);
  }
  if (p == 1.0f) {
    float ylog = y > 0.0f ? bl::mul(y, bl::log(bl::div(y, mu))) : 0.0f;
    return bl::mul(2.0f, bl::add(bl::sub(ylog, y), mu));
  }
  if (p == 2.0f) return bl::mul(2.0f, bl::sub(bl::add(bl::log(bl::div(mu, y)), bl::div(y, mu)), 1.0f));
  float a = bl::sub(1.0f, p), b = bl::sub(2.0f, p);
  float t1 = y > 0.0f ? bl::div(bl::pow(y, b), bl::mul(a, b)) : 0.0f;
  float t2 = bl::div(bl::mul(y, bl::pow(mu, a)), a);
  float t3 = bl::div(bl::pow(mu, b), b);
  return bl::mul(2.0f, bl::add(bl::sub(t1, t2), t3));
}

class TweedieRegressor final : public LinearModelBase {
 public:
  // fixed_power < 0: the power (and link) are hyper-parameters.
  TweedieRegressor(const char* name, float fixed_power)
      : LinearModelBase(name, specs(fixed_power < 0.0f)), fixed_power_(fixed_power) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    resolve_power_and_link();
    const float p = power_;
    const bool fit_b = params_.boolean("fit_intercept");
    Device dev = X.device();
    Vec yh = lin::y_to_host(y);
    double ysum = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (p >= 2.0f) BL_CHECK(yh[i] > 0.0f, name_, ": y must be > 0 for power ", p, " (row ", i, " holds ", yh[i], ")");
      else if (p >= 1.0f) BL_CHECK(yh[i] >= 0.0f, name_, ": y must be >= 0 for power ", p, " (row ", i, " holds ", yh[i], ")");
      ysum += yh[i];
    }
    const float ymean = static_cast<float>(ysum / static_cast<double>(n));
    if (log_link_) BL_CHECK(ymean > 0.0f, name_, ": the mean of y must be > 0 with the log link (got ", ymean, ")");
    lin::ColumnStats st = lin::column_stats(X, fit_b);
    Tensor Xs = lin::standardize(X, st);
    Tensor yt = Tensor::from_vector(yh, {n}, dev);
    const float alpha = static_cast<float>(params_.number("alpha"));
    Vec pen(static_cast<size_t>(d));  // alpha / std_j^2
    for (int64_t j = 0; j < d; ++j) pen[j] = bl::div(alpha, bl::mul(st.scale[j], st.scale[j]));
    Tensor n_t = Tensor::scalar(static_cast<double>(n), DType::f32, dev);
    auto sc = [&](float v) { return Tensor::scalar(v, DType::f32, dev); };
    LbfgsObjective f = [&](const Vec& x, Vec& g) {
      Tensor W = Tensor::from_vector(Vec(x.begin(), x.begin() + d), {d, 1}, dev);
      Tensor r = bl::add(bl::matmul(Xs, W).reshape({n}), sc(x[d]));
      Tensor loss, grad;
      if (!log_link_) {
        Tensor res = bl::sub(r, yt);
        loss = bl::mul(sc(0.5f), bl::square(res));
        grad = res;
      } else if (p == 0.0f) {
        Tensor e1 = bl::exp(r), e2 = bl::exp(bl::mul(sc(2.0f), r));
        loss = bl::sub(bl::mul(sc(0.5f), e2), bl::mul(yt, e1));
        grad = bl::sub(e2, bl::mul(yt, e1));
      } else if (p == 1.0f) {
        Tensor e1 = bl::exp(r);
        loss = bl::sub(e1, bl::mul(yt, r));
        grad = bl::sub(e1, yt);
      } else if (p == 2.0f) {
        Tensor em = bl::exp(bl::neg(r));
        loss = bl::add(r, bl::mul(yt, em));
        grad = bl::sub(sc(1.0f), bl::mul(yt, em));
      } else {
        const float a = bl::sub(1.0f, p), b = bl::sub(2.0f, p);
        Tensor eb = bl::exp(bl::mul(sc(b), r)), ea = bl::exp(bl::mul(sc(a), r));
        loss = bl::sub(bl::div(eb, sc(b)), bl::div(bl::mul(yt, ea), sc(a)));
        grad = bl::sub(eb, bl::mul(yt, ea));
      }
      Vec gw = bl::div(bl::matmul(Xs, grad.reshape({n, 1}), true, false), n_t).to(Device::cpu()).to_vector<float>();
      float fx = static_cast<float>(bl::mean(loss).item());
      float pen_sum = 0.0f;
      g.assign(static_cast<size_t>(d + 1), 0.0f);
      for (int64_t j = 0; j < d; ++j) {
        pen_sum = bl::fma(bl::mul(pen[j], x[j]), x[j], pen_sum);
        g[j] = bl::fma(pen[j], x[j], gw[j]);
      }
      g[d] = fit_b ? static_cast<float>(bl::mean(grad).item()) : 0.0f;
      return bl::fma(0.5f, pen_sum, fx);
    };
    Vec x0(static_cast<size_t>(d + 1), 0.0f);
    if (fit_b) x0[d] = log_link_ ? bl::log(ymean) : ymean;
    LbfgsOptions opt;
    opt.max_iter = params_.integer("max_iter");
    opt.gtol = static_cast<float>(params_.number("tol"));
    opt.stage = name_ + " L-BFGS";
    LbfgsResult res = lbfgs_minimize(f, x0, opt);
    std::vector<float> coef;
    float icpt = 0.0f;
    unstandardize(Vec(res.x.begin(), res.x.begin() + d), res.x[d], st, coef, icpt);
    set_fit(coef, icpt, res.n_iter);
    return *this;
  }

  // D^2 = 1 - deviance(y, predict) / deviance(y, mean(y)), sums in float64.
  double score(const Tensor& X, const Tensor& y) const override {
    Vec mu = predict(X).to(Device::cpu()).to_vector<float>();
    Vec yv = lin::y_to_host(y);
    BL_CHECK(yv.size() == mu.size(), name_, ": score: y has ", yv.size(), " entries, X ", mu.size(), " rows");
    double ysum = 0;
    for (float v : yv) ysum += v;
    const float ymean = static_cast<float>(ysum / static_cast<double>(yv.size()));
    double dev = 0, dev0 = 0;
    for (size_t i = 0; i < yv.size(); ++i) {
      dev += unit_deviance(yv[i], mu[i], power_);
      dev0 += unit_deviance(yv[i], ymean, power_);
    }
    if (dev0 == 0) return dev == 0 ? 1.0 : 0.0;
    return 1.0 - dev / dev0;
  }

 protected:
  Tensor inverse_link(const Tensor& raw) const override { return log_link_ ? bl::exp(raw) : raw; }
  void save_extra(nlohmann::json& state) const override {
    lin::put_f32(state, "power", {power_});
    state["link"] = log_link_ ? "log" : "identity";
  }
  void load_extra(const nlohmann::json& state) override {
    power_ = lin::get_f32(state, "power", 1, name_)[0];
    BL_CHECK(state.contains("link") && state["link"].is_string() &&
                 (state["link"] == "log" || state["link"] == "identity"),
             name_, ": model state field 'link' must be \"log\" or \"identity\"");
    log_link_ = state["link"] == "log";
  }

 private:
  static std::vector<ParamSpec> specs(bool tweedie) {
    std::vector<ParamSpec> s = {{"alpha", K::number, "1", 0.0},
                                {"fit_intercept", K::boolean, "true"},
                                {"max_iter", K::integer, "100", 1},
                                {"tol", K::number, "0.0001", 0.0}};
    if (tweedie) {
      s.push_back({"link", K::choice, "auto", 0, {"auto", "log", "identity"}});
      s.push_back({"power", K::number, "0", 0.0});
    }
    return s;
  }

  void resolve_power_and_link() {
    if (fixed_power_ >= 0.0f) {
      power_ = fixed_power_;
      log_link_ = true;
      return;
    }
    double p = params_.number("power");
    BL_CHECK(p == 0.0 || p >= 1.0, name_, ": parameter power=", params_.text("power"),
             ": expected 0 or a value >= 1 (0 < power < 1 is not a Tweedie distribution)");
    power_ = static_cast<float>(p);
    const std::string& link = params_.text("link");
    log_link_ = link == "log" || (link == "auto" && p != 0.0);
    BL_CHECK(log_link_ || p == 0.0, name_, ": link=identity needs power=0 (got power=", params_.text("power"), ")");
  }

  float fixed_power_;
  float power_ = 0.0f;
  bool log_link_ = true;
};

}  // namespace

std::unique_ptr<Estimator> make_poisson_regressor() {
  return std::make_unique<TweedieRegressor>("poisson_regressor", 1.0f);
}
std::unique_ptr<Estimator> make_gamma_regressor() { return std::make_unique<TweedieRegressor>("gamma_regressor", 2.0f); }
std::unique_ptr<Estimator> make_tweedie_regressor() {
  return std::make_unique<TweedieRegressor>("tweedie_regressor", -1.0f);
}

}  // namespace bl::ml
