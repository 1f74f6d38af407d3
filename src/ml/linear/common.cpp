// common.cpp: see common.h.
#include "ml/linear/common.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"

namespace bl::ml::lin {

ParamSet::ParamSet(std::string estimator, std::vector<ParamSpec> specs)
    : estimator_(std::move(estimator)), specs_(std::move(specs)) {
  for (const auto& s : specs_) values_[s.name] = s.default_text;
}

const ParamSpec& ParamSet::spec(const std::string& key) const {
  for (const auto& s : specs_)
    if (s.name == key) return s;
  std::string known;
  for (const auto& s : specs_) known += (known.empty() ? "" : ", ") + s.name;
  throw Error(estimator_ + ": unknown parameter '" + key + "' (known: " + known + ")");
}

void ParamSet::set(const Params& params) {
  for (const auto& [key, text] : params) {
    const ParamSpec& s = spec(key);
    switch (s.kind) {
      case ParamSpec::Kind::number_or_word: {
        const std::string word = text == "None" ? "none" : text;
        if (std::find(s.choices.begin(), s.choices.end(), word) != s.choices.end()) {
          values_[key] = word;
          break;
        }
        std::string want;
        for (const auto& c : s.choices) want += c + ", ";
        want += "or a finite number";
        if (s.min_value > -1e308) want += (s.exclusive_min ? " > " : " >= ") + param_text(s.min_value);
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        BL_CHECK(!text.empty() && end == text.c_str() + text.size() && std::isfinite(v) &&
                     (s.exclusive_min ? v > s.min_value : v >= s.min_value),
                 estimator_, ": parameter ", key, "=", text, ": expected ", want);
        values_[key] = param_text(v);
        break;
      }
      case ParamSpec::Kind::number: {
        double v = param_double(estimator_, key, text);
        BL_CHECK(std::isfinite(v) && (s.exclusive_min ? v > s.min_value : v >= s.min_value), estimator_,
                 ": parameter ", key, "=", text, ": expected a finite number ", s.exclusive_min ? "> " : ">= ",
                 s.min_value);
        values_[key] = param_text(v);
        break;
      }
      case ParamSpec::Kind::integer: {
        int64_t v = param_int(estimator_, key, text);
        BL_CHECK(static_cast<double>(v) >= s.min_value, estimator_, ": parameter ", key, "=", text,
                 ": expected an integer >= ", static_cast<int64_t>(s.min_value));
        values_[key] = std::to_string(v);
        break;
      }
      case ParamSpec::Kind::boolean:
        values_[key] = param_bool(estimator_, key, text) ? "true" : "false";
        break;
      case ParamSpec::Kind::choice: {
        bool ok = std::find(s.choices.begin(), s.choices.end(), text) != s.choices.end();
        std::string list;
        for (const auto& c : s.choices) list += (list.empty() ? "" : ", ") + c;
        BL_CHECK(ok, estimator_, ": parameter ", key, "=", text, ": expected one of ", list);
        values_[key] = text;
        break;
      }
    }
  }
}

std::vector<ParamSpec> evidence_prior_specs(std::vector<ParamSpec> extra) {
  using K = ParamSpec::Kind;
  std::vector<ParamSpec> specs{{"alpha_1", K::number, "1e-06", 0.0},  {"alpha_2", K::number, "1e-06", 0.0},
                               {"fit_intercept", K::boolean, "true"}, {"lambda_1", K::number, "1e-06", 0.0},
                               {"lambda_2", K::number, "1e-06", 0.0}, {"max_iter", K::integer, "300", 1}};
  for (ParamSpec& s : extra) specs.push_back(std::move(s));
  specs.push_back({"tol", K::number, "0.001", 0.0});
  return specs;
}

double ParamSet::number(const std::string& key) const {
  return param_double(estimator_, key, values_.at(key));
}
int64_t ParamSet::integer(const std::string& key) const {
  return param_int(estimator_, key, values_.at(key));
}
bool ParamSet::boolean(const std::string& key) const {
  return param_bool(estimator_, key, values_.at(key));
}
const std::string& ParamSet::text(const std::string& key) const { return values_.at(key); }

std::vector<float> y_to_host(const Tensor& y) {
  Tensor h = y.to(Device::cpu()).contiguous();
  std::vector<float> out(static_cast<size_t>(h.numel()));
  for (int64_t i = 0; i < h.numel(); ++i) {
    if (h.dtype() == DType::f32) out[i] = h.data<float>()[i];
    else if (h.dtype() == DType::i32) out[i] = static_cast<float>(h.data<int32_t>()[i]);
    else if (h.dtype() == DType::i64) out[i] = static_cast<float>(h.data<int64_t>()[i]);
    else throw Error("y must be f32, i32 or i64, got " + h.str());
  }
  return out;
}

EncodedLabels encode_labels(const std::string& est, const Tensor& y, int64_t min_classes) {
  std::vector<float> v = y_to_host(y);
  for (size_t i = 0; i < v.size(); ++i) {
    BL_CHECK(std::isfinite(v[i]), est, ": label at row ", i, " is NaN or inf");
    BL_CHECK(v[i] == std::floor(v[i]), est, ": label ", v[i], " at row ", i,
             " is not an integer (a classifier needs class labels)");
  }
  EncodedLabels e;
  e.classes = v;
  std::sort(e.classes.begin(), e.classes.end());
  e.classes.erase(std::unique(e.classes.begin(), e.classes.end()), e.classes.end());
  BL_CHECK(static_cast<int64_t>(e.classes.size()) >= min_classes, est, ": y holds ",
           e.classes.size(), " distinct class(es); a classifier needs at least ", min_classes,
           " (single class in the labels)");
  e.index.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    e.index[i] = std::lower_bound(e.classes.begin(), e.classes.end(), v[i]) - e.classes.begin();
  }
  return e;
}

void check_predict_X(const std::string& est, const Tensor& X, int64_t n_features) {
  check_X(est, X);
  BL_CHECK(X.dim(1) == n_features, est, ": X has ", X.dim(1), " features but the model was fit with ",
           n_features);
}

void ParamEstimator::check_transform_X(const Tensor& X, int64_t n_features) const {
  BL_CHECK(fitted_, name_, ": transform before fit");
  check_predict_X(name_, X, n_features);
}

void ParamEstimator::check_predict_input(const Tensor& X, int64_t n_features) const {
  BL_CHECK(fitted_, name_, ": predict before fit");
  check_predict_X(name_, X, n_features);
}

void ParamEstimator::set_params_with_extra(const Params& params, const char* extra_key, std::string* extra,
                                           const std::function<std::string(const std::string&)>& read_extra,
                                           const std::function<void(const ParamSet&)>& check_next) {
  Params rest;
  std::string kept = *extra;
  for (const auto& [key, text] : params) {
    if (extra_key && key == extra_key) {
      kept = read_extra(text);
    } else {
      rest[key] = text;
    }
  }
  ParamSet next = params_;
  next.set(rest);
  check_next(next);
  params_ = next;
  *extra = kept;
}

float dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) s = bl::fma(a[i], b[i], s);
  return s;
}

float max_abs(const std::vector<float>& a) {
  float m = 0.0f;
  for (float x : a) m = bl::max(m, bl::abs(x));
  return m;
}

ColumnStats column_stats(const Tensor& X, bool center) {
  ColumnStats s;
  const int64_t d = X.dim(1);
  s.scale = bl::stddev(X, {0}).to(Device::cpu()).to_vector<float>();
  for (auto& v : s.scale)
    if (!(v > 0.0f)) v = 1.0f;
  if (center) s.mean = bl::mean(X, {0}).to(Device::cpu()).to_vector<float>();
  else s.mean.assign(static_cast<size_t>(d), 0.0f);
  return s;
}

Tensor standardize(const Tensor& X, const ColumnStats& stats) {
  const int64_t d = X.dim(1);
  Tensor mu = Tensor::from_vector(stats.mean, {d}, X.device());
  Tensor sc = Tensor::from_vector(stats.scale, {d}, X.device());
  return bl::div(bl::sub(X, mu), sc);
}

void put_f32(nlohmann::json& state, const std::string& key, const std::vector<float>& v) {
  state[key] = f32_to_hex(v);
}

void put_ints(nlohmann::json& state, std::initializer_list<IntField> fields) {
  for (const IntField& f : fields) state[f.key] = f.value;
}

void put_f32s(nlohmann::json& state, std::initializer_list<F32Field> fields) {
  for (const F32Field& f : fields) put_f32(state, f.key, f.values);
}

std::vector<float> get_f32(const nlohmann::json& state, const std::string& key, int64_t expected_size,
                           const std::string& est) {
  BL_CHECK(state.contains(key) && state[key].is_string(), est, ": model state has no field '", key, "'");
  std::vector<float> v = f32_from_hex(state[key].get_ref<const std::string&>(), key);
  BL_CHECK(expected_size < 0 || static_cast<int64_t>(v.size()) == expected_size, est,
           ": model state field '", key, "' has ", v.size(), " values, expected ", expected_size);
  return v;
}

int64_t get_int(const nlohmann::json& state, const std::string& key, int64_t min_value,
                const std::string& est) {
  BL_CHECK(state.contains(key) && state[key].is_number_integer(), est,
           ": model state has no integer field '", key, "'");
  int64_t v = state[key].get<int64_t>();
  BL_CHECK(v >= min_value, est, ": model state field '", key, "' = ", v, " is below ", min_value);
  return v;
}

double accuracy_score(const Tensor& y_true, const Tensor& y_pred) {
  std::vector<float> a = y_to_host(y_true), b = y_to_host(y_pred);
  BL_CHECK(a.size() == b.size() && !a.empty(), "score: y has ", a.size(), " entries, predictions ", b.size());
  double hits = 0;
  for (size_t i = 0; i < a.size(); ++i) hits += (a[i] == b[i]) ? 1 : 0;
  return hits / static_cast<double>(a.size());
}

double r2_score(const Tensor& y_true, const Tensor& y_pred) {
  std::vector<float> a = y_to_host(y_true), b = y_to_host(y_pred);
  BL_CHECK(a.size() == b.size() && !a.empty(), "score: y has ", a.size(), " entries, predictions ", b.size());
  double mean = 0;
  for (float v : a) mean += v;
  mean /= static_cast<double>(a.size());
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double r = static_cast<double>(a[i]) - b[i], t = static_cast<double>(a[i]) - mean;
    ss_res += r * r;
    ss_tot += t * t;
  }
  if (ss_tot == 0) return ss_res == 0 ? 1.0 : 0.0;
  return 1.0 - ss_res / ss_tot;
}

void put_labels(nlohmann::json& state, const std::vector<float>& classes, DType dtype) {
  put_f32(state, "classes", classes);
  state["label_dtype"] = dtype_name(dtype);
}

DType get_label_dtype(const nlohmann::json& state) {
  const std::string dt = state.value("label_dtype", "f32");
  return dt == "i32" ? DType::i32 : dt == "i64" ? DType::i64 : DType::f32;
}

Tensor labels_from_index(const std::vector<float>& classes, const Tensor& index, DType dtype, Device device) {
  Tensor cls = Tensor::from_vector(classes, {static_cast<int64_t>(classes.size())}, device);
  Tensor lab = bl::index_select(cls, 0, index.to(device));
  return dtype == DType::f32 ? lab : bl::cast(lab, dtype);
}

}  // namespace bl::ml::lin
