// linear_classifier.h: the fitted state shared by the linear classifiers (logistic_regression,
// sgd_classifier): classes, coef [outputs, n_features] and intercept [outputs], where two classes
// have one decision column (outputs = 1, positive class = classes[1]) and more have one per class.
// Decisions and predictions are Tensor ops on X's device.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml::lin {

struct LinearClassifierFit {
  std::vector<float> classes, coef, intercept;
  DType label_dtype = DType::f32;
  int64_t n_features = 0, outputs = 0, n_iter = 0;
  bool fitted = false;

  // X coef^T + intercept [n, outputs]; throws naming est before fit or for a bad X.
  Tensor decision_function(const std::string& est, const Tensor& X) const;
  // The same as scikit-learn shapes it: [n] when there is one output.
  Tensor decision_scores(const std::string& est, const Tensor& X) const {
    Tensor z = decision_function(est, X);
    return outputs == 1 ? z.reshape({z.dim(0)}) : z;
  }
  // Each row's class: decision > 0 (one output) or the first largest decision, as labels of the
  // training label dtype.
  Tensor predict(const std::string& est, const Tensor& X) const;
  // Writes n_features, outputs, n_iter, label_dtype, classes, coef and intercept into state.
  void save(nlohmann::json& state) const;
  // Reads what save wrote (checking sizes and the class count, naming est) and marks it fitted.
  void load(const nlohmann::json& state, const std::string& est);
};

}  // namespace bl::ml::lin
