// arima.cpp: arima (statsmodels' ARIMA) and sarimax (statsmodels' SARIMAX), linear regression on
// the exogenous columns of X (and a trend) with seasonal ARIMA errors, fitted by exact maximum
// likelihood; the mathematics is in arima_model.h.
//
// fit(X, y): y is the series in row order; X [n, k] its exogenous regressors (k = 0: X undefined or
// with no columns). Parameters: the orders p, d, q (sarimax also seasonal_p, seasonal_d, seasonal_q
// and the period s), trend (n, c, t, ct), enforce_stationarity / enforce_invertibility (the Monahan
// / Jones reparameterization; without it an AR part outside the stationary region scores -inf),
// max_iter and tol (the L-BFGS's limit on iterations and on max |gradient| of minus the
// log-likelihood per observation of the scaled problem). An L-BFGS run that stops at max_iter warns
// (ConvergenceWarning). predict(X): the in-sample one-step predictions of the fitted series, with X
// its n rows of regressors (the fitted ones give the fit's predictions); forecast: the steps after
// it with normal prediction intervals (mean +- z_{1 - alpha/2} sqrt(var)).
// State: the fitted series and regressors, the parameters, sigma2, llf, aic, bic (binary64 bits)
// and the L-BFGS iteration count. aic = -2 llf + 2 (k + 1), bic = -2 llf + (k + 1) ln nobs, k the
// parameters besides sigma2, nobs = n - d - seasonal_d s (statsmodels' counts).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"
#include "ml/timeseries/arima_model.h"
#include "ml/timeseries/forecaster.h"
#include "ml/timeseries/ts_numerics.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using PK = ParamSpec::Kind;

std::vector<ParamSpec> arima_specs(bool seasonal) {
  std::vector<ParamSpec> s = {{"p", PK::integer, "1", 0},
                              {"d", PK::integer, "0", 0},
                              {"q", PK::integer, "0", 0},
                              {"trend", PK::choice, "n", 0, {"n", "c", "t", "ct"}},
                              {"enforce_stationarity", PK::boolean, "true"},
                              {"enforce_invertibility", PK::boolean, "true"},
                              {"max_iter", PK::integer, "200", 1},
                              {"tol", PK::number, "1e-08", 0.0, {}, true}};
  if (seasonal) {
    s.push_back({"seasonal_p", PK::integer, "0", 0});
    s.push_back({"seasonal_d", PK::integer, "0", 0});
    s.push_back({"seasonal_q", PK::integer, "0", 0});
    s.push_back({"s", PK::integer, "0", 0});
  }
  return s;
}

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

class ArimaEstimator final : public lin::ParamEstimator, public Forecaster {
 public:
  explicit ArimaEstimator(bool seasonal)
      : lin::ParamEstimator(seasonal ? "sarimax" : "arima", arima_specs(seasonal)), seasonal_(seasonal) {}

  // Also statsmodels' spellings: order=p,d,q and (sarimax) seasonal_order=P,D,Q,s, with or without
  // brackets, set the single orders.
  void set_params(const Params& params) override {
    Params flat;
    for (const auto& kv : params) {
      const bool order = kv.first == "order", seasonal_order = seasonal_ && kv.first == "seasonal_order";
      if (!order && !seasonal_order) {
        flat[kv.first] = kv.second;
        continue;
      }
      const std::vector<const char*> names = order ? std::vector<const char*>{"p", "d", "q"}
                                                   : std::vector<const char*>{"seasonal_p", "seasonal_d", "seasonal_q", "s"};
      std::vector<std::string> items(1);
      for (char ch : kv.second) {
        if (ch == ',') items.emplace_back();
        else if (ch != '(' && ch != ')' && ch != '[' && ch != ']' && ch != ' ') items.back() += ch;
      }
      BL_CHECK(items.size() == names.size(), name_, ": parameter ", kv.first, "=", kv.second, ": expected ",
               names.size(), " comma-separated orders (", order ? "p,d,q" : "P,D,Q,s", ")");
      for (size_t i = 0; i < names.size(); ++i) flat[names[i]] = items[i];
    }
    lin::ParamEstimator::set_params(flat);
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    std::vector<double> yv = ts::series_of(name_, y, 1);
    const int64_t n = static_cast<int64_t>(yv.size());
    std::vector<double> x;
    const int64_t k = exog_width(X, n, "fit");
    if (k > 0) {
      check_X(name_, X);
      x = widen(X.to(Device::cpu()).contiguous().to_vector<float>());
    }
    arima::Spec spec = spec_from_params(k);
    arima::FitResult r = arima::fit(spec, yv, x, params_.integer("max_iter"), params_.number("tol"), name_);
    spec_ = spec;
    y_ = std::move(yv);
    x_ = std::move(x);
    coef_ = r.params;
    sigma2_ = r.sigma2;
    llf_ = r.llf;
    n_iter_ = r.n_iter;
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    BL_CHECK(fitted_, name_, ": predict before fit");
    const int64_t n = static_cast<int64_t>(y_.size());
    const int64_t k = exog_width(X, n, "predict");
    BL_CHECK(k == spec_.k_exog, name_, ": X has ", k, " columns, the model was fitted with ", spec_.k_exog);
    std::vector<double> x;
    if (k > 0) {
      check_X(name_, X);
      x = widen(X.to(Device::cpu()).contiguous().to_vector<float>());
    }
    std::vector<double> p = arima::predict_in_sample(spec_, coef_, y_, x);
    std::vector<float> out(p.begin(), p.end());
    return Tensor::from_vector(out, {n}, X.defined() ? X.device() : Device::cpu());
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  Forecast forecast(int64_t steps, const Tensor& exog, double alpha) const override {
    BL_CHECK(fitted_, name_, ": forecast before fit");
    ts::check_forecast_args(name_, steps, alpha);
    std::vector<double> xf;
    if (spec_.k_exog > 0) {
      BL_CHECK(exog.defined() && exog.ndim() == 2 && exog.dim(0) == steps && exog.dim(1) == spec_.k_exog, name_,
               ": forecast needs the future regressors [", steps, ", ", spec_.k_exog, "], got ",
               exog.defined() ? exog.str() : std::string("none"));
      check_X(name_, exog);
      xf = widen(exog.to(Device::cpu()).contiguous().to_vector<float>());
    } else {
      BL_CHECK(!exog.defined() || exog.numel() == 0, name_, ": the model has no exogenous regressors, got exog ",
               exog.str());
    }
    Forecast f;
    std::vector<double> var;
    arima::forecast(spec_, coef_, sigma2_, y_, x_, xf, steps, f.mean, var);
    const double z = prep::normal_quantile64(1.0 - alpha / 2.0);
    f.lower.resize(f.mean.size());
    f.upper.resize(f.mean.size());
    for (size_t h = 0; h < f.mean.size(); ++h) {
      const double half = z * std::sqrt(var[h]);
      f.lower[h] = f.mean[h] - half;
      f.upper[h] = f.mean[h] + half;
    }
    return f;
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_obs", static_cast<int64_t>(y_.size())}, {"k_exog", spec_.k_exog}, {"n_iter", n_iter_}});
    state["y"] = gp::f64_to_hex(y_);
    state["exog"] = gp::f64_to_hex(x_);
    state["params"] = gp::f64_to_hex(coef_);
    state["sigma2"] = gp::f64_to_hex({sigma2_});
    state["llf"] = gp::f64_to_hex({llf_});
    state["aic"] = gp::f64_to_hex({aic()});
    state["bic"] = gp::f64_to_hex({bic()});
  }

  void load_state(const nlohmann::json& state) override {
    const int64_t n = lin::get_int(state, "n_obs", 1, name_);
    const int64_t k = lin::get_int(state, "k_exog", 0, name_);
    BL_CHECK(k <= (int64_t{1} << 20) && n <= (int64_t{1} << 40) / (k + 1), name_, ": model state: n_obs x k_exog too large");
    arima::Spec spec = spec_from_params(k);
    arima::check_spec(spec, n, name_);
    y_ = prep::get_finite_f64(state, "y", n, name_);
    x_ = prep::get_finite_f64(state, "exog", n * k, name_);
    coef_ = prep::get_finite_f64(state, "params", spec.k_params(), name_);
    sigma2_ = prep::get_finite_f64(state, "sigma2", 1, name_)[0];
    llf_ = prep::get_finite_f64(state, "llf", 1, name_)[0];
    BL_CHECK(sigma2_ > 0.0, name_, ": model state: sigma2 must be > 0");
    std::vector<double> ar, ma, P;
    arima::full_polynomials(spec, coef_, ar, ma);
    BL_CHECK(arima::stationary_covariance(ar, ma, P), name_, ": model state: the AR parameters are not stationary");
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    spec_ = spec;
    fitted_ = true;
  }

  double aic() const { return -2.0 * llf_ + 2.0 * static_cast<double>(spec_.k_params() + 1); }
  double bic() const {
    const double nobs = static_cast<double>(static_cast<int64_t>(y_.size()) - spec_.k_diff());
    return -2.0 * llf_ + static_cast<double>(spec_.k_params() + 1) * log64(nobs);
  }

 private:
  // The exogenous width of X (0 for an undefined X or one without columns); X's rows must be n.
  int64_t exog_width(const Tensor& X, int64_t n, const char* what) const {
    if (!X.defined()) return 0;
    BL_CHECK(X.ndim() == 2, name_, ": X must be 2-d [n_samples, n_exog], got ", X.str());
    BL_CHECK(X.dim(0) == n, name_, ": ", what, ": X has ", X.dim(0), " rows, the series has ", n);
    return X.dim(1);
  }

  arima::Spec spec_from_params(int64_t k_exog) const {
    arima::Spec s;
    s.p = params_.integer("p");
    s.d = params_.integer("d");
    s.q = params_.integer("q");
    if (seasonal_) {
      s.P = params_.integer("seasonal_p");
      s.D = params_.integer("seasonal_d");
      s.Q = params_.integer("seasonal_q");
      s.s = params_.integer("s");
    }
    s.trend = params_.text("trend");
    s.k_exog = k_exog;
    s.enforce_stationarity = params_.boolean("enforce_stationarity");
    s.enforce_invertibility = params_.boolean("enforce_invertibility");
    return s;
  }

  bool seasonal_;
  arima::Spec spec_;
  std::vector<double> y_, x_, coef_;
  double sigma2_ = 0.0, llf_ = 0.0;
  int64_t n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_arima() { return std::make_unique<ArimaEstimator>(false); }
std::unique_ptr<Estimator> make_sarimax() { return std::make_unique<ArimaEstimator>(true); }

}  // namespace bl::ml
