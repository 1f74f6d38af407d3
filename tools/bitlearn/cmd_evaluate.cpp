// `bitlearn evaluate --model model.json --data test.csv [--target COLUMN] [--json metrics.json]`
// Predicts with a model file on a labelled CSV file and prints the metrics users expect for the
// task: a classifier's accuracy, precision / recall / F1 (per class, macro and weighted), log loss
// and ROC AUC (when it has predict_proba) and its confusion matrix; a regressor's R^2, MAE, MSE,
// RMSE and max error. Definitions are scikit-learn's (bitlearn/ml/metrics.h).
// Exit codes: 0 done; 2 bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "bitlearn/ml/metrics.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model_file.h"

namespace {

struct EvaluateArgs {
  std::string model, data, target, json;
  int threads = 0;
  bool threads_given = false, json_given = false;
};

// The true values: one column of the table, every cell a finite number; for a model of text
// labels, each cell's class index (a label the model never saw is an error).
std::vector<double> column_values(const bl::CsvTable& table, const std::string& column, const std::string& source,
                                  const bl::cli::ModelFile& model) {
  size_t c = 0;
  while (c < table.columns.size() && table.columns[c] != column) ++c;
  BL_CHECK(c < table.columns.size(), source, " has no column '", column, "' (the target)");
  auto text = table.text.find(c);
  BL_CHECK(text == table.text.end() || !model.label_names.empty(), source, ": line ", text->second.first_line,
           ", column '", column, "': '", text->second.first_cell, "' is not a number (the model's labels are numbers)");
  std::vector<double> out(static_cast<size_t>(table.rows));
  for (int64_t r = 0; r < table.rows; ++r) {
    const float v = table.values[static_cast<size_t>(r) * table.columns.size() + c];
    if (!model.label_names.empty()) {
      const std::string cell = text != table.text.end() ? text->second.cells[r] : std::isnan(v) ? "" : bl::float_to_text(v);
      BL_CHECK(!cell.empty(), source, ": line ", r + 2, ", column '", column, "': the target is missing");
      auto it = std::find(model.label_names.begin(), model.label_names.end(), cell);
      BL_CHECK(it != model.label_names.end(), source, ": line ", r + 2, ", column '", column, "': label '", cell,
               "' was not among the labels at fit time");
      out[static_cast<size_t>(r)] = static_cast<double>(it - model.label_names.begin());
      continue;
    }
    BL_CHECK(std::isfinite(v), source, ": line ", r + 2, ", column '", column, "': the target is missing or not finite");
    out[static_cast<size_t>(r)] = v;
  }
  return out;
}

std::vector<double> to_doubles(const bl::Tensor& t) {
  bl::Tensor h = t.to(bl::Device::cpu()).contiguous();
  std::vector<double> out(static_cast<size_t>(h.numel()));
  for (int64_t i = 0; i < h.numel(); ++i) {
    switch (h.dtype()) {
      case bl::DType::f32: out[i] = h.data<float>()[i]; break;
      case bl::DType::i32: out[i] = h.data<int32_t>()[i]; break;
      case bl::DType::i64: out[i] = static_cast<double>(h.data<int64_t>()[i]); break;
      default: throw bl::Error("evaluate: predictions of dtype " + h.str() + " are not supported");
    }
  }
  return out;
}

nlohmann::ordered_json classification(const bl::ml::ClassificationMetrics& m, const bl::cli::ModelFile& model) {
  auto label_text = [&](double v) { return model.label_text(v); };
  std::printf("accuracy            %.6f\n", m.accuracy);
  std::printf("precision  macro %.6f  weighted %.6f\n", m.macro_precision, m.weighted_precision);
  std::printf("recall     macro %.6f  weighted %.6f\n", m.macro_recall, m.weighted_recall);
  std::printf("f1         macro %.6f  weighted %.6f\n", m.macro_f1, m.weighted_f1);
  if (m.log_loss) std::printf("log loss            %.6f\n", *m.log_loss);
  if (m.roc_auc) std::printf("roc auc             %.6f%s\n", *m.roc_auc, m.labels.size() > 2 ? " (one-vs-rest, macro)" : "");
  std::printf("\n%-12s %9s %9s %9s %9s\n", "class", "precision", "recall", "f1", "support");
  for (const auto& c : m.per_class)
    std::printf("%-12s %9.4f %9.4f %9.4f %9lld\n", label_text(c.label).c_str(), c.precision, c.recall, c.f1,
                static_cast<long long>(c.support));
  const size_t k = m.labels.size();
  std::printf("\nconfusion matrix (rows: true label, columns: predicted)\n%-12s", "");
  for (double l : m.labels) std::printf(" %8s", label_text(l).c_str());
  std::printf("\n");
  for (size_t r = 0; r < k; ++r) {
    std::printf("%-12s", label_text(m.labels[r]).c_str());
    for (size_t c = 0; c < k; ++c) std::printf(" %8lld", static_cast<long long>(m.confusion[r * k + c]));
    std::printf("\n");
  }
  nlohmann::ordered_json j;
  j["task"] = "classification";
  j["accuracy"] = m.accuracy;
  j["precision_macro"] = m.macro_precision;
  j["recall_macro"] = m.macro_recall;
  j["f1_macro"] = m.macro_f1;
  j["precision_weighted"] = m.weighted_precision;
  j["recall_weighted"] = m.weighted_recall;
  j["f1_weighted"] = m.weighted_f1;
  j["log_loss"] = m.log_loss ? nlohmann::ordered_json(*m.log_loss) : nlohmann::ordered_json();
  j["roc_auc"] = m.roc_auc ? nlohmann::ordered_json(*m.roc_auc) : nlohmann::ordered_json();
  j["labels"] = nlohmann::ordered_json::array();
  for (double l : m.labels) {
    if (model.label_names.empty()) j["labels"].push_back(l);
    else j["labels"].push_back(label_text(l));
  }
  j["confusion_matrix"] = nlohmann::ordered_json::array();
  for (size_t r = 0; r < k; ++r)
    j["confusion_matrix"].push_back(std::vector<int64_t>(m.confusion.begin() + r * k, m.confusion.begin() + (r + 1) * k));
  j["per_class"] = nlohmann::ordered_json::array();
  for (const auto& c : m.per_class)
    j["per_class"].push_back({{"label", model.label_names.empty() ? nlohmann::ordered_json(c.label)
                                                                   : nlohmann::ordered_json(label_text(c.label))}, {"precision", c.precision}, {"recall", c.recall}, {"f1", c.f1},
                              {"support", c.support}});
  return j;
}

nlohmann::ordered_json regression(const bl::ml::RegressionMetrics& m) {
  std::printf("r2          %.6f\nmae         %.6g\nmse         %.6g\nrmse        %.6g\nmax error   %.6g\n", m.r2,
              m.mae, m.mse, m.rmse, m.max_error);
  nlohmann::ordered_json j;
  j["task"] = "regression";
  j["r2"] = m.r2;
  j["mae"] = m.mae;
  j["mse"] = m.mse;
  j["rmse"] = m.rmse;
  j["max_error"] = m.max_error;
  return j;
}

void run_evaluate(const EvaluateArgs& a) {
  if (a.threads_given) {
    bl::check_thread_count(a.threads, "--threads");
    bl::set_num_threads(a.threads);
  }
  BL_CHECK(!a.json_given || !a.json.empty(), "--json needs a file name (got an empty one)");
  bl::cli::ModelFile model = bl::cli::read_model_file(a.model);
  const std::string target = a.target.empty() ? model.target : a.target;
  BL_CHECK(!target.empty(), a.model, " records no target column (an unsupervised model?): give --target COLUMN");
  bl::CsvTable table = bl::read_table(a.data);
  bl::CsvXy xy = bl::cli::model_inputs(model, table, a.data);
  const std::vector<double> y_true = column_values(table, target, a.data, model);
  const std::vector<double> y_pred = to_doubles(model.estimator->predict(xy.X));
  std::printf("%s on %s: %zu rows, target %s\n", model.estimator->name().c_str(), a.data.c_str(), y_true.size(),
              target.c_str());
  nlohmann::ordered_json j;
  if (!model.classes.empty()) {
    std::vector<double> proba;
    try {
      proba = to_doubles(model.estimator->predict_proba(xy.X));
    } catch (const bl::Error&) {
      proba.clear();  // no predict_proba (e.g. a hinge-loss SGD classifier): no log loss, no AUC
    }
    j = classification(bl::ml::classification_metrics(y_true, y_pred, proba.empty() ? std::vector<double>{} : model.classes,
                                                      proba),
                       model);
  } else {
    j = regression(bl::ml::regression_metrics(y_true, y_pred));
  }
  j["model"] = a.model;
  j["estimator"] = model.estimator->name();
  j["data"] = a.data;
  j["target"] = target;
  j["rows"] = y_true.size();
  if (!a.json.empty()) bl::write_file_atomic(a.json, j.dump(2) + "\n", "metrics file");
}

void setup(CLI::App& root) {
  auto a = std::make_shared<EvaluateArgs>();
  auto* cmd = root.add_subcommand(
      "evaluate", "Evaluate a model file on a labelled CSV file: accuracy, F1, ROC AUC, log loss and the confusion "
                  "matrix for a classifier; R^2, MAE, RMSE for a regressor");
  cmd->add_option("--model", a->model, "model file written by `bitlearn fit`")->required();
  cmd->add_option("--data", a->data, "CSV with the feature columns used at fit time and the target")->required();
  cmd->add_option("--target", a->target, "the true values' column (default: the target recorded at fit time)");
  CLI::Option* json = cmd->add_option("--json", a->json, "also write the metrics as JSON to this file");
  CLI::Option* threads = cmd->add_option("--threads", a->threads, "CPU threads, 1 to 1024 (results do not depend on it)");
  cmd->callback([a, threads, json] {
    a->threads_given = threads->count() > 0;
    a->json_given = json->count() > 0;
    run_evaluate(*a);
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
