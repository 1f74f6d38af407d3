// `bitlearn cv --model NAME --data train.csv --target COLUMN [--folds K] [--stratified|--plain]
//  [--shuffle --seed S] [--param key=value ...] [--features a,b | --ignore c] [--json scores.json]`
// K-fold cross-validation, as scikit-learn's cross_val_score with an integer cv: each fold is held
// out once while the estimator is fitted on the others, and scored with the estimator's default
// score (accuracy for classifiers, R^2 for regressors). Classifiers get stratified folds unless
// --plain. Folds: bitlearn/ml/model_selection.h. Exit codes: 0 done; 2 bad input.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/model_selection.h"
#include "bitlearn/ml/progress.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model_file.h"

namespace {

struct CvArgs {
  std::string model, data, target, json;
  std::vector<std::string> params, features, ignore, categorical;
  int folds = 5;
  bool stratified = false, plain = false, shuffle = false;
  uint64_t seed = 0;
  int threads = 0;
  bool threads_given = false;
};

// Rows `rows` of a host tensor (1-d or 2-d f32).
bl::Tensor take_rows(const bl::Tensor& t, const std::vector<int64_t>& rows) {
  const int64_t width = t.ndim() == 2 ? t.dim(1) : 1;
  std::vector<float> out(rows.size() * static_cast<size_t>(width));
  const float* p = t.data<float>();
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t c = 0; c < width; ++c) out[r * width + c] = p[rows[r] * width + c];
  if (t.ndim() == 2) return bl::Tensor::from_vector(out, {static_cast<int64_t>(rows.size()), width});
  return bl::Tensor::from_vector(out, {static_cast<int64_t>(rows.size())});
}

void run_cv(const CvArgs& a) {
  if (a.threads_given) {
    bl::check_thread_count(a.threads, "--threads");
    bl::set_num_threads(a.threads);
  }
  BL_CHECK(!a.target.empty(), "cv needs --target: the column the folds are scored on");
  BL_CHECK(!(a.stratified && a.plain), "--stratified and --plain exclude each other");
  bl::ml::Params params;
  for (const auto& item : a.params) {
    const size_t eq = item.find('=');
    BL_CHECK(eq != std::string::npos && eq > 0, "--param ", item, ": expected key=value");
    params[item.substr(0, eq)] = item.substr(eq + 1);
  }
  bl::ml::make_estimator(a.model, params);  // an unknown name or parameter fails before any fit
  bl::CsvTable table = bl::read_csv(a.data);
  std::vector<std::string> features = bl::cli::select_features(table, a.target, a.features, a.ignore, a.data);
  // One-hot with the categories of the whole table (every fold's columns are the same).
  const std::vector<bl::cli::Categorical> categories = bl::cli::find_categories(table, a.categorical, features, a.data);
  if (!categories.empty()) table = bl::cli::one_hot(table, categories, features, a.data);
  bl::CsvXy xy = bl::csv_to_xy(table, a.target, features, a.data);
  BL_CHECK(xy.label_names.empty() || bl::cli::is_classifier(a.model), a.data, ": target '", a.target,
           "' holds text; only a classifier takes text labels");
  const int64_t n = xy.X.dim(0);
  const bool stratify = a.stratified || (!a.plain && bl::cli::is_classifier(a.model));
  std::vector<int32_t> fold;
  if (stratify) {
    std::vector<double> labels(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) labels[i] = xy.y.data<float>()[i];
    fold = bl::ml::stratified_k_fold(labels, a.folds, a.shuffle, a.seed);
  } else {
    fold = bl::ml::k_fold(n, a.folds, a.shuffle, a.seed);
  }
  std::printf("%s, %d-fold%s%s cross-validation on %lld rows x %lld features, target %s\n", a.model.c_str(), a.folds,
              stratify ? " stratified" : "", a.shuffle ? (" shuffled (seed " + std::to_string(a.seed) + ")").c_str() : "",
              static_cast<long long>(n), static_cast<long long>(xy.X.dim(1)), a.target.c_str());
  const char* metric = bl::cli::is_classifier(a.model) ? "accuracy" : "r2";
  std::vector<double> scores;
  std::vector<std::string> warnings;
  for (int32_t f = 0; f < a.folds; ++f) {
    std::vector<int64_t> train, test;
    for (int64_t i = 0; i < n; ++i) (fold[i] == f ? test : train).push_back(i);
      auto est = bl::ml::make_estimator(a.model, params);
    bl::ml::WarningCollector collected;
    est->fit(take_rows(xy.X, train), take_rows(xy.y, train));
    for (const std::string& w : collected.messages()) warnings.push_back("fold " + std::to_string(f) + ": " + w);
    scores.push_back(est->score(take_rows(xy.X, test), take_rows(xy.y, test)));
    std::printf("fold %d  train %zu  test %zu  %s %.6f\n", f, train.size(), test.size(), metric, scores.back());
  }
  double mean = 0, var = 0;
  for (double s : scores) mean += s;
  mean /= static_cast<double>(scores.size());
  for (double s : scores) var += (s - mean) * (s - mean);
  const double std_dev = std::sqrt(var / static_cast<double>(scores.size()));  // numpy's std (ddof 0)
  std::printf("%s %.6f +- %.6f (mean +- std over %d folds)\n", metric, mean, std_dev, a.folds);
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!a.json.empty()) {
    nlohmann::ordered_json j;
    j["estimator"] = a.model;
    j["params"] = params;
    j["data"] = a.data;
    j["target"] = a.target;
    j["folds"] = a.folds;
    j["stratified"] = stratify;
    j["shuffle"] = a.shuffle;
    j["seed"] = a.seed;
    j["metric"] = metric;
    j["scores"] = scores;
    j["mean"] = mean;
    j["std"] = std_dev;
    j["test_fold"] = fold;
    bl::write_file_atomic(a.json, j.dump(2) + "\n", "cross-validation report");
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<CvArgs>();
  auto* cmd = root.add_subcommand("cv", "K-fold cross-validation of an estimator on a CSV file (scikit-learn's folds)");
  cmd->add_option("--model", a->model, "estimator name (ridge, logistic_regression, ...)")->required();
  cmd->add_option("--data", a->data, "CSV (header row, numeric cells)")->required();
  cmd->add_option("--target", a->target, "target column")->required();
  cmd->add_option("--folds", a->folds, "number of folds (default 5)");
  cmd->add_flag("--stratified", a->stratified, "stratified folds (the default for classifiers)");
  cmd->add_flag("--plain", a->plain, "plain k-fold also for a classifier");
  cmd->add_flag("--shuffle", a->shuffle, "shuffle before splitting (seeded, the same on every machine)");
  cmd->add_option("--seed", a->seed, "seed of --shuffle (default 0)");
  cmd->add_option("--param", a->params, "hyper-parameter key=value (repeatable)");
  CLI::Option* features = cmd->add_option("--features", a->features, "feature columns (comma-separated)")->delimiter(',');
  cmd->add_option("--ignore", a->ignore, "columns not to use as features (comma-separated)")->delimiter(',')->excludes(features);
  cmd->add_option("--categorical", a->categorical, "feature columns to one-hot encode (comma-separated)")->delimiter(',');
  cmd->add_option("--json", a->json, "also write the scores and each row's test fold as JSON");
  CLI::Option* threads = cmd->add_option("--threads", a->threads, "CPU threads, 1 to 1024 (results do not depend on it)");
  cmd->callback([a, threads] {
    a->threads_given = threads->count() > 0;
    run_cv(*a);
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
