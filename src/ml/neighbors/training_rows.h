// training_rows.h: the training set that the neighbor estimators keep (kneighbors_*,
// radius_neighbors_*, nearest_neighbors): the rows X [n, d] in binary32 on the host and, for the
// supervised ones, each row's class index (with the sorted classes and the label dtype) or target
// value; the model state fields n_features, n_samples, fit_X, fit_y, classes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml {

struct TrainingRows {
  enum class Target { none, classes, values };
  int64_t n = 0, d = 0;
  std::vector<float> X, target, classes;  // target: class index (classes) or value (values)
  DType label_dtype = DType::f32;

  // Checks X (and y unless Target::none) and copies them to the host.
  void fit(const std::string& est, const Tensor& X_in, const Tensor& y, Target t);
  void save(nlohmann::json& state, Target t) const;
  // Reads and checks the state fields (sizes, class indices in range).
  void load(const nlohmann::json& state, const std::string& est, Target t, int64_t min_samples = 1);
};

}  // namespace bl::ml
