// `bitlearn fit --model NAME --data train.csv --target COLUMN [--param key=value ...] --out model.json`
// Fits any registered estimator on a CSV file and writes its model file. The model file also
// records the feature column names and the target, so `bitlearn predict` picks the same columns.
// Progress of long fits is drawn as a bar on stderr. Exit codes: 0 done; 2 bad input.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/model_selection/pipeline.h"
#include "ml/timeseries/forecaster.h"
#include "model_file.h"
#include "progress_bar.h"

namespace {

// A forecaster's series alone (ml/timeseries/forecaster.h): y from the target column, X [rows, 0].
bl::CsvXy series_only_xy(const bl::CsvTable& table, const std::string& target, const std::string& source) {
  const auto at = std::find(table.columns.begin(), table.columns.end(), target);
  BL_CHECK(at != table.columns.end(), source, ": target column '", target, "' not found");
  const size_t c = static_cast<size_t>(at - table.columns.begin()), cols = table.columns.size();
  BL_CHECK(table.text.count(c) == 0, source, ": target '", target, "' holds text; a series must be numbers");
  std::vector<float> y(static_cast<size_t>(table.rows));
  for (int64_t i = 0; i < table.rows; ++i) y[i] = table.values[static_cast<size_t>(i) * cols + c];
  bl::CsvXy xy;
  xy.X = bl::Tensor::zeros({table.rows, 0});
  xy.y = bl::Tensor::from_vector(y, {table.rows});
  return xy;
}

struct FitArgs {
  std::string model, data, target, out, weights, group;
  std::vector<std::string> params;
  std::vector<std::string> features, ignore;  // column selection: exactly these, or all but these
  std::vector<std::string> categorical;       // feature columns one-hot encoded
  int threads = 0;
  bool threads_given = false;  // a --threads given is used or refused (0 included), never ignored
  bool quiet = false;
};

// "f0, f1, f2" (the first 8 names, then how many more).
std::string column_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 8; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 8) s += ", ... (" + std::to_string(names.size() - 8) + " more)";
  return s;
}

bl::ml::Params parse_params(const std::vector<std::string>& items) {
  bl::ml::Params p;
  for (const auto& item : items) {
    size_t eq = item.find('=');
    BL_CHECK(eq != std::string::npos && eq > 0, "--param ", item, ": expected key=value");
    p[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return p;
}

void run_fit(const FitArgs& a) {
  if (a.threads_given) {  // without --threads: BITLEARN_THREADS or every hardware thread
    bl::check_thread_count(a.threads, "--threads");
    bl::set_num_threads(a.threads);
  }
  auto est = bl::ml::make_estimator(a.model, parse_params(a.params));
  bl::CsvTable table = bl::read_table(a.data);
  const bl::Tensor weights = bl::cli::weight_column(table, a.weights, a.data);
  std::vector<std::string> ignore = a.ignore;
  bl::cli::set_weight_column_apart(a.weights, a.target, a.features, a.categorical, ignore);
  // A forecaster fits on a data file holding only its series (the target column): no features.
  const bool series_only =
      dynamic_cast<const bl::ml::Forecaster*>(est.get()) != nullptr && a.features.empty() && !a.target.empty() &&
      std::all_of(table.columns.begin(), table.columns.end(), [&](const std::string& c) {
        return c == a.target || std::find(ignore.begin(), ignore.end(), c) != ignore.end();
      });
  const std::vector<std::string> inputs =
      series_only ? std::vector<std::string>() : bl::cli::select_features(table, a.target, a.features, ignore, a.data);
  std::vector<std::string> features = inputs;
  const std::vector<bl::cli::Categorical> categories = bl::cli::find_categories(table, a.categorical, inputs, a.data);
  if (!categories.empty()) table = bl::cli::one_hot(table, categories, features, a.data);
  bl::CsvXy xy = series_only ? series_only_xy(table, a.target, a.data) : bl::csv_to_xy(table, a.target, features, a.data);
  BL_CHECK(xy.label_names.empty() || bl::ml::estimator_is_classifier(*est), a.data, ": target '", a.target,
           "' holds text ('", xy.label_names[0], "', ...); only a classifier takes text labels");
  bl::cli::ProgressBar bar(!a.quiet);
  bar.listen_to_library();
  auto t0 = std::chrono::steady_clock::now();
  bl::ml::WarningCollector warnings;  // printed after the bar is cleared
  if (!a.group.empty()) {  // the query id column: a ranker reads it from X (its group_column)
    const int64_t col = bl::cli::group_column_index(*est, a.model, a.group, xy.feature_names, a.data);
    est->set_params({{"group_column", std::to_string(col)}});
  }
  est->fit_weighted(xy.X, xy.y, weights);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  j["feature_names"] = xy.feature_names;
  if (!categories.empty()) {
    j["input_columns"] = inputs;
    j["categories"] = nlohmann::json::array();
    for (const auto& c : categories) j["categories"].push_back({{"column", c.column}, {"values", c.values}});
  }
  if (!a.target.empty()) j["target"] = a.target;
  if (!a.weights.empty()) j["sample_weight_column"] = a.weights;
  // Text labels: the classifier sees their indices; predict writes the names back.
  if (!xy.label_names.empty()) j["label_names"] = xy.label_names;
  bl::write_file_atomic(a.out, j.dump(1) + "\n", "model file");
  bar.clear();
  // Warnings are printed with --quiet too: they say the model may not be what was asked for.
  for (const std::string& w : warnings.messages()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!a.quiet) {
    for (const auto& c : categories)
      std::fprintf(stderr, "one-hot %s: %zu categories (%s)\n", c.column.c_str(), c.values.size(),
                   column_list(c.values).c_str());
    std::fprintf(stderr, "fit %s on %lld rows x %lld features (%s)%s%s in %.3f s -> %s\n", a.model.c_str(),
                 static_cast<long long>(xy.X.dim(0)), static_cast<long long>(xy.X.dim(1)),
                 column_list(xy.feature_names).c_str(),
                 a.target.empty() ? ", no target" : (", target " + a.target).c_str(),
                 a.weights.empty() ? "" : (", weights " + a.weights).c_str(), secs, a.out.c_str());
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<FitArgs>();
  auto* cmd = root.add_subcommand("fit", "Fit an estimator on a CSV file and write its model file");
  cmd->add_option("--model", a->model, "estimator name (ridge, kmeans, ...)")->required();
  cmd->add_option("--data", a->data, "training CSV (header row, numeric cells)")->required();
  cmd->add_option("--target", a->target, "target column (omit for unsupervised estimators)");
  CLI::Option* features = cmd->add_option("--features", a->features,
                                          "feature columns, in this order (comma-separated; default: every column "
                                          "but the target and --ignore)")
                              ->delimiter(',');
  cmd->add_option("--ignore", a->ignore, "columns not to use as features (comma-separated), e.g. an id or a label")
      ->delimiter(',')
      ->excludes(features);
  cmd->add_option("--categorical", a->categorical,
                  "feature columns to one-hot encode (comma-separated; text or numbers; predict applies the same)")
      ->delimiter(',');
  cmd->add_option("--weights", a->weights,
                  "column of sample weights (finite, >= 0; row i counts w_i times), for the estimators that take "
                  "them (docs/ml.md)");
  cmd->add_option("--group", a->group,
                  "query id column of a ranker (rows of a query contiguous; predict reads it too)");
  cmd->add_option("--param", a->params, "hyper-parameter key=value (repeatable)");
  cmd->add_option("--out", a->out, "model file to write (JSON)")->required();
  CLI::Option* threads = cmd->add_option(
      "--threads", a->threads, "CPU threads, 1 to 1024 (default BITLEARN_THREADS or all cores; results do not depend on it)");
  cmd->add_flag("--quiet", a->quiet, "no progress bar or summary");
  cmd->callback([a, threads] {
    a->threads_given = threads->count() > 0;
    run_fit(*a);
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
