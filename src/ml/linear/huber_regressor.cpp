// huber_regressor.cpp: linear regression robust to outliers, as scikit-learn's HuberRegressor.
//
// Minimizes, jointly in w, b and the scale sigma > 0 (the objective divided by n):
//   sigma + (1/n) sum_i [ |r_i| <= eps sigma ? r_i^2 / sigma : 2 eps |r_i| - sigma eps^2 ] + (alpha/n) ||w||^2,
// r = y - X w - b. Works in standardized coordinates (Xs = (X - mean) / std, w_j = ws_j / std_j),
// the data-sized parts as Tensor ops on X's device, the optimizer (lbfgs.h, sigma kept >= 1e-12)
// on the host. Starts from w = 0, b = 0, sigma = 1 as scikit-learn does.
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/linear/lbfgs.h"
#include "ml/linear/linear_base.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
using Vec = std::vector<float>;

class HuberRegressor final : public LinearModelBase {
 public:
  HuberRegressor()
      : LinearModelBase("huber_regressor", {{"alpha", K::number, "0.0001", 0.0},
                                            {"epsilon", K::number, "1.35", 1.0},
                                            {"fit_intercept", K::boolean, "true"},
                                            {"max_iter", K::integer, "100", 1},
                                            {"tol", K::number, "1e-05", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    const bool fit_b = params_.boolean("fit_intercept");
    Device dev = X.device();
    lin::ColumnStats st = lin::column_stats(X, fit_b);
    Tensor Xs = lin::standardize(X, st);
    Tensor yt = y_f32_on(y, dev);
    const float eps = static_cast<float>(params_.number("epsilon"));
    const float a_n = static_cast<float>(params_.number("alpha") / static_cast<double>(n));
    Vec pen(static_cast<size_t>(d));  // (alpha / n) / std_j^2
    for (int64_t j = 0; j < d; ++j) pen[j] = bl::div(a_n, bl::mul(st.scale[j], st.scale[j]));
    Tensor n_t = Tensor::scalar(static_cast<double>(n), DType::f32, dev);
    Tensor eps_t = Tensor::scalar(eps, DType::f32, dev);
    Tensor two_eps = Tensor::scalar(bl::mul(2.0f, eps), DType::f32, dev);
    Tensor eps2 = Tensor::scalar(bl::mul(eps, eps), DType::f32, dev);
    Tensor minus2 = Tensor::scalar(-2.0, DType::f32, dev);
    LbfgsObjective f = [&](const Vec& x, Vec& g) {
      const float sigma = x[d + 1];
      Tensor sig = Tensor::scalar(sigma, DType::f32, dev);
      Tensor W = Tensor::from_vector(Vec(x.begin(), x.begin() + d), {d, 1}, dev);
      Tensor raw = bl::add(bl::matmul(Xs, W).reshape({n}), Tensor::scalar(x[d], DType::f32, dev));
      Tensor r = bl::sub(yt, raw);
      Tensor a = bl::abs(r);
      Tensor out = bl::gt(a, bl::mul(eps_t, sig));
      Tensor loss_i = bl::where(out, bl::sub(bl::mul(two_eps, a), bl::mul(sig, eps2)), bl::div(bl::square(r), sig));
      Tensor e = bl::where(out, bl::mul(bl::neg(two_eps), bl::sign(r)), bl::div(bl::mul(minus2, r), sig));
      Tensor s2 = bl::where(out, eps2, bl::square(bl::div(r, sig)));
      Vec gw = bl::div(bl::matmul(Xs, e.reshape({n, 1}), true, false), n_t).to(Device::cpu()).to_vector<float>();
      float fx = bl::add(sigma, static_cast<float>(bl::mean(loss_i).item()));
      g.assign(static_cast<size_t>(d + 2), 0.0f);
      for (int64_t j = 0; j < d; ++j) {
        fx = bl::fma(bl::mul(pen[j], x[j]), x[j], fx);
        g[j] = bl::fma(bl::mul(2.0f, pen[j]), x[j], gw[j]);
      }
      g[d] = fit_b ? static_cast<float>(bl::mean(e).item()) : 0.0f;
      g[d + 1] = bl::sub(1.0f, static_cast<float>(bl::mean(s2).item()));
      return fx;
    };
    Vec x0(static_cast<size_t>(d + 2), 0.0f);
    x0[d + 1] = 1.0f;
    LbfgsOptions opt;
    opt.max_iter = params_.integer("max_iter");
    opt.gtol = static_cast<float>(params_.number("tol"));
    opt.stage = "huber_regressor L-BFGS";
    opt.bounded_index = d + 1;
    opt.lower_bound = 1e-12f;
    LbfgsResult res = lbfgs_minimize(f, x0, opt);
    std::vector<float> coef;
    float icpt = 0.0f;
    unstandardize(Vec(res.x.begin(), res.x.begin() + d), res.x[d], st, coef, icpt);
    scale_ = res.x[d + 1];
    set_fit(coef, icpt, res.n_iter);
    return *this;
  }

 protected:
  void save_extra(nlohmann::json& state) const override { lin::put_f32(state, "scale", {scale_}); }
  void load_extra(const nlohmann::json& state) override { scale_ = lin::get_f32(state, "scale", 1, name_)[0]; }

 private:
  float scale_ = 1.0f;
};

}  // namespace

std::unique_ptr<Estimator> make_huber_regressor() { return std::make_unique<HuberRegressor>(); }

}  // namespace bl::ml
