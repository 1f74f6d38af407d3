// `bitlearn predict --model model.json --data test.csv --out predictions.csv
//  [--output predict|proba|transform|decision|score_samples|shap]`
// Loads a model file written by `bitlearn fit` (or Estimator::save) and writes one CSV row per data
// row. Columns are picked by the feature names stored at fit time (extra columns, such as the target,
// are ignored); without stored names every column is a feature. A checkpoint of `bitlearn train
// --data FILE.csv` is read too (tabular_training.h). Exit codes: 0 done; 2 bad input.
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
#include "ml/tree/tree_shap.h"
#include "model_file.h"
#include "progress_bar.h"
#include "tabular_training.h"

namespace {

struct PredictArgs {
  std::string model, data, out, output = "predict";
  int threads = 0;
  bool threads_given = false;  // a --threads given is used or refused (0 included), never ignored
  bool quiet = false;          // no progress bar
};

void run_predict(const PredictArgs& a) {
  if (a.threads_given) {  // without --threads: BITLEARN_THREADS or every hardware thread
    bl::check_thread_count(a.threads, "--threads");
    bl::set_num_threads(a.threads);
  }
  // Drawn by the estimators that report progress while predicting (kernel models, Gaussian
  // processes, neighbors, ensembles, forests, ...), on a terminal only and not with --quiet.
  bl::cli::ProgressBar bar(!a.quiet);
  bar.listen_to_library();
  // A checkpoint of `bitlearn train --data FILE.csv` (an MLP or LSTM with its standardization and classes).
  if (bl::cli::predict_with_checkpoint(a.model, a.data, a.out, a.output)) return;
  bl::cli::ModelFile model = bl::cli::read_model_file(a.model);
  const auto& est = model.estimator;
  const std::string& target = model.target;
  bl::CsvTable table = bl::read_table(a.data);
  bl::CsvXy xy = bl::cli::model_inputs(model, table, a.data);
  std::vector<std::string> header;
  bl::Tensor out;
  if (a.output == "predict") {
    out = est->predict(xy.X);
    header = {target.empty() ? std::string("prediction") : target};
  } else if (a.output == "proba") {
    out = est->predict_proba(xy.X);
    // Columns named by class label (proba_<label>), as predict_proba orders them: ascending labels.
    const bool named = static_cast<int64_t>(model.classes.size()) == out.dim(1);
    for (int64_t k = 0; k < out.dim(1); ++k) {
      header.push_back("proba_" + (named ? model.label_text(model.classes[static_cast<size_t>(k)]) : std::to_string(k)));
    }
  } else if (a.output == "transform") {
    out = est->transform(xy.X);
    for (int64_t k = 0; k < out.dim(1); ++k) header.push_back("component_" + std::to_string(k));
  } else if (a.output == "decision") {
    // decision_function: one column for two classes (positive: the second) and outlier models,
    // else one per class (or class pair) in the estimator's order.
    out = est->decision_function(xy.X);
    if (out.ndim() == 1) header = {"decision"};
    for (int64_t k = 0; out.ndim() == 2 && k < out.dim(1); ++k) header.push_back("decision_" + std::to_string(k));
  } else if (a.output == "shap") {
    // SHAP values of the tree models (ml/tree/tree_shap.h: bitlearn's trees, forests and histogram
    // boosting, imported XGBoost / LightGBM), binary64 written with 17 significant digits: per
    // output group, one column per feature then the expected value.
    int64_t cols = 0;
    const std::vector<double> v = bl::ml::estimator_shap_values(*est, xy.X, &cols);
    const int64_t d = xy.X.dim(1), groups = cols / (d + 1);
    std::string text;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t g = c / (d + 1), j = c % (d + 1);
      std::string name = j == d ? std::string("expected_value")
                                : (static_cast<int64_t>(model.features.size()) == d ? model.features[j] : "x" + std::to_string(j));
      if (groups > 1) name = std::to_string(g) + "_" + name;
      text += (c ? "," : "") + bl::csv_field("shap_" + name);
    }
    text += "\n";
    char buf[32];
    for (size_t i = 0; i < v.size(); ++i) {
      std::snprintf(buf, sizeof(buf), "%.17g", v[i]);
      text += buf;
      text += (static_cast<int64_t>(i % cols) == cols - 1) ? "\n" : ",";
    }
    bl::write_file_atomic(a.out, text, "SHAP values CSV");
    return;
  } else if (a.output == "score_samples") {
    // Density and outlier models: the log density / log-likelihood / anomaly score of each row.
    out = est->score_samples(xy.X);
    header = {"score"};
  } else {
    throw bl::Error("--output " + a.output + ": expected predict, proba, transform, decision, score_samples or shap");
  }
  if (out.ndim() == 2 && a.output == "predict") {
    header.clear();
    for (int64_t k = 0; k < out.dim(1); ++k) header.push_back("prediction_" + std::to_string(k));
  }
  if (a.output == "predict" && !model.label_names.empty() && out.ndim() == 1) {
    // A classifier of text labels: the predicted class indices written back as their names.
    bl::Tensor h = out.to(bl::Device::cpu()).contiguous();
    std::string text = bl::csv_field(header[0]) + "\n";
    for (int64_t i = 0; i < h.numel(); ++i) text += bl::csv_field(model.label_text(h.data<float>()[i])) + "\n";
    bl::write_file_atomic(a.out, text, "predictions CSV");
    return;
  }
  bl::write_csv(a.out, header, out);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<PredictArgs>();
  auto* cmd = root.add_subcommand("predict", "Predict with a model file on a CSV file");
  cmd->add_option("--model", a->model, "model file written by `bitlearn fit`, or a checkpoint of `bitlearn train --data FILE.csv`")->required();
  cmd->add_option("--data", a->data, "CSV with the feature columns used at fit time")->required();
  cmd->add_option("--out", a->out, "predictions CSV to write")->required();
  cmd->add_option("--output", a->output,
                  "predict (default), proba, transform, decision (decision_function), score_samples or shap (SHAP values of tree models: decision / extra trees, forests, hist_gradient_boosting_*, xgboost_model, lightgbm_model)");
  cmd->add_flag("--quiet", a->quiet, "no progress bar (none is drawn when stderr is not a terminal either)");
  CLI::Option* threads = cmd->add_option(
      "--threads", a->threads, "CPU threads, 1 to 1024 (default BITLEARN_THREADS or all cores; results do not depend on it)");
  cmd->callback([a, threads] {
    a->threads_given = threads->count() > 0;
    run_predict(*a);
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
