// linear_base.cpp: see linear_base.h.
#include "ml/linear/linear_base.h"

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"

namespace bl::ml {

Tensor LinearModelBase::raw_predict(const Tensor& X) const {
  return linear_predict(name_, fitted_, coef_, intercept_, X);
}

void LinearModelBase::save_state(nlohmann::json& state) const {
  state["written_by"] = name_;
  put_linear_state(state, coef_, intercept_, n_iter_);
  save_extra(state);
}

void LinearModelBase::load_state(const nlohmann::json& state) {
  check_written_by(state, name_);
  get_linear_state(state, name_, coef_, intercept_, n_iter_);
  load_extra(state);
  fitted_ = true;
}

LinearView LinearModelBase::view() const {
  BL_CHECK(fitted_, name_, ": not fitted");
  return LinearView{coef_, {intercept_}, 1};
}

void LinearModelBase::set_fit(std::vector<float> coef, float intercept, int64_t n_iter) {
  coef_ = std::move(coef);
  intercept_ = intercept;
  n_iter_ = n_iter;
  fitted_ = true;
}

void put_linear_state(nlohmann::json& state, const std::vector<float>& coef, float intercept, int64_t n_iter) {
  state["n_features"] = static_cast<int64_t>(coef.size());
  state["n_iter"] = n_iter;
  lin::put_f32s(state, {{"coef", coef}, {"intercept", {intercept}}});
}

void get_linear_state(const nlohmann::json& state, const std::string& est, std::vector<float>& coef,
                      float& intercept, int64_t& n_iter) {
  int64_t d = lin::get_int(state, "n_features", 1, est);
  n_iter = lin::get_int(state, "n_iter", 0, est);
  coef = lin::get_f32(state, "coef", d, est);
  intercept = lin::get_f32(state, "intercept", 1, est)[0];
}

void check_written_by(const nlohmann::json& state, const std::string& est) {
  BL_CHECK(state.contains("written_by") && state["written_by"].is_string(), est,
           ": model state has no field 'written_by' (not a model file of ", est, ")");
  const std::string by = state["written_by"].get<std::string>();
  BL_CHECK(by == est, est, ": model state was written by ", by, ", not by ", est);
}

Tensor linear_predict(const std::string& est, bool fitted, const std::vector<float>& coef, float intercept,
                      const Tensor& X) {
  BL_CHECK(fitted, est, ": predict before fit");
  const int64_t d = static_cast<int64_t>(coef.size());
  lin::check_predict_X(est, X, d);
  Tensor z = bl::matmul(X, Tensor::from_vector(coef, {d, 1}, X.device())).reshape({X.dim(0)});
  return bl::add(z, Tensor::scalar(intercept, DType::f32, X.device()));
}

Tensor y_f32_on(const Tensor& y, Device device) {
  Tensor yf = y.dtype() == DType::f32 ? y : bl::cast(y, DType::f32);
  return yf.to(device);
}

void unstandardize(const std::vector<float>& ws, float b_s, const lin::ColumnStats& st,
                   std::vector<float>& coef, float& intercept) {
  coef.resize(ws.size());
  float b = b_s;
  for (size_t j = 0; j < ws.size(); ++j) {
    coef[j] = bl::div(ws[j], st.scale[j]);
    b = bl::fma(bl::neg(st.mean[j]), coef[j], b);
  }
  intercept = b;
}

}  // namespace bl::ml
