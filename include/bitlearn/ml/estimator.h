// ml/estimator.h: the one shape every classical estimator of bitlearn has (scikit-learn-like).
//
//   auto model = bl::ml::make_estimator("ridge", {{"alpha", "0.5"}});
//   model->fit(X, y);                 // X: f32 [n, d] row-major; y: f32 [n] (or labels, see below)
//   bl::Tensor p = model->predict(X_test);
//   model->save("ridge.json");        // versioned JSON, identical bytes for identical models
//   auto again = bl::ml::load_estimator("ridge.json");
//
// Data: X is a 2-d f32 Tensor [n_samples, n_features]. Regressors take y as 1-d f32. Classifiers
// take y as 1-d f32, i32 or i64 holding class labels (f32 labels must be integral); predict returns
// labels in y's original f32 form, predict_proba an f32 [n, n_classes] in ascending label order.
// Unsupervised estimators take an undefined y (fit(X)). Inputs on a CUDA device run on CUDA where
// the estimator supports it (identical bits), otherwise fit throws a bl::Error naming the estimator.
//
// Model file (docs/ml.md): a JSON object {"format": "bitlearn.model", "version": 1,
// "estimator": NAME, "params": {...}, "state": {...}} dumped with sorted keys; float arrays are
// stored as hex strings of their little-endian binary32 bytes (exact, NaN payloads included).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml {

// Hyper-parameters by name, as text ("0.5", "true", "gini"): sorted, so files are deterministic.
using Params = std::map<std::string, std::string>;

class Estimator {
 public:
  virtual ~Estimator() = default;

  // The registry name ("ridge", "kmeans", "hist_gradient_boosting_classifier", ...).
  virtual std::string name() const = 0;
  // Fits on X [n, d] and y (undefined for unsupervised estimators). Returns *this.
  virtual Estimator& fit(const Tensor& X, const Tensor& y) = 0;
  Estimator& fit(const Tensor& X) { return fit(X, Tensor()); }
  // Fits with a weight per row, as scikit-learn's fit(X, y, sample_weight): row i counts w_i times
  // in the objective. sample_weight: 1-d, one finite value >= 0 per row, not all zero (f32, any
  // device; an undefined tensor means unweighted). All-ones weights give fit(X, y)'s bits. Throws
  // bl::Error("<name>: sample_weight is not supported ...") unless supports_sample_weight().
  Estimator& fit_weighted(const Tensor& X, const Tensor& y, const Tensor& sample_weight);
  virtual bool supports_sample_weight() const { return false; }

  // Each throws bl::Error("<name>: predict is not supported") unless the estimator provides it.
  virtual Tensor predict(const Tensor& X) const;
  virtual Tensor predict_proba(const Tensor& X) const;
  // A linear classifier's scores X coef^T + intercept: [n] for two classes (positive: classes[1]),
  // [n, n_classes] for more, as scikit-learn's decision_function.
  virtual Tensor decision_function(const Tensor& X) const;
  virtual Tensor transform(const Tensor& X) const;
  // The score of each row, f32 [n], as scikit-learn's score_samples: isolation_forest,
  // local_outlier_factor and one_class_svm (lower is more abnormal), gaussian_mixture (the log-likelihood).
  virtual Tensor score_samples(const Tensor& X) const;
  // Accuracy for classifiers, R^2 for regressors (computed in float64 on the host from predict),
  // estimator-specific otherwise (k-means: minus the inertia, as scikit-learn).
  virtual double score(const Tensor& X, const Tensor& y) const;
  // score(X, y) with a weight per row, as scikit-learn's score(X, y, sample_weight): classifiers the
  // weighted accuracy sum_i w_i [y_i == p_i] / sum_i w_i, regressors the weighted R^2 (mean, SS_res
  // and SS_tot weighted), hist_gradient_boosting_ranker the mean NDCG over queries weighted by each
  // query's mean row weight; binary64 in row order. sample_weight is validated as fit_weighted
  // validates it (an undefined tensor means score(X, y)); all-ones weights give score(X, y)'s bits.
  // Estimators whose score is something else (clusterers, densities, transformers, D^2 of the
  // Poisson / gamma / Tweedie regressors, pipelines, imported models) throw bl::Error naming them.
  double score_weighted(const Tensor& X, const Tensor& y, const Tensor& sample_weight) const;

  // Current hyper-parameters, every one of them (defaults included), as text.
  virtual Params get_params() const = 0;
  // Sets hyper-parameters; an unknown name or a value that does not parse throws bl::Error naming it.
  virtual void set_params(const Params& params) = 0;
  // True once fit has succeeded (or state was loaded).
  virtual bool fitted() const = 0;

  // The fitted state as JSON (a model file's "state"), and its inverse. load_state validates what it
  // reads (sizes, ranges) and throws bl::Error naming the field.
  virtual void save_state(nlohmann::json& state) const = 0;
  virtual void load_state(const nlohmann::json& state) = 0;

  // Writes the model file atomically (bitlearn/io.h). Throws if not fitted.
  void save(const std::string& path) const;
  // The model file's text (what save writes).
  std::string to_json_text() const;

 protected:
  // The weighted fit of an estimator that supports_sample_weight(): w holds the validated weights
  // (host, one per row, not all equal to 1).
  virtual Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w);
  // The weighted score: w holds the validated weights (host, one per row). The default gives the
  // weighted accuracy of the classifiers (is_classifier_name) and the weighted R^2 of the
  // regressors whose score is R^2, and throws for the others.
  virtual double score_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) const;
};

// A new unfitted estimator by registry name with the given hyper-parameters; an unknown name throws
// bl::Error listing the known names.
std::unique_ptr<Estimator> make_estimator(const std::string& name, const Params& params = {});
// The registered names, sorted.
std::vector<std::string> estimator_names();
// True for the classifiers among them (fit takes class labels; score is accuracy): the names
// ending in _classifier, _nb or _discriminant_analysis, logistic_regression, nearest_centroid, svc
// and nu_svc.
bool is_classifier_name(const std::string& name);
// Reads a model file written by Estimator::save; wrong format, version or estimator, truncated or
// corrupt text: bl::Error naming the path and the problem.
std::unique_ptr<Estimator> load_estimator(const std::string& path);
std::unique_ptr<Estimator> estimator_from_json_text(const std::string& text,
                                                    const std::string& source = "model");
// The same from a model file's parsed JSON (for callers that also read other fields of it).
std::unique_ptr<Estimator> estimator_from_json(const nlohmann::json& j, const std::string& source = "model");

// ---- helpers for estimator implementations (src/ml/) ----

// Hex of the little-endian bytes of v, and its inverse (throws naming `field` on bad text).
std::string f32_to_hex(const std::vector<float>& v);
std::vector<float> f32_from_hex(const std::string& hex, const std::string& field);
std::string i64_to_hex(const std::vector<int64_t>& v);
std::vector<int64_t> i64_from_hex(const std::string& hex, const std::string& field);

// Parameter parsing: value of params[key] as the type, or throws bl::Error("<est>: parameter
// <key>=<text>: expected ...").
double param_double(const std::string& est, const std::string& key, const std::string& text);
int64_t param_int(const std::string& est, const std::string& key, const std::string& text);
bool param_bool(const std::string& est, const std::string& key, const std::string& text);
// Text form of a double that parses back to the same value (shortest round-trip).
std::string param_text(double value);

// Validates X (2-d f32, n >= 1 rows, finite unless allow_nan) and y (1-d, n entries, finite):
// bl::Error naming the estimator and the problem (wrong rank, empty, NaN in labels, ...).
void check_X(const std::string& est, const Tensor& X, bool allow_nan = false);
void check_Xy(const std::string& est, const Tensor& X, const Tensor& y, bool allow_nan_X = false);

// Factory registration. Every estimator has one line in src/ml/estimator_list.h, from which
// src/ml/registry.cpp builds the table (static registration would be dropped from the static
// library).
using EstimatorFactory = std::unique_ptr<Estimator> (*)();
struct EstimatorEntry {
  const char* name;
  EstimatorFactory make;
};

}  // namespace bl::ml
