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

// A categorical feature column and its categories, as scikit-learn's OneHotEncoder keeps them:
// sorted (text in byte order, numbers by value), each becoming an indicator column "column=value".
struct Categorical {
  std::string column;
  std::vector<std::string> values;
};

// The categories of the named columns of a table (each must be one of `features`). A column of
// numbers gives its values in their shortest text; missing cells are no category. More than 1024
// categories in one column is an error (an id column, most likely: one-hot would make a column each).
std::vector<Categorical> find_categories(const CsvTable& table, const std::vector<std::string>& columns,
                                         const std::vector<std::string>& features, const std::string& source);

// The table with each categorical column replaced, in place, by its indicator columns (1 where the
// row holds the category, else 0; NaN in all of them where the cell is missing), and `features`
// with each such column replaced by the indicators' names. A category the table holds that is not in
// the list is an error naming it (OneHotEncoder's handle_unknown="error").
CsvTable one_hot(const CsvTable& table, const std::vector<Categorical>& categories, std::vector<std::string>& features,
                 const std::string& source);

struct ModelFile {
  nlohmann::json json;
  std::unique_ptr<ml::Estimator> estimator;
  std::vector<std::string> features;  // the feature columns at fit time (empty: not recorded)
  std::string target;                 // the target column at fit time (empty: none)
  std::vector<double> classes;        // a classifier's labels, ascending (empty: not a classifier)
  // A classifier fitted on a text target: the label of each class index (classes are 0, 1, ...).
  std::vector<std::string> label_names;
  // Categorical columns one-hot encoded at fit time (features then holds the indicators' names).
  std::vector<Categorical> categories;
  std::vector<std::string> input_columns;  // the table columns the features come from, at fit time

  // The text of class label `value`: its name for a text target, else the number.
  std::string label_text(double value) const;
};

// scikit-learn's rule for what counts as a classifier, by registry name.
bool is_classifier(const std::string& estimator);

// Reads and checks a model file; a safetensors file or text that is not a model file gets a
// bl::Error saying what the file is.
ModelFile read_model_file(const std::string& path);

// X of a table as the model expects it: its recorded feature columns by name, in their order
// (categorical columns one-hot encoded with the model's categories first); without recorded names
// every column but the recorded target.
CsvXy model_inputs(const ModelFile& model, const CsvTable& table, const std::string& source);

// The feature columns of a fit: `features` as given (none of them the target); else every column
// of the table but the target and `ignore` (each of which the table must have).
std::vector<std::string> select_features(const CsvTable& table, const std::string& target,
                                         const std::vector<std::string>& features,
                                         const std::vector<std::string>& ignore, const std::string& source);

// The --weights column of `fit` and `cv` as f32 [rows] (undefined when column is empty); the
// estimator's fit_weighted checks the values.
Tensor weight_column(const CsvTable& table, const std::string& column, const std::string& source);

// Keeps the --weights column out of the features: an error when it is also the target or named in
// --features or --categorical; else it joins `ignore`. Nothing when column is empty.
void set_weight_column_apart(const std::string& column, const std::string& target,
                             const std::vector<std::string>& features, const std::vector<std::string>& categorical,
                             std::vector<std::string>& ignore);

// The --group column of `fit` and `cv`: the index of `column` among the fit's feature_names, for
// the ranker's group_column (it reads the query ids from X). bl::Error when the estimator (`model`)
// has no group_column parameter or the column is not among the inputs of source.
int64_t group_column_index(const ml::Estimator& est, const std::string& model, const std::string& column,
                           const std::vector<std::string>& feature_names, const std::string& source);

}  // namespace bl::cli
