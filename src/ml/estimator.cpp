// estimator.cpp: the shared part of every estimator: model files, registry lookup, parameter
// parsing, input validation (see bitlearn/ml/estimator.h).
#include "bitlearn/ml/estimator.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "core/error.h"
#include "ml/model_json.h"
#include "ml/model_selection/pipeline.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"

namespace bl::ml {

namespace {
constexpr const char* kFormat = "bitlearn.model";
constexpr int kVersion = 1;

template <typename T>
std::string to_hex(const std::vector<T>& v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(v.size() * sizeof(T) * 2);
  for (const T& x : v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));  // little-endian hosts only (checked by the build)
    for (unsigned char c : b) {
      s.push_back(digits[c >> 4]);
      s.push_back(digits[c & 15]);
    }
  }
  return s;
}

// Value of each byte as a lower-case hex digit, -1 for any other byte.
struct HexTable {
  signed char value[256];
  HexTable() {
    for (int c = 0; c < 256; ++c) value[c] = -1;
    for (int c = '0'; c <= '9'; ++c) value[c] = static_cast<signed char>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) value[c] = static_cast<signed char>(c - 'a' + 10);
  }
};

template <typename T>
std::vector<T> from_hex(const std::string& hex, const std::string& field) {
  static const HexTable table;
  BL_CHECK(hex.size() % (2 * sizeof(T)) == 0, "model file: field ", field, ": hex length ",
           hex.size(), " is not a multiple of ", 2 * sizeof(T));
  std::vector<T> v(hex.size() / (2 * sizeof(T)));
  const unsigned char* src = reinterpret_cast<const unsigned char*>(hex.data());
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char b[sizeof(T)];
    int bad = 0;
    for (size_t k = 0; k < sizeof(T); ++k) {
      const int hi = table.value[src[(i * sizeof(T) + k) * 2]];
      const int lo = table.value[src[(i * sizeof(T) + k) * 2 + 1]];
      bad |= hi | lo;  // negative when either is not a hex digit
      b[k] = static_cast<unsigned char>(hi * 16 + lo);
    }
    BL_CHECK(bad >= 0, "model file: field ", field, ": not lower-case hex");
    std::memcpy(&v[i], b, sizeof(T));
  }
  return v;
}
}  // namespace

std::string f32_to_hex(const std::vector<float>& v) { return to_hex(v); }
std::vector<float> f32_from_hex(const std::string& hex, const std::string& field) {
  return from_hex<float>(hex, field);
}
std::string i64_to_hex(const std::vector<int64_t>& v) { return to_hex(v); }
std::vector<int64_t> i64_from_hex(const std::string& hex, const std::string& field) {
  return from_hex<int64_t>(hex, field);
}

namespace {
// sample_weight checked for X (1-d f32, one finite value >= 0 per row, not all zero) and copied to
// the host: the one validation of fit_weighted and score_weighted.
std::vector<float> validated_weights(const std::string& est, const Tensor& X, const Tensor& sample_weight) {
  BL_CHECK(sample_weight.ndim() == 1, est, ": sample_weight must be 1-d, got ", sample_weight.str());
  BL_CHECK(X.ndim() == 2 && sample_weight.dim(0) == X.dim(0), est, ": sample_weight has ", sample_weight.dim(0),
           " entries but X has ", X.ndim() == 2 ? X.dim(0) : int64_t{0}, " rows");
  BL_CHECK(sample_weight.dtype() == DType::f32, est, ": sample_weight must be f32, got ", sample_weight.str());
  std::vector<float> w = sample_weight.to(Device::cpu()).contiguous().to_vector<float>();
  bool any_positive = false;
  for (size_t i = 0; i < w.size(); ++i) {
    BL_CHECK(std::isfinite(w[i]) && w[i] >= 0.0f, est, ": sample_weight holds ", w[i], " at row ", i,
             " (counted from 0); weights must be finite and >= 0");
    any_positive = any_positive || w[i] > 0.0f;
  }
  BL_CHECK(w.empty() || any_positive, est, ": sample_weight is zero for every row");
  return w;
}

// The regressors whose score(X, y) is R^2 of predict(X) (the Poisson / gamma / Tweedie regressors
// score D^2 instead and are not here), for the default weighted score.
bool scores_r2(const std::string& name) {
  static const char* const names[] = {
      "linear_regression", "ridge", "lasso", "elastic_net", "bayesian_ridge", "isotonic_regression",
      "sgd_regressor", "huber_regressor", "quantile_regressor", "ard_regression", "lars", "lasso_lars",
      "kneighbors_regressor", "radius_neighbors_regressor", "decision_tree_regressor", "extra_tree_regressor",
      "random_forest_regressor", "extra_trees_regressor", "bagging_regressor", "voting_regressor",
      "stacking_regressor", "adaboost_regressor", "hist_gradient_boosting_regressor", "kernel_ridge", "svr",
      "nu_svr", "linear_svr", "gaussian_process_regressor", "mlp_regressor", "arima", "sarimax"};
  return std::any_of(std::begin(names), std::end(names), [&name](const char* n) { return name == n; });
}
}  // namespace

Estimator& Estimator::fit_weighted(const Tensor& X, const Tensor& y, const Tensor& sample_weight) {
  if (!sample_weight.defined()) return fit(X, y);
  const std::string est = name();
  const std::string why = supports_sample_weight() ? std::string() : pipeline_weight_refusal(*this);
  BL_CHECK(supports_sample_weight(), est, ": sample_weight is not supported by this estimator",
           why.empty() ? "" : ": " + why, " (docs/ml.md lists the estimators that take weights)");
  std::vector<float> w = validated_weights(est, X, sample_weight);
  if (std::all_of(w.begin(), w.end(), [](float v) { return v == 1.0f; })) return fit(X, y);
  return fit_with_weights(X, y, w);
}

double Estimator::score_weighted(const Tensor& X, const Tensor& y, const Tensor& sample_weight) const {
  if (!sample_weight.defined()) return score(X, y);
  return score_with_weights(X, y, validated_weights(name(), X, sample_weight));
}

double Estimator::score_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) const {
  const std::string est = name();
  if (is_classifier_name(est)) return accuracy_score(y, predict(X), w);
  if (scores_r2(est)) return r2_score(y, predict(X), w);
  throw Error(est + ": score with sample_weight is not supported by this estimator (weighted scores: the "
              "accuracy of classifiers, the R^2 of regressors, the NDCG of hist_gradient_boosting_ranker)");
}

Estimator& Estimator::fit_with_weights(const Tensor&, const Tensor&, const std::vector<float>&) {
  throw Error(name() + ": sample_weight is not supported by this estimator");
}

Tensor Estimator::predict(const Tensor&) const {
  throw Error(name() + ": predict is not supported");
}
Tensor Estimator::predict_proba(const Tensor&) const {
  throw Error(name() + ": predict_proba is not supported");
}

Tensor Estimator::decision_function(const Tensor&) const {
  throw Error(name() + ": decision_function is not supported");
}
Tensor Estimator::transform(const Tensor&) const {
  throw Error(name() + ": transform is not supported");
}
Tensor Estimator::score_samples(const Tensor&) const {
  throw Error(name() + ": score_samples is not supported");
}
double Estimator::score(const Tensor&, const Tensor&) const {
  throw Error(name() + ": score is not supported");
}

std::string Estimator::to_json_text() const {
  BL_CHECK(fitted(), name(), ": save: the estimator is not fitted");
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["estimator"] = name();
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : get_params()) params[k] = v;
  j["params"] = params;
  nlohmann::json state = nlohmann::json::object();
  save_state(state);
  j["state"] = state;
  return j.dump(1) + "\n";  // nlohmann objects are std::map: keys sorted, bytes deterministic
}

void Estimator::save(const std::string& path) const {
  write_file_atomic(path, to_json_text(), "model file");
}


bool is_classifier_name(const std::string& name) {
  auto ends_with = [&name](const std::string& tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return name == "logistic_regression" || name == "nearest_centroid" || name == "svc" || name == "nu_svc" ||
         name == "linear_svc" ||
         ends_with("_classifier") || ends_with("_nb") || ends_with("_discriminant_analysis");
}

std::vector<std::string> estimator_names() {
  std::vector<std::string> names;
  for (const auto& e : estimator_registry()) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::unique_ptr<Estimator> make_estimator(const std::string& name, const Params& params) {
  for (const auto& e : estimator_registry()) {
    if (name == e.name) {
      auto est = e.make();
      est->set_params(params);
      return est;
    }
  }
  std::string known;
  for (const auto& n : estimator_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown estimator '" + name + "' (known: " + known + ")");
}

std::unique_ptr<Estimator> estimator_from_json_text(const std::string& text,
                                                    const std::string& source) {
  nlohmann::json j;
  try {
    j = parse_model_json(text);
  } catch (const std::exception& e) {
    throw Error(source + ": not a valid model file (JSON parse error: " + e.what() + ")");
  }
  return estimator_from_json(j, source);
}

std::unique_ptr<Estimator> estimator_from_json(const nlohmann::json& j, const std::string& source) {
  BL_CHECK(j.is_object() && j.contains("format") && j["format"] == kFormat, source,
           ": not a bitlearn model file (missing \"format\": \"", kFormat, "\")");
  BL_CHECK(j.contains("version") && j["version"].is_number_integer(), source,
           ": model file has no integer \"version\"");
  BL_CHECK(j["version"] == kVersion, source, ": model file version ", j["version"].dump(),
           " is not supported (this build reads version ", kVersion, ")");
  BL_CHECK(j.contains("estimator") && j["estimator"].is_string(), source,
           ": model file has no \"estimator\" name");
  BL_CHECK(j.contains("params") && j["params"].is_object(), source, ": model file has no \"params\"");
  BL_CHECK(j.contains("state") && j["state"].is_object(), source, ": model file has no \"state\"");
  Params params;
  for (auto it = j["params"].begin(); it != j["params"].end(); ++it) {
    BL_CHECK(it.value().is_string(), source, ": parameter ", it.key(), " is not a string");
    params[it.key()] = it.value().get<std::string>();
  }
  auto est = make_estimator(j["estimator"].get<std::string>(), params);
  try {
    est->load_state(j["state"]);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": corrupt state for " + est->name() + ": " + e.what());
  }
  return est;
}

std::unique_ptr<Estimator> load_estimator(const std::string& path) {
  return estimator_from_json_text(read_file_text(path, "model file"), path);
}

double param_double(const std::string& est, const std::string& key, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  BL_CHECK(!text.empty() && end == text.c_str() + text.size(), est, ": parameter ", key, "=", text,
           ": expected a number");
  return v;
}

int64_t param_int(const std::string& est, const std::string& key, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  BL_CHECK(!text.empty() && end == text.c_str() + text.size(), est, ": parameter ", key, "=", text,
           ": expected an integer");
  BL_CHECK(errno != ERANGE, est, ": parameter ", key, "=", text, ": beyond the range of a 64-bit integer");
  return static_cast<int64_t>(v);
}

bool param_bool(const std::string& est, const std::string& key, const std::string& text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw Error(est + ": parameter " + key + "=" + text + ": expected true or false");
}

std::string param_text(double value) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

void check_X(const std::string& est, const Tensor& X, bool allow_nan) {
  BL_CHECK(X.defined(), est, ": X is undefined");
  BL_CHECK(X.dtype() == DType::f32, est, ": X must be f32, got ", X.str());
  BL_CHECK(X.ndim() == 2, est, ": X must be 2-d [n_samples, n_features], got ", X.str());
  BL_CHECK(X.dim(0) >= 1, est, ": X has no rows (empty data)");
  BL_CHECK(X.dim(1) >= 1, est, ": X has no feature columns");
  if (!allow_nan) {
    Tensor h = X.to(Device::cpu()).contiguous();
    const float* p = h.data<float>();
    const int64_t total = h.numel(), cols = h.dim(1);  // hoisted: numel() walks the shape
    for (int64_t i = 0; i < total; ++i) {
      // Indices count from 0, as in NumPy; a CSV file's line is the row + 2 (after its header line).
      BL_CHECK(std::isfinite(p[i]), est, ": X holds a non-finite value at row ", i / cols, ", column ", i % cols,
               " (counted from 0; line ", i / cols + 2, " of a CSV file with a header line)");
    }
  }
}

void check_Xy(const std::string& est, const Tensor& X, const Tensor& y, bool allow_nan_X) {
  check_X(est, X, allow_nan_X);
  BL_CHECK(y.defined(), est, ": y is undefined (this estimator is supervised)");
  BL_CHECK(y.ndim() == 1, est, ": y must be 1-d, got ", y.str());
  BL_CHECK(y.dim(0) == X.dim(0), est, ": y has ", y.dim(0), " entries but X has ", X.dim(0), " rows");
  if (y.dtype() == DType::f32) {
    Tensor h = y.to(Device::cpu()).contiguous();
    const float* p = h.data<float>();
    for (int64_t i = 0; i < h.numel(); ++i) {
      BL_CHECK(std::isfinite(p[i]), est, ": y (labels/targets) holds NaN or inf at row ", i,
               " (counted from 0; line ", i + 2, " of a CSV file with a header line)");
    }
  } else {
    BL_CHECK(y.dtype() == DType::i32 || y.dtype() == DType::i64, est,
             ": y must be f32, i32 or i64, got ", y.str());
  }
}

}  // namespace bl::ml
