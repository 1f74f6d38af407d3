// linear_classifier.cpp: see linear_classifier.h.
#include "ml/linear/linear_classifier.h"

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/linear/common.h"

namespace bl::ml::lin {

Tensor LinearClassifierFit::decision_function(const std::string& est, const Tensor& X) const {
  BL_CHECK(fitted, est, ": predict before fit");
  check_predict_X(est, X, n_features);
  Tensor C = Tensor::from_vector(coef, {outputs, n_features}, X.device());
  Tensor B = Tensor::from_vector(intercept, {outputs}, X.device());
  return bl::add(bl::matmul(X, C, false, true), B);
}

Tensor LinearClassifierFit::predict(const std::string& est, const Tensor& X) const {
  Tensor Z = decision_function(est, X);
  Tensor idx = outputs == 1
                   ? bl::cast(bl::gt(Z.reshape({X.dim(0)}), Tensor::scalar(0.0, DType::f32, X.device())),
                              DType::i64)
                   : bl::argmax(Z, 1);
  return labels_from_index(classes, idx, label_dtype, X.device());
}

void LinearClassifierFit::save(nlohmann::json& state) const {
  state["n_features"] = n_features;
  state["outputs"] = outputs;
  state["n_iter"] = n_iter;
  put_labels(state, classes, label_dtype);
  put_f32(state, "coef", coef);
  put_f32(state, "intercept", intercept);
}

void LinearClassifierFit::load(const nlohmann::json& state, const std::string& est) {
  n_features = get_int(state, "n_features", 1, est);
  outputs = get_int(state, "outputs", 1, est);
  n_iter = get_int(state, "n_iter", 0, est);
  classes = get_f32(state, "classes", -1, est);
  BL_CHECK(classes.size() >= 2 && (outputs == 1 ? classes.size() == 2
                                                : static_cast<int64_t>(classes.size()) == outputs),
           est, ": model state: ", classes.size(), " classes do not match ", outputs, " outputs");
  coef = get_f32(state, "coef", outputs * n_features, est);
  intercept = get_f32(state, "intercept", outputs, est);
  label_dtype = get_label_dtype(state);
  fitted = true;
}

}  // namespace bl::ml::lin
