// column_transformer.cpp: see column_transformer.h.
#include "ml/preprocessing/column_transformer.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace bl::ml::prep {

void ColumnTransformer::check_fit_input(const Tensor& X, const Tensor& y, bool allow_nan) {
  if (y.defined()) check_Xy(name_, X, y, allow_nan);
  else check_X(name_, X, allow_nan);
  d_ = X.dim(1);
}

void ColumnTransformer::check_transform_input(const Tensor& X) const {
  check_transform_X(X, d_);
}

Tensor ColumnTransformer::row_on(const std::vector<float>& v, const Tensor& X) const {
  return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, X.device());
}

std::vector<float> ColumnTransformer::get_finite_row(const nlohmann::json& state, const std::string& key) const {
  std::vector<float> v = lin::get_f32(state, key, d_, name_);
  for (size_t j = 0; j < v.size(); ++j)
    BL_CHECK(std::isfinite(v[j]), name_, ": model state field '", key, "' holds ", v[j], " at column ", j);
  return v;
}

std::vector<float> ColumnTransformer::get_divisor_row(const nlohmann::json& state, const std::string& key) const {
  std::vector<float> v = get_finite_row(state, key);
  for (size_t j = 0; j < v.size(); ++j)
    BL_CHECK(v[j] != 0.0f, name_, ": model state: ", key, " of column ", j, " is 0");
  return v;
}

void ColumnTransformer::save_rows(nlohmann::json& state, std::initializer_list<lin::F32Field> rows) const {
  state["n_features"] = d_;
  lin::put_f32s(state, rows);
}

void ColumnTransformer::load_rows(const nlohmann::json& state, std::initializer_list<StateRow> rows) {
  d_ = lin::get_int(state, "n_features", 1, name_);
  for (const StateRow& r : rows) *r.values = r.divisor ? get_divisor_row(state, r.key) : get_finite_row(state, r.key);
}

std::pair<double, double> parse_pair(const std::string& est, const std::string& key, const std::string& text) {
  std::string body;
  for (char c : text)
    if (c != ' ' && c != '(' && c != ')' && c != '[' && c != ']') body += c;
  const size_t comma = body.find(',');
  BL_CHECK(comma != std::string::npos && body.find(',', comma + 1) == std::string::npos, est, ": parameter ", key,
           "=", text, ": expected two numbers \"lo,hi\"");
  const double lo = param_double(est, key, body.substr(0, comma));
  const double hi = param_double(est, key, body.substr(comma + 1));
  BL_CHECK(std::isfinite(lo) && std::isfinite(hi), est, ": parameter ", key, "=", text,
           ": expected two finite numbers");
  return {lo, hi};
}

namespace {

// Whole numbers as integers ("25", not "2.5e+01"), others in param_text's shortest round-trip form.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return param_text(v);
}

}  // namespace

Params PairParamTransformer::get_params() const {
  Params p = params_.all();
  p[key_] = number_text(lo_) + "," + number_text(hi_);
  return p;
}

void PairParamTransformer::set_params(const Params& p) {
  Params rest = p;
  auto it = rest.find(key_);
  double lo = lo_, hi = hi_;
  if (it != rest.end()) {
    std::tie(lo, hi) = parse_pair(name_, key_, it->second);
    check_(name_, it->second, lo, hi);
    rest.erase(it);
  }
  params_.set(rest);
  lo_ = lo;
  hi_ = hi;
}

}  // namespace bl::ml::prep
