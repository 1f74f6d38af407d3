// model_file.cpp: reading a model file for predict and evaluate (model_file.h).
#include "model_file.h"

#include <algorithm>
#include <cstdint>

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

bool is_classifier(const std::string& name) {
  return name == "logistic_regression" || (name.size() > 11 && name.rfind("_classifier") == name.size() - 11);
}

CsvXy model_inputs(const ModelFile& model, const CsvTable& table, const std::string& source) {
  if (!model.features.empty()) return csv_to_xy(table, std::string(), model.features, source);
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

}  // namespace bl::cli
