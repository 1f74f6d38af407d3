// model_file.h: a model file of `bitlearn fit` as the commands that use one read it (predict,
// evaluate, inspect): the estimator, the columns it was fitted on, and a classifier's classes; and
// the column selection of the commands that fit (fit, cv).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/ml/estimator.h"

namespace bl::cli {

struct ModelFile {
  nlohmann::json json;
  std::unique_ptr<ml::Estimator> estimator;
  std::vector<std::string> features;  // the feature columns at fit time (empty: not recorded)
  std::string target;                 // the target column at fit time (empty: none)
  std::vector<double> classes;        // a classifier's labels, ascending (empty: not a classifier)
  // A classifier fitted on a text target: the label of each class index (classes are 0, 1, ...).
  std::vector<std::string> label_names;

  // The text of class label `value`: its name for a text target, else the number.
  std::string label_text(double value) const;
};

// scikit-learn's rule for what counts as a classifier, by registry name.
bool is_classifier(const std::string& estimator);

// Reads and checks a model file; a safetensors file or text that is not a model file gets a
// bl::Error saying what the file is.
ModelFile read_model_file(const std::string& path);

// X of a table as the model expects it: its recorded feature columns by name, in their order;
// without recorded names every column but the recorded target.
CsvXy model_inputs(const ModelFile& model, const CsvTable& table, const std::string& source);

// The feature columns of a fit: `features` as given (none of them the target); else every column
// of the table but the target and `ignore` (each of which the table must have).
std::vector<std::string> select_features(const CsvTable& table, const std::string& target,
                                         const std::vector<std::string>& features,
                                         const std::vector<std::string>& ignore, const std::string& source);

}  // namespace bl::cli
