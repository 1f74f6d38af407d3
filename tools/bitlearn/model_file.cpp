// model_file.cpp: reading a model file for predict and evaluate (model_file.h).
#include "model_file.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>

#include "bitlearn/io.h"
#include "core/error.h"
#include "ml/model_json.h"

namespace bl::cli {

namespace {

// A safetensors file starts with its header's length (8 bytes, little-endian) and then its JSON header.
bool looks_like_safetensors(const std::string& text) {
  if (text.size() < 10 || text[8] != '{') return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(text[static_cast<size_t>(i)]);
  return n >= 2 && n <= text.size() - 8;
}

// state.classes: hex of binary32 values (linear models) or a JSON list of numbers (trees, ensembles).
std::vector<double> classes_of(const nlohmann::json& state, const std::string& path) {
  std::vector<double> out;
  if (!state.is_object() || !state.contains("classes")) return out;
  const nlohmann::json& c = state["classes"];
  if (c.is_string()) {
    for (float v : ml::f32_from_hex(c.get<std::string>(), path + ": state.classes")) out.push_back(v);
  } else if (c.is_array()) {
    for (const auto& v : c) {
      BL_CHECK(v.is_number(), path, ": state.classes holds a value that is not a number");
      out.push_back(v.get<double>());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

ModelFile read_model_file(const std::string& path) {
  ModelFile m;
  const std::string text = read_file_text(path, "model file");
  BL_CHECK(!looks_like_safetensors(text), path,
           ": a safetensors file (a `bitlearn train` checkpoint or model weights), not a model file of "
           "`bitlearn fit`; this command reads the JSON model files that `bitlearn fit --out` writes");
  try {
    m.json = ml::parse_model_json(text);  // parsed once: the estimator and the column names
  } catch (const std::exception& e) {
    throw Error(path + ": not a valid model file (JSON parse error: " + e.what() + ")");
  }
  m.estimator = ml::estimator_from_json(m.json, path);
  if (m.json.contains("feature_names")) {
    BL_CHECK(m.json["feature_names"].is_array(), path, ": feature_names is not a list");
    for (const auto& v : m.json["feature_names"]) {
      BL_CHECK(v.is_string(), path, ": feature_names holds ", v.dump(), ", not a column name (text)");
      m.features.push_back(v.get<std::string>());
    }
  }
  if (m.json.contains("target") && m.json["target"].is_string()) m.target = m.json["target"].get<std::string>();
  if (m.json.contains("state")) m.classes = classes_of(m.json["state"], path);
  if (m.json.contains("categories")) {
    const auto& cats = m.json["categories"];
    BL_CHECK(cats.is_array(), path, ": categories is not a list");
    for (const auto& c : cats) {
      BL_CHECK(c.is_object() && c.contains("column") && c["column"].is_string() && c.contains("values") &&
                   c["values"].is_array() && !c["values"].empty(),
               path, ": an entry of categories is not {\"column\": text, \"values\": [text, ...]}");
      Categorical cat{c["column"].get<std::string>(), {}};
      for (const auto& v : c["values"]) {
        BL_CHECK(v.is_string() && !v.get<std::string>().empty(), path, ": categories of '", cat.column,
                 "' hold ", v.dump(), ", not a category (text)");
        cat.values.push_back(v.get<std::string>());
      }
      m.categories.push_back(std::move(cat));
    }
    BL_CHECK(m.json.contains("input_columns") && m.json["input_columns"].is_array(), path,
             ": a model with categories needs input_columns");
    for (const auto& v : m.json["input_columns"]) {
      BL_CHECK(v.is_string(), path, ": input_columns holds ", v.dump(), ", not a column name (text)");
      m.input_columns.push_back(v.get<std::string>());
    }
    // The indicators the categories make must be the recorded feature names.
    std::vector<std::string> expanded = m.input_columns;
    CsvTable empty;
    empty.columns = m.input_columns;
    (void)one_hot(empty, m.categories, expanded, path);
    BL_CHECK(expanded == m.features, path, ": feature_names are not the one-hot columns of input_columns and categories");
  }
  if (m.json.contains("label_names")) {
    BL_CHECK(m.json["label_names"].is_array(), path, ": label_names is not a list");
    for (const auto& v : m.json["label_names"]) {
      BL_CHECK(v.is_string(), path, ": label_names holds a value that is not text");
      m.label_names.push_back(v.get<std::string>());
    }
    for (double c : m.classes)
      BL_CHECK(c >= 0 && c < static_cast<double>(m.label_names.size()) && c == static_cast<int64_t>(c), path,
               ": class ", c, " has no entry in label_names (", m.label_names.size(), " names)");
  }
  return m;
}

std::string ModelFile::label_text(double value) const {
  if (!label_names.empty() && value >= 0 && value < static_cast<double>(label_names.size()))
    return label_names[static_cast<size_t>(value)];
  return float_to_text(static_cast<float>(value));
}

bool is_classifier(const std::string& name) { return ml::is_classifier_name(name); }

namespace {

constexpr size_t kMaxCategories = 1024;

// The text of a categorical cell at row r ("" when missing).
std::string category_cell(const CsvTable& t, size_t col, int64_t r) {
  auto text = t.text.find(col);
  if (text != t.text.end()) return text->second.cells[static_cast<size_t>(r)];
  const float v = t.values[static_cast<size_t>(r) * t.columns.size() + col];
  if (std::isnan(v)) return std::string();
  // Whole numbers as integers ("10", not "1e+01"), others in their shortest text.
  if (v == std::floor(v) && std::fabs(v) < 16777216.0f) return std::to_string(static_cast<long long>(v));
  return float_to_text(v);
}

size_t column_index(const CsvTable& t, const std::string& name, const std::string& source) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == name) return i;
  throw Error(source + ": categorical column '" + name + "' not found");
}

}  // namespace

std::vector<Categorical> find_categories(const CsvTable& table, const std::vector<std::string>& columns,
                                         const std::vector<std::string>& features, const std::string& source) {
  std::vector<Categorical> out;
  for (const std::string& name : columns) {
    BL_CHECK(std::find(features.begin(), features.end(), name) != features.end(), "--categorical names '", name,
             "', which is not a feature column");
    for (const Categorical& c : out) BL_CHECK(c.column != name, "--categorical names '", name, "' twice");
    const size_t col = column_index(table, name, source);
    std::set<std::string> distinct;
    for (int64_t r = 0; r < table.rows; ++r) {
      std::string cell = category_cell(table, col, r);
      if (!cell.empty()) distinct.insert(std::move(cell));
    }
    BL_CHECK(!distinct.empty(), source, ": categorical column '", name, "' has no value");
    BL_CHECK(distinct.size() <= kMaxCategories, source, ": categorical column '", name, "' has ", distinct.size(),
             " distinct values, more than ", kMaxCategories, " (an id? one-hot would make a column of each)");
    Categorical c{name, {distinct.begin(), distinct.end()}};
    if (table.text.count(col) == 0) {  // numbers: by value, as OneHotEncoder sorts a numeric column
      std::sort(c.values.begin(), c.values.end(), [](const std::string& a, const std::string& b) {
        return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
      });
    }
    out.push_back(std::move(c));
  }
  return out;
}

CsvTable one_hot(const CsvTable& table, const std::vector<Categorical>& categories, std::vector<std::string>& features,
                 const std::string& source) {
  // Each categorical column's category index per row (-1: missing).
  std::map<size_t, const Categorical*> of_column;
  std::map<size_t, std::vector<int32_t>> codes;
  for (const Categorical& c : categories) {
    const size_t col = column_index(table, c.column, source);
    of_column[col] = &c;
    std::vector<int32_t>& code = codes[col];
    code.resize(static_cast<size_t>(table.rows));
    for (int64_t r = 0; r < table.rows; ++r) {
      const std::string cell = category_cell(table, col, r);
      if (cell.empty()) {
        code[static_cast<size_t>(r)] = -1;
        continue;
      }
      const auto it = std::find(c.values.begin(), c.values.end(), cell);
      if (it == c.values.end()) {
        std::string known;
        for (size_t k = 0; k < c.values.size() && k < 12; ++k) known += (k ? ", " : "") + c.values[k];
        throw Error(detail::concat(source, ": data row ", r + 1, " (line ", r + 2, ") column '", c.column, "' holds '",
                                   cell, "', a category the model was not fitted on (categories: ", known,
                                   c.values.size() > 12 ? ", ..." : "", ")"));
      }
      code[static_cast<size_t>(r)] = static_cast<int32_t>(it - c.values.begin());
    }
  }
  CsvTable out;
  out.rows = table.rows;
  struct Source {
    size_t col;
    int32_t category;  // -1: the column itself
  };
  std::vector<Source> plan;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    auto cat = of_column.find(i);
    if (cat == of_column.end()) {
      auto text = table.text.find(i);
      if (text != table.text.end()) out.text[out.columns.size()] = text->second;
      plan.push_back({i, -1});
      out.columns.push_back(table.columns[i]);
      continue;
    }
    for (size_t k = 0; k < cat->second->values.size(); ++k) {
      plan.push_back({i, static_cast<int32_t>(k)});
      out.columns.push_back(table.columns[i] + "=" + cat->second->values[k]);
    }
  }
  std::set<std::string> names;
  for (const std::string& n : out.columns)
    BL_CHECK(names.insert(n).second, source, ": one-hot column '", n, "' is also the name of a column of the table");
  const size_t w = table.columns.size(), w2 = out.columns.size();
  out.values.resize(static_cast<size_t>(table.rows) * w2);
  for (int64_t r = 0; r < table.rows; ++r) {
    for (size_t j = 0; j < w2; ++j) {
      const Source& p = plan[j];
      float v = table.values[static_cast<size_t>(r) * w + p.col];
      if (p.category >= 0) {
        const int32_t code = codes[p.col][static_cast<size_t>(r)];
        v = code < 0 ? std::nanf("") : code == p.category ? 1.0f : 0.0f;
      }
      out.values[static_cast<size_t>(r) * w2 + j] = v;
    }
  }
  std::vector<std::string> expanded;
  for (const std::string& f : features) {
    const Categorical* cat = nullptr;
    for (const Categorical& c : categories)
      if (c.column == f) cat = &c;
    if (cat == nullptr) {
      expanded.push_back(f);
      continue;
    }
    for (const std::string& v : cat->values) expanded.push_back(f + "=" + v);
  }
  features = std::move(expanded);
  return out;
}

CsvXy model_inputs(const ModelFile& model, const CsvTable& table, const std::string& source) {
  if (!model.categories.empty()) {
    std::vector<std::string> columns = model.input_columns;
    return csv_to_xy(one_hot(table, model.categories, columns, source), std::string(), model.features, source);
  }
  if (!model.features.empty()) return csv_to_xy(table, std::string(), model.features, source);
  if (model.json.contains("feature_names") && model.json["feature_names"].empty()) {
    // Fitted on no feature columns (a forecaster on its series alone): X [rows, 0].
    CsvXy xy;
    xy.X = Tensor::zeros({table.rows, 0});
    return xy;
  }
  // No stored feature names: every column, less the target where the table has it.
  const bool has_target =
      !model.target.empty() && std::find(table.columns.begin(), table.columns.end(), model.target) != table.columns.end();
  CsvXy xy = csv_to_xy(table, has_target ? model.target : std::string(), {}, source);
  xy.y = Tensor();
  return xy;
}

std::vector<std::string> select_features(const CsvTable& table, const std::string& target,
                                         const std::vector<std::string>& features,
                                         const std::vector<std::string>& ignore, const std::string& source) {
  if (!features.empty()) {
    for (const std::string& f : features) BL_CHECK(f != target, "--features names the target column '", f, "'");
    return features;
  }
  for (const std::string& c : ignore) {
    BL_CHECK(std::find(table.columns.begin(), table.columns.end(), c) != table.columns.end(), "--ignore names column '",
             c, "', which ", source, " does not have");
  }
  std::vector<std::string> out;
  for (const std::string& c : table.columns)
    if (c != target && std::find(ignore.begin(), ignore.end(), c) == ignore.end()) out.push_back(c);
  BL_CHECK(!out.empty(), "no feature column is left in ", source, " after --target and --ignore");
  return out;
}

Tensor weight_column(const CsvTable& table, const std::string& column, const std::string& source) {
  if (column.empty()) return Tensor();
  const auto at = std::find(table.columns.begin(), table.columns.end(), column);
  BL_CHECK(at != table.columns.end(), "--weights names column '", column, "', which ", source, " does not have");
  const size_t c = static_cast<size_t>(at - table.columns.begin()), cols = table.columns.size();
  BL_CHECK(table.text.count(c) == 0, source, ": weight column '", column, "' holds text; weights must be numbers");
  std::vector<float> w(static_cast<size_t>(table.rows));
  for (int64_t i = 0; i < table.rows; ++i) w[i] = table.values[static_cast<size_t>(i) * cols + c];
  return Tensor::from_vector(w, {table.rows});
}

void set_weight_column_apart(const std::string& column, const std::string& target,
                             const std::vector<std::string>& features, const std::vector<std::string>& categorical,
                             std::vector<std::string>& ignore) {
  if (column.empty()) return;
  BL_CHECK(column != target, "--weights names the target column '", column, "'");
  BL_CHECK(std::find(features.begin(), features.end(), column) == features.end(), "--weights column '", column,
           "' is also named in --features");
  BL_CHECK(std::find(categorical.begin(), categorical.end(), column) == categorical.end(), "--weights column '",
           column, "' is also named in --categorical");
  ignore.push_back(column);
}

int64_t group_column_index(const ml::Estimator& est, const std::string& model, const std::string& column,
                           const std::vector<std::string>& feature_names, const std::string& source) {
  BL_CHECK(est.get_params().count("group_column") > 0, "--group: ", model,
           " takes no query groups (hist_gradient_boosting_ranker does)");
  const auto at = std::find(feature_names.begin(), feature_names.end(), column);
  BL_CHECK(at != feature_names.end(), "--group names column '", column, "', which is not among the inputs of ",
           source, " (not the target, --ignore'd or left out of --features)");
  return static_cast<int64_t>(at - feature_names.begin());
}

}  // namespace bl::cli
