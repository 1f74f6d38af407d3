// sub_estimators.cpp: sub-estimator specs, nested state, gathers (see sub_estimators.h).
#include "ml/ensemble/sub_estimators.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/host_math.h"
#include "ml/tree/tree_model.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

SubSpec parse_item(const std::string& est, const std::string& key, const std::string& raw) {
  const std::string item = trim(raw);
  SubSpec spec;
  const size_t open = item.find('(');
  if (open == std::string::npos) {
    spec.name = item;
  } else {
    BL_CHECK(item.back() == ')', est, ": parameter ", key, ": item '", item, "' must end with ')'");
    spec.name = trim(item.substr(0, open));
    const std::string inner = item.substr(open + 1, item.size() - open - 2);
    BL_CHECK(inner.find_first_of("()") == std::string::npos, est, ": parameter ", key, ": item '", item,
             "': nested parentheses are not supported");
    if (!trim(inner).empty()) {
      for (const std::string& kv : split(inner, ',')) {
        const size_t eq = kv.find('=');
        BL_CHECK(eq != std::string::npos && !trim(kv.substr(0, eq)).empty(), est, ": parameter ", key,
                 ": '", kv, "' in '", item, "' is not key=value");
        spec.params[trim(kv.substr(0, eq))] = trim(kv.substr(eq + 1));
      }
    }
  }
  BL_CHECK(!spec.name.empty(), est, ": parameter ", key, ": an item has no estimator name");
  try {
    make_estimator(spec.name, spec.params);  // validates the name and the parameters now
  } catch (const Error& e) {
    throw Error(est + ": parameter " + key + ": " + e.what());
  }
  return spec;
}

}  // namespace

std::vector<SubSpec> parse_sub_specs(const std::string& est, const std::string& key, const std::string& text) {
  BL_CHECK(!trim(text).empty(), est, ": parameter ", key, " is empty; expected NAME(k=v,...);NAME...");
  std::vector<SubSpec> out;
  for (const std::string& item : split(text, ';')) out.push_back(parse_item(est, key, item));
  return out;
}

SubSpec parse_sub_spec(const std::string& est, const std::string& key, const std::string& text) {
  std::vector<SubSpec> v = parse_sub_specs(est, key, text);
  BL_CHECK(v.size() == 1, est, ": parameter ", key, ": expected one estimator, got ", v.size());
  return v[0];
}

std::string sub_specs_text(const std::vector<SubSpec>& specs) {
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i) out += ";";
    out += specs[i].name;
    if (!specs[i].params.empty()) {
      out += "(";
      bool first = true;
      for (const auto& [k, v] : specs[i].params) {
        out += (first ? "" : ",") + k + "=" + v;
        first = false;
      }
      out += ")";
    }
  }
  return out;
}

void fit_sub_estimator(Estimator& m, const Tensor& X, const Tensor& y, const std::vector<float>* w,
                       const std::string& est) {
  if (w == nullptr) {
    m.fit(X, y);
    return;
  }
  BL_CHECK(m.supports_sample_weight(), est, ": sample_weight given, but member estimator ", m.name(),
           " does not take sample weights (docs/ml.md lists those that do)");
  m.fit_weighted(X, y, Tensor::from_vector(*w, {static_cast<int64_t>(w->size())}));
}

std::unique_ptr<Estimator> make_sub_estimator(const SubSpec& spec, const std::string& seed_param) {
  auto est = make_estimator(spec.name, spec.params);
  if (!seed_param.empty() && !spec.params.count("random_state") && est->get_params().count("random_state")) {
    est->set_params({{"random_state", seed_param}});
  }
  return est;
}

void save_sub_estimator(const Estimator& est, nlohmann::json& out) {
  out["estimator"] = est.name();
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : est.get_params()) params[k] = v;
  out["params"] = params;
  nlohmann::json state = nlohmann::json::object();
  est.save_state(state);
  out["state"] = state;
}

std::unique_ptr<Estimator> load_sub_estimator(const nlohmann::json& in, const std::string& prefix) {
  BL_CHECK(in.is_object() && in.contains("estimator") && in["estimator"].is_string() && in.contains("params") &&
               in["params"].is_object() && in.contains("state") && in["state"].is_object(),
           prefix, ": expected {\"estimator\", \"params\", \"state\"}");
  Params params;
  for (auto it = in["params"].begin(); it != in["params"].end(); ++it) {
    BL_CHECK(it.value().is_string(), prefix, ".params.", it.key(), " is not a string");
    params[it.key()] = it.value().get<std::string>();
  }
  auto est = make_estimator(in["estimator"].get<std::string>(), params);
  est->load_state(in["state"]);
  return est;
}

nlohmann::json save_sub_estimators(const std::vector<std::unique_ptr<Estimator>>& models) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : models) {
    nlohmann::json j;
    save_sub_estimator(*m, j);
    list.push_back(j);
  }
  return list;
}

std::vector<std::unique_ptr<Estimator>> load_sub_estimators(const nlohmann::json& list, const std::string& est) {
  BL_CHECK(list.is_array(), est, ": state.estimators must be a list");
  std::vector<std::unique_ptr<Estimator>> models;
  for (size_t e = 0; e < list.size(); ++e) {
    models.push_back(load_sub_estimator(list[e], est + ": state.estimators[" + std::to_string(e) + "]"));
  }
  return models;
}

void require_state_keys(const nlohmann::json& state, const std::string& est,
                        std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    BL_CHECK(state.contains(key), est, ": model state has no ", key);
  }
}

int64_t state_n_features(const nlohmann::json& state, const std::string& est) {
  const int64_t n_features = io::json_integer<int64_t>(state["n_features"], est + ": state.n_features");
  BL_CHECK(n_features >= 1, est, ": state.n_features must be >= 1");
  return n_features;
}

std::vector<double> state_classes(const nlohmann::json& state, const std::string& est, bool classifier) {
  std::vector<double> classes = state["classes"].get<std::vector<double>>();
  BL_CHECK(!classifier || classes.size() >= 2, est, ": state.classes needs >= 2 labels");
  return classes;
}

void check_fitted_X(const std::string& est, bool fitted, const Tensor& X, int64_t n_features) {
  BL_CHECK(fitted, est, ": predict before fit");
  check_X(est, X, /*allow_nan=*/true);
  BL_CHECK(X.dim(1) == n_features, est, ": X has ", X.dim(1), " features, the model was fitted on ", n_features);
}

Tensor labels_of_best_scores(const std::vector<double>& classes, const std::vector<float>& scores, int64_t n) {
  const int64_t k = static_cast<int64_t>(classes.size());
  std::vector<int32_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[i] = argmax_row(&scores[i * k], k);
  return decode_labels(classes, idx);
}

int64_t count_or_fraction(const std::string& est, const std::string& key, const std::string& v, int64_t total) {
  if (v.find_first_of(".eE") != std::string::npos) {
    const double f = param_double(est, key, v);
    BL_CHECK(f > 0.0 && f <= 1.0, est, ": parameter ", key, "=", v, ": a fraction must be in (0, 1]");
    return std::max<int64_t>(1, static_cast<int64_t>(f * static_cast<double>(total)));
  }
  const int64_t c = param_int(est, key, v);
  BL_CHECK(c >= 1, est, ": parameter ", key, "=", v, ": expected a count >= 1 or a fraction in (0, 1]");
  return c;
}

Tensor gather_rows_cols(const Tensor& X, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  Tensor h = host_f32(X);
  const float* p = h.data<float>();
  const int64_t d = h.dim(1), m = static_cast<int64_t>(cols.size());
  std::vector<float> out(rows.size() * cols.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t j = 0; j < m; ++j) out[i * m + j] = p[rows[i] * d + cols[j]];
  }
  return Tensor::from_vector(out, {static_cast<int64_t>(rows.size()), m});
}

Tensor gather_labels(const Tensor& y, const std::vector<int64_t>& rows) {
  Tensor h = y.to(Device::cpu()).contiguous();
  const int64_t m = static_cast<int64_t>(rows.size());
  if (h.dtype() == DType::i32) {
    std::vector<int32_t> v(rows.size());
    for (int64_t i = 0; i < m; ++i) v[i] = h.data<int32_t>()[rows[i]];
    return Tensor::from_vector(v, {m});
  }
  if (h.dtype() == DType::i64) {
    std::vector<int64_t> v(rows.size());
    for (int64_t i = 0; i < m; ++i) v[i] = h.data<int64_t>()[rows[i]];
    return Tensor::from_vector(v, {m});
  }
  std::vector<float> v(rows.size());
  for (int64_t i = 0; i < m; ++i) v[i] = h.data<float>()[rows[i]];
  return Tensor::from_vector(v, {m});
}

void add_mapped_proba(const std::vector<double>& all, const std::vector<double>& sub, const Tensor& proba,
                      float weight, std::vector<float>& acc) {
  Tensor h = host_f32(proba);
  const int64_t n = h.dim(0), ks = h.dim(1), ka = static_cast<int64_t>(all.size());
  BL_CHECK(ks == static_cast<int64_t>(sub.size()), "ensemble: a sub-estimator's predict_proba has ", ks,
           " columns for ", sub.size(), " classes");
  std::vector<int64_t> where(static_cast<size_t>(ks));
  for (int64_t j = 0; j < ks; ++j) {
    where[j] = std::lower_bound(all.begin(), all.end(), sub[j]) - all.begin();
  }
  const float* p = h.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < ks; ++j) {
      float& a = acc[static_cast<size_t>(i * ka + where[j])];
      a = bl::add(a, bl::mul(weight, p[i * ks + j]));
    }
  }
}

void put_n_features_classes(nlohmann::json& state, int64_t n_features, const std::vector<double>& classes) {
  state["n_features"] = n_features;
  state["classes"] = classes;
}

double TwoFormEnsemble::score(const Tensor& X, const Tensor& y) const {
  return classifier_ ? accuracy_score(y, predict(X)) : r2_score(y, predict(X));
}

int64_t param_n_estimators(const std::string& est, const std::string& v) {
  const int64_t n = param_int(est, "n_estimators", v);
  BL_CHECK(n >= 1, est, ": parameter n_estimators=", v, ": expected >= 1");
  return n;
}

double param_learning_rate(const std::string& est, const std::string& v) {
  const double r = param_double(est, "learning_rate", v);
  BL_CHECK(r > 0.0, est, ": parameter learning_rate=", v, ": expected > 0");
  return r;
}

std::vector<double> distinct_labels(const Tensor& y) {
  std::vector<double> v = labels_as_doubles(y, "distinct_labels");
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

double uniform53(uint64_t seed, uint64_t stream, uint64_t i) {
  const uint64_t hi = random_u32_element(seed, stream, 2 * i) >> 5;      // 27 bits
  const uint64_t lo = random_u32_element(seed, stream, 2 * i + 1) >> 6;  // 26 bits
  return static_cast<double>((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

std::vector<int64_t> draw_weighted_rows(uint64_t seed, uint64_t stream, const std::vector<double>& w, int64_t m,
                                        bool replace) {
  const int64_t n = static_cast<int64_t>(w.size());
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(m));
  if (replace) {
    std::vector<double> cdf(static_cast<size_t>(n));
    double acc = 0.0;
    for (int64_t i = 0; i < n; ++i) cdf[i] = acc += w[i];
    for (int64_t i = 0; i < m; ++i) {
      const double u = uniform53(seed, stream, static_cast<uint64_t>(i)) * acc;
      rows.push_back(std::min<int64_t>(n - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin()));
    }
  } else {
    std::vector<std::pair<double, int64_t>> keys;
    for (int64_t i = 0; i < n; ++i)
      if (w[i] > 0.0) keys.emplace_back(log64(1.0 - uniform53(seed, stream, static_cast<uint64_t>(i))) / w[i], i);
    BL_CHECK(m <= static_cast<int64_t>(keys.size()), "weighted draw: ", m, " rows without replacement from ",
             keys.size(), " rows of positive weight");
    std::sort(keys.begin(), keys.end(), [](const std::pair<double, int64_t>& a, const std::pair<double, int64_t>& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    for (int64_t i = 0; i < m; ++i) rows.push_back(keys[i].second);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace bl::ml
