// linear_base.h: the shared shape of the single-output linear regressors of the second wave
// (sgd_regressor, huber_regressor, quantile_regressor, the Tweedie family, ard_regression, lars,
// lasso_lars): hyper-parameters, coef [n_features] and intercept, predict = link^-1(X w + b) as
// Tensor ops on X's device, R^2 score, and the model file state (coef, intercept, n_iter).
// Also the shape of the linear classifiers sgd_classifier and linear_svc (LinearClassifierBase).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/linear.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/linear/linear_classifier.h"

namespace bl::ml {

// Estimators whose fitted coefficients linear_view returns.
class HasLinearView {
 public:
  virtual ~HasLinearView() = default;
  virtual LinearView view() const = 0;
};

// The shared shape of the linear classifiers sgd_classifier and linear_svc: hyper-parameters, the
// fitted lin::LinearClassifierFit (predict, decision_function and the accuracy score through it)
// and its coefficients as a LinearView. The subclass fills fit_ and writes its state.
class LinearClassifierBase : public lin::ParamEstimator, public HasLinearView {
 public:
  using lin::ParamEstimator::ParamEstimator;
  bool fitted() const override { return fit_.fitted; }
  Tensor predict(const Tensor& X) const override { return fit_.predict(name_, X); }
  Tensor decision_function(const Tensor& X) const override { return fit_.decision_scores(name_, X); }
  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }
  LinearView view() const override {
    BL_CHECK(fit_.fitted, name_, ": not fitted");
    return LinearView{fit_.coef, fit_.intercept, fit_.outputs};
  }

 protected:
  lin::LinearClassifierFit fit_;
};

class LinearModelBase : public lin::ParamEstimator, public HasLinearView {
 public:
  LinearModelBase(std::string name, std::vector<lin::ParamSpec> specs)
      : lin::ParamEstimator(std::move(name), std::move(specs)) {}

  // X w + b on X's device (checks fitted and the feature count).
  Tensor raw_predict(const Tensor& X) const;
  // inverse_link(X w + b).
  Tensor predict(const Tensor& X) const override { return inverse_link(raw_predict(X)); }
  double score(const Tensor& X, const Tensor& y) const override { return lin::r2_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override;
  void load_state(const nlohmann::json& state) override;
  LinearView view() const override;

 protected:
  // The mean from the linear predictor (identity unless a log link overrides it).
  virtual Tensor inverse_link(const Tensor& raw) const { return raw; }
  // Estimator-specific fitted fields beyond coef / intercept / n_iter.
  virtual void save_extra(nlohmann::json&) const {}
  virtual void load_extra(const nlohmann::json&) {}
  // Stores the fit result and marks the estimator fitted.
  void set_fit(std::vector<float> coef, float intercept, int64_t n_iter);

  std::vector<float> coef_;
  float intercept_ = 0.0f;
  int64_t n_iter_ = 0;
};

// Throws unless state["written_by"] names est (a model file of another estimator).
void check_written_by(const nlohmann::json& state, const std::string& est);

// Writes a single-output linear model's n_features, n_iter, coef and intercept into state.
void put_linear_state(nlohmann::json& state, const std::vector<float>& coef, float intercept, int64_t n_iter);
// Reads n_features, n_iter (>= 0), coef and intercept back from state, in that order, each as it
// is read; errors name est.
void get_linear_state(const nlohmann::json& state, const std::string& est, std::vector<float>& coef,
                      float& intercept, int64_t& n_iter);

// X coef + intercept [n] as Tensor ops on X's device for a single-output linear model; throws
// "<est>: predict before fit" unless fitted, and when X's feature count is not coef's size.
Tensor linear_predict(const std::string& est, bool fitted, const std::vector<float>& coef, float intercept,
                      const Tensor& X);

// y as f32 on X's device (i32 / i64 converted).
Tensor y_f32_on(const Tensor& y, Device device);

// Coefficients in original units from standardized ones: w_j = ws_j / scale_j and
// intercept = b_s - sum_j mean_j w_j (index order).
void unstandardize(const std::vector<float>& ws, float b_s, const lin::ColumnStats& st,
                   std::vector<float>& coef, float& intercept);

}  // namespace bl::ml
