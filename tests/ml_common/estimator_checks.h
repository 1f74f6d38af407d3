// estimator_checks.h: what the common estimator checks need to know about each registered name: its
// task (read from the name: classifiers, clusterers and transformers, regressors otherwise), small
// hyper-parameters that keep the checks quick, and the tiny deterministic data sets they fit.
// A name without an entry below is checked with its default hyper-parameters.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/timeseries/forecaster.h"

namespace bl::ml_common {

enum class Task { classification, regression, unsupervised };

struct CheckSpec {
  Task task = Task::regression;
  ml::Params params;       // small settings (few trees, few iterations)
  int64_t n_features = 4;  // columns of the training data
  bool allows_nan = false;  // NaN in X is a valid input (missing values)
  std::string fixed_X;      // a model to import instead of fitting: path of its case file
  bool counts = false;      // X holds small non-negative integers (count and category models)
  bool ranking = false;     // column 0 holds query ids, y integer relevance labels (rankers)
};

inline std::string source_path(const std::string& rel) { return std::string(BITLEARN_SOURCE_DIR) + "/" + rel; }

inline bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

inline Task task_of(const std::string& name) {
  if (ml::is_classifier_name(name)) return Task::classification;
  if (has(name, "kmeans") || name == "pca" || name == "isolation_forest" || name == "dbscan" ||
      name == "agglomerative_clustering" || name == "mean_shift" || name == "optics" || name == "hdbscan" ||
      name == "affinity_propagation" || name == "birch" ||
      name == "local_outlier_factor" || name == "one_class_svm" ||
      has(name, "gaussian_mixture") || name == "nearest_neighbors" || name == "spectral_clustering" || name == "kernel_density" || name == "rbf_sampler" || name == "nystroem")
    return Task::unsupervised;
  return Task::regression;
}

inline CheckSpec check_spec(const std::string& name) {
  CheckSpec s;
  s.task = task_of(name);
  const bool classifier = s.task == Task::classification;
  if (has(name, "forest") || has(name, "extra_trees") || has(name, "bagging") || has(name, "adaboost"))
    s.params = {{"n_estimators", "4"}};
  if (has(name, "random_forest") || has(name, "extra_trees")) s.params["max_depth"] = "4";
  if (has(name, "hist_gradient_boosting")) {
    s.params = {{"max_iter", "4"}};
    s.allows_nan = true;
  }
  if (has(name, "voting") || has(name, "stacking"))
    s.params = {{"estimators", classifier ? "logistic_regression;decision_tree_classifier(max_depth=3)"
                                          : "ridge;decision_tree_regressor(max_depth=3)"}};
  if (name == "hist_gradient_boosting_ranker") {
    s.params["group_column"] = "0";
    s.ranking = true;
  }
  if (name == "pipeline") s.params = {{"steps", "standard_scaler;pca(n_components=3);ridge(alpha=0.5)"}};
  if (name == "kmeans") s.params = {{"n_clusters", "3"}};
  if (has(name, "gaussian_mixture")) s.params = {{"n_components", "2"}};
  if (name == "minibatch_kmeans") s.params = {{"n_clusters", "3"}, {"batch_size", "16"}, {"max_iter", "3"}};
  if (name == "pca") s.params = {{"n_components", "2"}};
  if (name == "bisecting_kmeans") s.params = {{"n_clusters", "3"}};
  if (name == "rbf_sampler" || name == "nystroem") s.params = {{"n_components", "10"}};
  if (has(name, "kneighbors")) s.params = {{"n_neighbors", "3"}};
  // Radius 1.5 in [-1, 1)^4: every row of the check data sets has neighbors; 5 neighbors for LOF.
  if (has(name, "radius_neighbors")) s.params = {{"radius", "1.5"}};
  if (name == "local_outlier_factor") s.params = {{"n_neighbors", "5"}};
  if (name == "isotonic_regression") s.n_features = 1;
  // eps 0.75 on 48 uniform rows in [-1, 1)^4: 4 clusters, 22 core points, border points and noise.
  if (name == "dbscan") s.params = {{"eps", "0.75"}, {"min_samples", "4"}};
  // 3 clusters by ward linkage; mean shift with bandwidth 1 on [-1, 1)^4 finds several centers.
  if (name == "agglomerative_clustering" || name == "spectral_clustering") s.params = {{"n_clusters", "3"}};
  if (name == "mean_shift") s.params = {{"bandwidth", "1"}};
  if (name == "kernel_ridge") s.params = {{"kernel", "rbf"}, {"alpha", "0.1"}};
  if (name == "gaussian_process_regressor") s.params = {{"optimizer", "none"}, {"alpha", "0.01"}};
  if (has(name, "mlp_")) s.params = {{"hidden_layer_sizes", "8"}, {"max_iter", "20"}};
  if (name == "multinomial_nb" || name == "complement_nb" || name == "categorical_nb" || name == "nmf") s.counts = true;
  if (name == "latent_dirichlet_allocation") s.counts = true;
  if (name == "simple_imputer" || name == "knn_imputer") s.allows_nan = true;
  // Encoders: categories 0 to 5 (every one occurs in each 48-row check set, so none is unseen).
  if (name == "ordinal_encoder" || name == "one_hot_encoder") s.counts = true;
  // Forecasters (src/ml/timeseries/forecaster.h) fit y as one series: X [n, 0], no feature columns.
  if (dynamic_cast<const ml::Forecaster*>(ml::make_estimator(name).get()) != nullptr) s.n_features = 0;
  if (name == "xgboost_model") {
    s.task = Task::unsupervised;
    s.params = {{"model_file", source_path("tests/data/ml/xgboost/reg_squarederror.json")}};
    s.fixed_X = source_path("tests/data/ml/xgboost/reg_squarederror.case.json");
    s.allows_nan = true;  // XGBoost models route missing values
  }
  if (name == "lightgbm_model") {
    s.task = Task::unsupervised;
    s.params = {{"model_file", source_path("tests/data/ml/lightgbm/regression.txt")}};
    s.fixed_X = source_path("tests/data/ml/lightgbm/regression.case.json");
    s.allows_nan = true;  // LightGBM models route missing values
  }
  return s;
}

// A small data set: X [n, d] uniform in [-1, 1), regression targets > 0 (valid for the Poisson,
// gamma and Tweedie regressors) and three classes 10, 11, 12 from a linear score. counts: X then
// becomes floor(3 (x + 1)), integers 0 to 5 (the labels still come from the uniform values).
struct Dataset {
  Tensor X, y;
};

inline Dataset make_dataset(Task task, int64_t n, int64_t d, uint64_t seed, bool counts = false) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> x(static_cast<size_t>(n * d)), y(static_cast<size_t>(n));
  for (float& v : x) v = rng.uniform_pm1();
  for (int64_t i = 0; i < n; ++i) {
    const float* r = x.data() + i * d;
    float a = d > 0 ? r[0] : 0.0f, b = d > 1 ? r[1] : 0.0f, c = d > 2 ? r[2] * r[d - 1] : 0.0f;
    if (task == Task::classification) {
      float s0 = a - b, s1 = b + c, s2 = 0.3f - a;
      y[i] = s0 >= s1 && s0 >= s2 ? 10.0f : (s1 >= s2 ? 11.0f : 12.0f);
    } else {
      y[i] = 4.0f + a - 2.0f * b + 0.5f * c + 0.1f * rng.uniform_pm1();
    }
  }
  if (counts)
    for (float& v : x) v = static_cast<float>(static_cast<int>(3.0f * (v + 1.0f)));
  Dataset ds;
  ds.X = Tensor::from_vector(x, {n, d});
  if (task != Task::unsupervised) ds.y = Tensor::from_vector(y, {n});
  return ds;
}

// A ranker's data from a regression set: column 0 the query ids (8 contiguous rows each), y the
// relevance 0..4 from the regression target.
inline Dataset as_ranking(Dataset ds) {
  const int64_t n = ds.X.dim(0), d = ds.X.dim(1);
  std::vector<float> x = ds.X.to_vector<float>(), y = ds.y.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i * d)] = static_cast<float>(i / 8);
    y[static_cast<size_t>(i)] = std::min(4.0f, std::max(0.0f, std::floor(y[static_cast<size_t>(i)]) - 2.0f));
  }
  return {Tensor::from_vector(x, {n, d}), Tensor::from_vector(y, {n})};
}

// The check data of an estimator: n rows of make_dataset for its task (a ranker's: as_ranking).
inline Dataset spec_dataset(const CheckSpec& s, int64_t n, uint64_t seed) {
  Dataset ds = make_dataset(s.task, n, s.n_features, seed, s.counts);
  return s.ranking ? as_ranking(ds) : ds;
}

// The bytes of t (a host copy), for byte-exact comparisons.
inline std::vector<unsigned char> bytes_of(const Tensor& t) {
  Tensor h = t.to(Device::cpu()).contiguous();
  std::vector<unsigned char> out(static_cast<size_t>(h.numel()) * dtype_size(h.dtype()));
  if (!out.empty()) std::memcpy(out.data(), h.raw_data(), out.size());
  return out;
}

// What an estimator computes for X: predict, transform, predict_proba and score_samples where each
// exists (at least one of predict, transform and score_samples: density estimators have only
// score_samples); each output's bytes in turn.
inline std::vector<unsigned char> outputs_of(const ml::Estimator& est, const Tensor& X) {
  std::vector<unsigned char> out;
  auto append = [&out](const Tensor& t) {
    std::vector<unsigned char> b = bytes_of(t);
    out.insert(out.end(), b.begin(), b.end());
  };
  bool any = false;
  for (int which = 0; which < 4; ++which) {
    try {
      append(which == 0   ? est.predict(X)
             : which == 1 ? est.transform(X)
             : which == 2 ? est.predict_proba(X)
                          : est.score_samples(X));
      if (which != 2) any = true;
    } catch (const Error& e) {
      // predict_proba may also be unavailable for a setting (loss=hinge, voting=hard, ...).
      if (!has(e.what(), "not supported") && !(which == 2 && has(e.what(), "needs"))) throw;
    }
  }
  if (!any) throw Error(est.name() + ": none of predict, transform and score_samples is supported");
  return out;
}

// A fitted estimator by name on the data set of its spec (train rows from seed 1).
inline std::unique_ptr<ml::Estimator> fit_by_spec(const std::string& name, const CheckSpec& spec, const Dataset& ds) {
  auto est = ml::make_estimator(name, spec.params);
  if (spec.task == Task::unsupervised) est->fit(ds.X);
  else est->fit(ds.X, ds.y);
  return est;
}

// The message of the bl::Error that f throws; "(no error)" when it returns; "(other exception)"
// when it throws anything else (a check failure of its own).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (...) {
    return "(other exception)";
  }
  return "(no error)";
}

// Sets the thread count back to its value at construction (for tests that call set_num_threads).
class ThreadsRestored {
 public:
  ThreadsRestored() : saved_(num_threads()) {}
  ~ThreadsRestored() { set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace bl::ml_common
