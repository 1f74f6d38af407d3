// common.h: helpers shared by the linear, cluster, neighbors and decomposition estimators:
// hyper-parameter tables, class-label encoding, feature checks, column statistics and small host
// vector arithmetic in the contract's binary32 operations (fixed order, no libm).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"

namespace bl::ml::lin {

// One hyper-parameter: its kind, default (as text), and for numbers a lower bound (inclusive, or
// exclusive with exclusive_min), for choices the allowed words. number_or_word: one of the words
// (gamma=scale, bandwidth=silverman, ...; "None" is read as "none") or a number as for number.
struct ParamSpec {
  enum class Kind { number, integer, boolean, choice, number_or_word };
  std::string name;
  Kind kind;
  std::string default_text;
  double min_value = -1e308;
  std::vector<std::string> choices;
  bool exclusive_min = false;
};

// The hyper-parameters of one estimator: validated on set, every one listed by all().
class ParamSet {
 public:
  ParamSet(std::string estimator, std::vector<ParamSpec> specs);
  // Sets the given values; an unknown name, a value that does not parse or is out of range throws.
  void set(const Params& params);
  Params all() const { return values_; }
  double number(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  bool boolean(const std::string& key) const;
  const std::string& text(const std::string& key) const;

 private:
  const ParamSpec& spec(const std::string& key) const;
  std::string estimator_;
  std::vector<ParamSpec> specs_;
  Params values_;
};

// The shape every ParamSet-configured estimator shares: its name, get_params / set_params through
// the ParamSet (validated there) and a fitted flag that the subclass sets when a fit or a load ends.
class ParamEstimator : public Estimator {
 public:
  ParamEstimator(std::string name, std::vector<ParamSpec> specs)
      : name_(std::move(name)), params_(name_, std::move(specs)) {}
  std::string name() const override { return name_; }
  Params get_params() const override { return params_.all(); }
  void set_params(const Params& p) override { params_.set(p); }
  bool fitted() const override { return fitted_; }

 protected:
  // Checks a transform's X: fitted ("transform before fit"), then check_predict_X.
  void check_transform_X(const Tensor& X, int64_t n_features) const;
  // The same for predict (and the other methods that read new rows): "predict before fit".
  void check_predict_input(const Tensor& X, int64_t n_features) const;
  // set_params of an estimator that keeps one parameter, extra_key (null: none), outside its
  // ParamSet: that text goes through read_extra (which validates it and returns the text to keep),
  // the others through a copy of the ParamSet, which check_next then sees. *extra and the ParamSet
  // change only when every check passes.
  void set_params_with_extra(const Params& params, const char* extra_key, std::string* extra,
                             const std::function<std::string(const std::string&)>& read_extra,
                             const std::function<void(const ParamSet&)>& check_next);

  std::string name_;
  ParamSet params_;
  bool fitted_ = false;
};

// The hyper-parameters of the evidence-maximization fits (bayesian_ridge, ard_regression) in name
// order: alpha_1, alpha_2 (1e-06), fit_intercept (true), lambda_1, lambda_2 (1e-06), max_iter (300),
// then `extra`, then tol (0.001).
std::vector<ParamSpec> evidence_prior_specs(std::vector<ParamSpec> extra);

// Sorted distinct labels of y (f32, i32 or i64, as float) and each row's class index.
struct EncodedLabels {
  std::vector<float> classes;
  std::vector<int64_t> index;
};
// Throws naming the estimator when fewer than min_classes distinct labels occur, or f32 labels
// are not integral when integral is asked for.
EncodedLabels encode_labels(const std::string& est, const Tensor& y, int64_t min_classes = 2);

// Checks X for predict: 2-d f32, finite, n_features columns (error names both counts).
void check_predict_X(const std::string& est, const Tensor& X, int64_t n_features);

// y as a host f32 vector (i32 / i64 converted).
std::vector<float> y_to_host(const Tensor& y);

// Host vectors in binary32, fixed left-to-right order (fma chain from +0).
float dot(const std::vector<float>& a, const std::vector<float>& b);
float max_abs(const std::vector<float>& a);

// Column mean and scale of X (ops, on X's device), returned on the host: scale is the population
// standard deviation, with 1 where it is 0. center=false gives mean 0 (scale still the std).
struct ColumnStats {
  std::vector<float> mean;
  std::vector<float> scale;
};
ColumnStats column_stats(const Tensor& X, bool center);
// (X - mean) / scale on X's device.
Tensor standardize(const Tensor& X, const ColumnStats& stats);

// State helpers: a float array stored as hex, read back with its expected length checked.
void put_f32(nlohmann::json& state, const std::string& key, const std::vector<float>& v);
std::vector<float> get_f32(const nlohmann::json& state, const std::string& key, int64_t expected_size,
                           const std::string& est);
int64_t get_int(const nlohmann::json& state, const std::string& key, int64_t min_value,
                const std::string& est);

// Several fields at once, the way save_state lists them: integers as JSON numbers, float arrays
// (a scalar as {x}) as hex. The keys land sorted in the JSON object, so the listing order is free.
struct IntField {
  const char* key;
  int64_t value;
};
struct F32Field {
  const char* key;
  const std::vector<float>& values;
};
void put_ints(nlohmann::json& state, std::initializer_list<IntField> fields);
void put_f32s(nlohmann::json& state, std::initializer_list<F32Field> fields);

// Accuracy (fraction of equal labels) and R^2 in float64 on the host.
double accuracy_score(const Tensor& y_true, const Tensor& y_pred);
double r2_score(const Tensor& y_true, const Tensor& y_pred);

// A classifier's labels in its state: "classes" (hex f32, ascending) and "label_dtype" (the dtype
// of the y given to fit: f32, i32 or i64; read as f32 when absent).
void put_labels(nlohmann::json& state, const std::vector<float>& classes, DType dtype);
DType get_label_dtype(const nlohmann::json& state);

// labels[i] = classes[index[i]] as a tensor of dtype (f32, i32 or i64) on device.
Tensor labels_from_index(const std::vector<float>& classes, const Tensor& index, DType dtype, Device device);

}  // namespace bl::ml::lin
