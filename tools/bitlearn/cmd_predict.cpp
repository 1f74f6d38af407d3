// `bitlearn predict --model model.json --data test.csv --out predictions.csv [--output predict|proba|transform]`
// Loads a model file written by `bitlearn fit` (or Estimator::save) and writes one CSV row per data
// row. Columns are picked by the feature names stored at fit time (extra columns, such as the target,
// are ignored); without stored names every column is a feature. Exit codes: 0 done; 2 bad input.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/model_json.h"

namespace {

struct PredictArgs {
  std::string model, data, out, output = "predict";
  int threads = 0;
  bool threads_given = false;  // a --threads given is used or refused (0 included), never ignored
};

// A safetensors file starts with its header's length (8 bytes, little-endian) and then its JSON header.
bool looks_like_safetensors(const std::string& text) {
  if (text.size() < 10 || text[8] != '{') return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(text[static_cast<size_t>(i)]);
  return n >= 2 && n <= text.size() - 8;
}

void run_predict(const PredictArgs& a) {
  if (a.threads_given) {  // without --threads: BITLEARN_THREADS or every hardware thread
    bl::check_thread_count(a.threads, "--threads");
    bl::set_num_threads(a.threads);
  }
  nlohmann::json j;
  {
    const std::string text = bl::read_file_text(a.model, "model file");
    BL_CHECK(!looks_like_safetensors(text), a.model,
             ": a safetensors file (a `bitlearn train` checkpoint or model weights), not a model file of "
             "`bitlearn fit`; predict reads the JSON model files that `bitlearn fit --out` writes");
    try {
      j = bl::ml::parse_model_json(text);  // parsed once: the estimator and the column names
    } catch (const std::exception& e) {
      throw bl::Error(a.model + ": not a valid model file (JSON parse error: " + e.what() + ")");
    }
  }
  auto est = bl::ml::estimator_from_json(j, a.model);
  std::vector<std::string> features;
  std::string target;
  if (j.contains("feature_names") && j["feature_names"].is_array())
    features = j["feature_names"].get<std::vector<std::string>>();
  if (j.contains("target") && j["target"].is_string()) target = j["target"].get<std::string>();
  bl::CsvTable table = bl::read_csv(a.data);
  bl::CsvXy xy = bl::csv_to_xy(table, features.empty() ? std::string() : std::string(), features, a.data);
  if (features.empty() && !target.empty()) {
    // No stored feature names: drop the target column if present.
    for (const auto& c : table.columns)
      if (c == target) xy = bl::csv_to_xy(table, target, {}, a.data);
  }
  std::vector<std::string> header;
  bl::Tensor out;
  if (a.output == "predict") {
    out = est->predict(xy.X);
    header = {target.empty() ? std::string("prediction") : target};
  } else if (a.output == "proba") {
    out = est->predict_proba(xy.X);
    for (int64_t k = 0; k < out.dim(1); ++k) header.push_back("proba_" + std::to_string(k));
  } else if (a.output == "transform") {
    out = est->transform(xy.X);
    for (int64_t k = 0; k < out.dim(1); ++k) header.push_back("component_" + std::to_string(k));
  } else {
    throw bl::Error("--output " + a.output + ": expected predict, proba or transform");
  }
  if (out.ndim() == 2 && a.output == "predict") {
    header.clear();
    for (int64_t k = 0; k < out.dim(1); ++k) header.push_back("prediction_" + std::to_string(k));
  }
  bl::write_csv(a.out, header, out);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<PredictArgs>();
  auto* cmd = root.add_subcommand("predict", "Predict with a model file on a CSV file");
  cmd->add_option("--model", a->model, "model file written by `bitlearn fit`")->required();
  cmd->add_option("--data", a->data, "CSV with the feature columns used at fit time")->required();
  cmd->add_option("--out", a->out, "predictions CSV to write")->required();
  cmd->add_option("--output", a->output, "predict (default), proba or transform");
  CLI::Option* threads = cmd->add_option(
      "--threads", a->threads, "CPU threads, 1 to 1024 (default BITLEARN_THREADS or all cores; results do not depend on it)");
  cmd->callback([a, threads] {
    a->threads_given = threads->count() > 0;
    run_predict(*a);
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
