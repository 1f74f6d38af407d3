// lightgbm_xgboost_golden.h: the case files that scripts/golden/lightgbm_models.py and
// xgboost_models.py write beside each model (tests/data/ml/{lightgbm,xgboost}/NAME.case.json): the
// model file, its objective and the test rows, and the library's own outputs as hex fields.
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"

namespace bl::ml::testing {

struct GoldenCase {
  std::string model, objective;  // the model file's path (in dir), the library's objective name
  int64_t n = 0, d = 0;
  std::vector<float> X;  // the test rows [n, d]
};

// Reads dir + name + ".case.json" into *c and returns the whole file, whose other fields (the
// library's outputs) the caller decodes.
inline nlohmann::json read_golden_case(const std::string& dir, const std::string& name, GoldenCase* c) {
  nlohmann::json j = nlohmann::json::parse(read_file_text(dir + name + ".case.json"));
  c->model = dir + j["model"].get<std::string>();
  c->objective = j["objective"].get<std::string>();
  c->n = j["n"].get<int64_t>();
  c->d = j["d"].get<int64_t>();
  c->X = f32_from_hex(j["X"].get<std::string>(), "X");
  return j;
}

// Binary64 values stored as little-endian hex (16 digits each).
inline std::vector<double> f64_hex(const std::string& hex) {
  std::vector<int64_t> bits = i64_from_hex(hex, "f64");
  std::vector<double> out(bits.size());
  std::memcpy(out.data(), bits.data(), bits.size() * sizeof(double));
  return out;
}

}  // namespace bl::ml::testing
