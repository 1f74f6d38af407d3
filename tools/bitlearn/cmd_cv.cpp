// `bitlearn cv --model NAME --data train.csv --target COLUMN [--folds K] [--stratified|--plain]
//  [--shuffle --seed S] [--param key=value ...] [--grid key=v1,v2,... ...] [--scoring NAME]
//  [--features a,b | --ignore c] [--weights COLUMN] [--group COLUMN] [--json report.json]
//  [--refit model.json]`
// K-fold cross-validation, as scikit-learn's cross_val_score with an integer cv: each fold is held
// out once while the estimator is fitted on the others, and scored with the estimator's default
// score (accuracy for classifiers, R^2 for regressors) or --scoring (scikit-learn's scorer names,
// computed by bitlearn/ml/metrics.h). Classifiers (a pipeline whose last step is one included) get
// stratified folds unless --plain. Folds: bitlearn/ml/model_selection.h.
//
// --weights COLUMN: sample weights, as scikit-learn's cross_validate(..., params={"sample_weight": w}):
// each fold's estimator is fitted on its training rows with their weights (Estimator::fit_weighted;
// --refit too), while the held-out scores stay unweighted, as scikit-learn's default scorers. The
// column is no feature.
//
// --group COLUMN (rankers: hist_gradient_boosting_ranker): the query id column, read by the ranker
// from X as at `bitlearn fit --group`. The folds keep every query whole: the queries, in the order
// of their first rows (a query's rows must be contiguous), are dealt to the folds as KFold deals rows
// (consecutive blocks of queries, the first Q % K folds one query more; --shuffle permutes the
// queries first), and each row goes with its query. Each fold is scored with the ranker's score, the
// mean NDCG@eval_at over the held-out queries.
//
// Grid search, as scikit-learn's GridSearchCV: each --grid key=v1,v2,... gives a parameter its
// candidate values (a pipeline's step parameters as STEP__PARAM); every combination is scored on the
// same folds, in ParameterGrid's order: keys sorted (byte order), the last key changing fastest.
// The table gives each combination's mean and std (numpy's, ddof 0) over the folds and its rank
// (1 = best, equal means share the lower rank); the best is the first combination of rank 1.
// --json writes a cv_results_-like report, --refit fits the best combination on every row and writes
// its model file (as `bitlearn fit --out` does). Exit codes: 0 done; 2 bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/metrics.h"
#include "bitlearn/ml/model_selection.h"
#include "bitlearn/ml/progress.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/model_selection/pipeline.h"
#include "model_file.h"

namespace {

struct CvArgs {
  std::string model, data, target, json, scoring, refit, weights, group;
  std::vector<std::string> params, grid, features, ignore, categorical;
  int folds = 5;
  bool stratified = false, plain = false, shuffle = false;
  uint64_t seed = 0;
  int threads = 0;
  bool threads_given = false;
};

// Rows `rows` of a host tensor (1-d or 2-d f32; undefined stays undefined).
bl::Tensor take_rows(const bl::Tensor& t, const std::vector<int64_t>& rows) {
  if (!t.defined()) return t;
  const int64_t width = t.ndim() == 2 ? t.dim(1) : 1;
  std::vector<float> out(rows.size() * static_cast<size_t>(width));
  const float* p = t.data<float>();
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t c = 0; c < width; ++c) out[r * width + c] = p[rows[r] * width + c];
  if (t.ndim() == 2) return bl::Tensor::from_vector(out, {static_cast<int64_t>(rows.size()), width});
  return bl::Tensor::from_vector(out, {static_cast<int64_t>(rows.size())});
}

std::vector<double> host_doubles(const bl::Tensor& t) {
  const std::vector<float> v = t.to(bl::Device::cpu()).contiguous().to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

// The scorers of --scoring: scikit-learn's names, larger is better (errors negated as its neg_*).
const std::vector<std::string>& classifier_scorings() {
  static const std::vector<std::string> v = {"accuracy",        "f1_macro", "f1_weighted", "precision_macro",
                                             "recall_macro",    "roc_auc",  "roc_auc_ovr", "neg_log_loss"};
  return v;
}
const std::vector<std::string>& regressor_scorings() {
  static const std::vector<std::string> v = {"r2", "neg_mean_squared_error", "neg_mean_absolute_error",
                                             "neg_root_mean_squared_error", "max_error"};
  return v;
}

std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The score of a fitted estimator on held-out rows: its own score() without --scoring.
double score_of(const bl::ml::Estimator& est, const bl::Tensor& X, const bl::Tensor& y, const std::string& scoring,
                const std::vector<double>& train_classes) {
  if (scoring.empty()) return est.score(X, y);
  const std::vector<double> truth = host_doubles(y);
  const bool by_proba = scoring == "roc_auc" || scoring == "roc_auc_ovr" || scoring == "neg_log_loss";
  if (by_proba) {
    if (scoring == "roc_auc") {
      BL_CHECK(train_classes.size() == 2, "--scoring roc_auc: binary targets only (", train_classes.size(),
               " classes); use roc_auc_ovr");
      // As scikit-learn's scorer: decision_function where the estimator has one (no ties from
      // probabilities rounded to 1), else the second class's probability.
      std::vector<double> s;
      try {
        s = host_doubles(est.decision_function(X));
      } catch (const bl::Error& e) {
        if (std::string(e.what()).find("not supported") == std::string::npos) throw;
        const std::vector<double> proba = host_doubles(est.predict_proba(X));
        for (size_t i = 0; i < truth.size(); ++i) s.push_back(proba[2 * i + 1]);
      }
      BL_CHECK(s.size() == truth.size(), "--scoring roc_auc: the estimator's scores are not one per row");
      std::vector<bool> positive(truth.size());
      for (size_t i = 0; i < truth.size(); ++i) positive[i] = truth[i] == train_classes[1];
      return bl::ml::roc_auc_binary(positive, s);
    }
    const std::vector<double> proba = host_doubles(est.predict_proba(X));
    const bl::ml::ClassificationMetrics m =
        bl::ml::classification_metrics(truth, host_doubles(est.predict(X)), train_classes, proba);
    if (scoring == "neg_log_loss") return -*m.log_loss;
    BL_CHECK(m.roc_auc.has_value(), "--scoring roc_auc_ovr: no ROC AUC for this fold (one class only?)");
    return *m.roc_auc;
  }
  const std::vector<double> pred = host_doubles(est.predict(X));
  if (std::find(regressor_scorings().begin(), regressor_scorings().end(), scoring) != regressor_scorings().end()) {
    const bl::ml::RegressionMetrics m = bl::ml::regression_metrics(truth, pred);
    if (scoring == "r2") return m.r2;
    if (scoring == "neg_mean_squared_error") return -m.mse;
    if (scoring == "neg_mean_absolute_error") return -m.mae;
    if (scoring == "neg_root_mean_squared_error") return -m.rmse;
    return -m.max_error;  // scikit-learn's "max_error" scorer is negated too
  }
  const bl::ml::ClassificationMetrics m = bl::ml::classification_metrics(truth, pred);
  if (scoring == "accuracy") return m.accuracy;
  if (scoring == "f1_macro") return m.macro_f1;
  if (scoring == "f1_weighted") return m.weighted_f1;
  if (scoring == "precision_macro") return m.macro_precision;
  return m.macro_recall;
}

// The test fold of each row for --group: the queries (contiguous runs of equal ids in column `col`
// of X, in row order) dealt to the folds by k_fold over the queries. A query id that is NaN or
// reappears after other queries is an error naming the row; fewer queries than folds too.
std::vector<int32_t> query_folds(const bl::Tensor& X, int64_t col, const CvArgs& a, int64_t* n_queries) {
  const int64_t n = X.dim(0), d = X.dim(1);
  const float* x = X.data<float>();
  std::vector<int64_t> query(static_cast<size_t>(n));
  std::map<float, int64_t> first_row;  // id -> the first row of its query
  int64_t q = -1;
  for (int64_t i = 0; i < n; ++i) {
    const float id = x[i * d + col];
    BL_CHECK(!std::isnan(id), a.data, ": --group column '", a.group, "' is empty at data row ", i + 1,
             " (rows counted from 1 after the header); every row needs a query id");
    if (i == 0 || id != x[(i - 1) * d + col]) {
      const auto seen = first_row.find(id);
      BL_CHECK(seen == first_row.end(), a.data, ": --group column '", a.group, "': query id ", id,
               " reappears at data row ", i + 1, " after other queries (its first row: ", seen->second + 1,
               "); the rows of a query must be contiguous (sort the file by the query id)");
      first_row[id] = i;
      ++q;
    }
    query[i] = q;
  }
  *n_queries = q + 1;
  BL_CHECK(a.folds <= *n_queries, "--group: ", a.data, " holds ", *n_queries, " queries, fewer than --folds ",
           a.folds, " (each fold holds out whole queries)");
  const std::vector<int32_t> qfold = bl::ml::k_fold(*n_queries, a.folds, a.shuffle, a.seed);
  std::vector<int32_t> fold(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) fold[i] = qfold[static_cast<size_t>(query[i])];
  return fold;
}

// The --grid options as the list of combinations, in ParameterGrid's order.
std::vector<bl::ml::Params> grid_combinations(const std::vector<std::string>& items) {
  std::map<std::string, std::vector<std::string>> grid;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    BL_CHECK(eq != std::string::npos && eq > 0, "--grid ", item, ": expected key=value1,value2,...");
    const std::string key = item.substr(0, eq);
    BL_CHECK(grid.count(key) == 0, "--grid names parameter ", key, " twice");
    std::vector<std::string>& values = grid[key];
    size_t start = eq + 1;
    while (true) {
      const size_t comma = item.find(',', start);
      values.push_back(item.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      BL_CHECK(!values.back().empty(), "--grid ", item, ": an empty value");
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  std::vector<bl::ml::Params> out(1);
  for (const auto& [key, values] : grid) {  // sorted keys; each later key nested inside: changes fastest
    std::vector<bl::ml::Params> next;
    for (const bl::ml::Params& p : out)
      for (const std::string& v : values) {
        bl::ml::Params q = p;
        q[key] = v;
        next.push_back(q);
      }
    out.swap(next);
  }
  return out;
}

std::string params_text(const bl::ml::Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s.empty() ? "(defaults)" : s;
}

struct Summary {
  double mean = 0, std_dev = 0;
};

Summary summarize(const std::vector<double>& scores) {
  Summary s;
  for (double x : scores) s.mean += x;
  s.mean /= static_cast<double>(scores.size());
  double var = 0;
  for (double x : scores) var += (x - s.mean) * (x - s.mean);
  s.std_dev = std::sqrt(var / static_cast<double>(scores.size()));  // numpy's std (ddof 0)
  return s;
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
  // An unknown name or parameter (of any combination) fails before any fit.
  const std::unique_ptr<bl::ml::Estimator> first = bl::ml::make_estimator(a.model, params);
  const bool classifier = bl::ml::estimator_is_classifier(*first);
  // A ranker scores within queries: its folds must keep them whole, so --group is required.
  const bool ranker = first->get_params().count("group_column") > 0;
  BL_CHECK(!ranker || !a.group.empty(), "cv: ", a.model, " ranks the rows of each query: give --group COLUMN (the "
           "query id column), so that the folds keep every query whole");
  BL_CHECK(!ranker || a.scoring.empty(), "--scoring ", a.scoring, ": a ranker is scored by its own score, the "
           "mean NDCG@eval_at over the held-out queries");
  BL_CHECK(a.group.empty() || !a.stratified, "--group and --stratified exclude each other (the folds deal whole "
           "queries)");
  const std::vector<bl::ml::Params> grid = grid_combinations(a.grid);
  std::vector<bl::ml::Params> candidates;
  for (const bl::ml::Params& g : grid) {
    bl::ml::Params p = params;
    for (const auto& [k, v] : g) p[k] = v;
    auto est = bl::ml::make_estimator(a.model, p);
    BL_CHECK(bl::ml::estimator_is_classifier(*est) == classifier, "--grid ", params_text(g),
             ": turns the estimator from ", classifier ? "a classifier" : "a regressor", " into ",
             classifier ? "a regressor" : "a classifier");
    candidates.push_back(p);
  }
  if (!a.scoring.empty() && !ranker) {
    const std::vector<std::string>& valid = classifier ? classifier_scorings() : regressor_scorings();
    BL_CHECK(std::find(valid.begin(), valid.end(), a.scoring) != valid.end(), "--scoring ", a.scoring,
             ": not a scorer for ", classifier ? "a classifier" : "a regressor", " (", joined(valid), ")");
  }
  bl::CsvTable table = bl::read_table(a.data);
  const bl::Tensor weights = bl::cli::weight_column(table, a.weights, a.data);
  std::vector<std::string> ignore = a.ignore;
  bl::cli::set_weight_column_apart(a.weights, a.target, a.features, a.categorical, ignore);
  const std::vector<std::string> inputs = bl::cli::select_features(table, a.target, a.features, ignore, a.data);
  std::vector<std::string> features = inputs;
  // One-hot with the categories of the whole table (every fold's columns are the same).
  const std::vector<bl::cli::Categorical> categories = bl::cli::find_categories(table, a.categorical, features, a.data);
  if (!categories.empty()) table = bl::cli::one_hot(table, categories, features, a.data);
  bl::CsvXy xy = bl::csv_to_xy(table, a.target, features, a.data);
  BL_CHECK(xy.label_names.empty() || classifier, a.data, ": target '", a.target,
           "' holds text; only a classifier takes text labels");
  if (weights.defined()) {
    // An estimator that takes no weights fails here with fit_weighted's named error (thrown before
    // it fits anything), ahead of any fold.
    for (const bl::ml::Params& p : candidates) {
      auto est = bl::ml::make_estimator(a.model, p);
      if (!est->supports_sample_weight()) est->fit_weighted(xy.X, xy.y, weights);
    }
  }
  const int64_t n = xy.X.dim(0);
  const bool stratify = a.group.empty() && (a.stratified || (!a.plain && classifier));
  std::vector<int32_t> fold;
  int64_t n_queries = 0;
  if (!a.group.empty()) {
    const int64_t col = bl::cli::group_column_index(*first, a.model, a.group, xy.feature_names, a.data);
    for (bl::ml::Params& p : candidates) p["group_column"] = std::to_string(col);
    fold = query_folds(xy.X, col, a, &n_queries);
  } else if (stratify) {
    std::vector<double> labels(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) labels[i] = xy.y.data<float>()[i];
    fold = bl::ml::stratified_k_fold(labels, a.folds, a.shuffle, a.seed);
  } else {
    fold = bl::ml::k_fold(n, a.folds, a.shuffle, a.seed);
  }
  std::printf("%s, %d-fold%s%s cross-validation on %lld rows x %lld features, target %s\n", a.model.c_str(), a.folds,
              stratify ? " stratified" : "", a.shuffle ? (" shuffled (seed " + std::to_string(a.seed) + ")").c_str() : "",
              static_cast<long long>(n), static_cast<long long>(xy.X.dim(1)), a.target.c_str());
  if (!a.group.empty())
    std::printf("queries: %lld (column %s), each held out whole\n", static_cast<long long>(n_queries), a.group.c_str());
  std::string metric = !a.scoring.empty() ? a.scoring : classifier ? "accuracy" : "r2";
  if (ranker) {  // the score's cut-off; one name where a --grid varies it
    metric = "ndcg@" + bl::ml::make_estimator(a.model, candidates[0])->get_params().at("eval_at");
    for (const bl::ml::Params& p : candidates)
      if ("ndcg@" + bl::ml::make_estimator(a.model, p)->get_params().at("eval_at") != metric) metric = "ndcg@eval_at";
  }
  const bool searching = !a.grid.empty();
  if (searching)
    std::printf("grid search: %zu combinations x %d folds, scoring %s\n", candidates.size(), a.folds, metric.c_str());
  // The split of each fold, made once: every candidate sees the same rows.
  struct Split {
    bl::Tensor X_train, y_train, X_test, y_test, w_train;  // w_train: undefined without --weights
    size_t train_rows = 0, test_rows = 0;
    std::vector<double> classes;  // the training rows' labels, ascending (classifiers)
  };
  std::vector<Split> splits;
  for (int32_t f = 0; f < a.folds; ++f) {
    std::vector<int64_t> train, test;
    for (int64_t i = 0; i < n; ++i) (fold[i] == f ? test : train).push_back(i);
    Split s{take_rows(xy.X, train), take_rows(xy.y, train), take_rows(xy.X, test), take_rows(xy.y, test),
            take_rows(weights, train), train.size(), test.size(), {}};
    if (classifier) {
      s.classes = host_doubles(s.y_train);
      std::sort(s.classes.begin(), s.classes.end());
      s.classes.erase(std::unique(s.classes.begin(), s.classes.end()), s.classes.end());
    }
    splits.push_back(std::move(s));
  }
  std::vector<std::vector<double>> scores(candidates.size());
  std::vector<Summary> summary(candidates.size());
  std::vector<std::string> warnings;
  for (size_t c = 0; c < candidates.size(); ++c) {
    for (int32_t f = 0; f < a.folds; ++f) {
      const Split& s = splits[static_cast<size_t>(f)];
      auto est = bl::ml::make_estimator(a.model, candidates[c]);
      bl::ml::WarningCollector collected;
      est->fit_weighted(s.X_train, s.y_train, s.w_train);  // undefined weights: fit(X, y)
      for (const std::string& w : collected.messages())
        warnings.push_back((searching ? params_text(grid[c]) + ", fold " : "fold ") + std::to_string(f) + ": " + w);
      scores[c].push_back(score_of(*est, s.X_test, s.y_test, a.scoring, s.classes));
      if (!searching)
        std::printf("fold %d  train %zu  test %zu  %s %.6f\n", f, s.train_rows, s.test_rows, metric.c_str(),
                    scores[c].back());
    }
    summary[c] = summarize(scores[c]);
  }
  // Ranks as scikit-learn's rankdata(-mean, method="min"); the best is the first of rank 1.
  std::vector<int> rank(candidates.size(), 1);
  size_t best = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    for (size_t o = 0; o < candidates.size(); ++o)
      if (summary[o].mean > summary[c].mean) ++rank[c];
    if (summary[c].mean > summary[best].mean) best = c;
  }
  if (searching) {
    std::printf("%4s  %-10s %-10s %s\n", "rank", "mean", "std", "params");
    for (size_t c = 0; c < candidates.size(); ++c)
      std::printf("%4d  %.6f   %.6f   %s\n", rank[c], summary[c].mean, summary[c].std_dev, params_text(grid[c]).c_str());
    std::printf("best: %s  %s %.6f +- %.6f (mean +- std over %d folds)\n", params_text(grid[best]).c_str(),
                metric.c_str(), summary[best].mean, summary[best].std_dev, a.folds);
  } else {
    std::printf("%s %.6f +- %.6f (mean +- std over %d folds)\n", metric.c_str(), summary[0].mean, summary[0].std_dev,
                a.folds);
  }
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
    if (!a.weights.empty()) j["sample_weight_column"] = a.weights;  // fits only; the scores are unweighted
    if (!a.group.empty()) {
      j["group_column"] = a.group;
      j["n_queries"] = n_queries;
    }
    if (searching) {  // scikit-learn's cv_results_ keys, one entry per combination
      nlohmann::ordered_json results;
      results["params"] = grid;
      std::vector<double> means, stds;
      for (const Summary& s : summary) {
        means.push_back(s.mean);
        stds.push_back(s.std_dev);
      }
      results["mean_test_score"] = means;
      results["std_test_score"] = stds;
      results["rank_test_score"] = rank;
      for (int32_t f = 0; f < a.folds; ++f) {
        std::vector<double> column;
        for (const auto& s : scores) column.push_back(s[static_cast<size_t>(f)]);
        results["split" + std::to_string(f) + "_test_score"] = column;
      }
      j["cv_results"] = results;
      j["best_index"] = best;
      j["best_params"] = grid[best];
      j["best_score"] = summary[best].mean;
    } else {
      j["scores"] = scores[0];
      j["mean"] = summary[0].mean;
      j["std"] = summary[0].std_dev;
    }
    j["test_fold"] = fold;
    bl::write_file_atomic(a.json, j.dump(2) + "\n", "cross-validation report");
  }
  if (!a.refit.empty()) {  // the best on every row, written as `bitlearn fit --out` writes it
    auto est = bl::ml::make_estimator(a.model, candidates[best]);
    bl::ml::WarningCollector collected;
    est->fit_weighted(xy.X, xy.y, weights);
    for (const std::string& w : collected.messages()) std::fprintf(stderr, "warning: refit: %s\n", w.c_str());
    nlohmann::json m = nlohmann::json::parse(est->to_json_text());
    m["feature_names"] = xy.feature_names;
    if (!a.weights.empty()) m["sample_weight_column"] = a.weights;
    if (!categories.empty()) {
      m["input_columns"] = inputs;
      m["categories"] = nlohmann::json::array();
      for (const auto& c : categories) m["categories"].push_back({{"column", c.column}, {"values", c.values}});
    }
    m["target"] = a.target;
    if (!xy.label_names.empty()) m["label_names"] = xy.label_names;
    bl::write_file_atomic(a.refit, m.dump(1) + "\n", "model file");
    std::printf("refit %s%s on %lld rows -> %s\n", a.model.c_str(),
                searching ? (" (" + params_text(grid[best]) + ")").c_str() : "", static_cast<long long>(n),
                a.refit.c_str());
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<CvArgs>();
  auto* cmd = root.add_subcommand(
      "cv", "K-fold cross-validation of an estimator on a CSV file (scikit-learn's folds), with optional grid search");
  cmd->add_option("--model", a->model, "estimator name (ridge, logistic_regression, pipeline, ...)")->required();
  cmd->add_option("--data", a->data, "CSV (header row, numeric cells)")->required();
  cmd->add_option("--target", a->target, "target column")->required();
  cmd->add_option("--folds", a->folds, "number of folds (default 5)");
  cmd->add_flag("--stratified", a->stratified, "stratified folds (the default for classifiers)");
  cmd->add_flag("--plain", a->plain, "plain k-fold also for a classifier");
  cmd->add_flag("--shuffle", a->shuffle, "shuffle before splitting (seeded, the same on every machine)");
  cmd->add_option("--seed", a->seed, "seed of --shuffle (default 0)");
  cmd->add_option("--param", a->params, "hyper-parameter key=value (repeatable)");
  cmd->add_option("--grid", a->grid,
                  "grid search: key=v1,v2,... candidate values of a parameter (repeatable; a pipeline's STEP__PARAM)");
  cmd->add_option("--scoring", a->scoring,
                  "score: accuracy, f1_macro, f1_weighted, precision_macro, recall_macro, roc_auc, roc_auc_ovr, "
                  "neg_log_loss (classifiers); r2, neg_mean_squared_error, neg_mean_absolute_error, "
                  "neg_root_mean_squared_error, max_error (regressors); default: the estimator's score");
  CLI::Option* features = cmd->add_option("--features", a->features, "feature columns (comma-separated)")->delimiter(',');
  cmd->add_option("--ignore", a->ignore, "columns not to use as features (comma-separated)")->delimiter(',')->excludes(features);
  cmd->add_option("--categorical", a->categorical, "feature columns to one-hot encode (comma-separated)")->delimiter(',');
  cmd->add_option("--weights", a->weights,
                  "column of sample weights (finite, >= 0; no feature): each fold fits with its training rows' "
                  "weights, as scikit-learn's cross_validate with params={'sample_weight': w}; the scores stay "
                  "unweighted (its default scorers); estimators that take no weights: an error (docs/ml.md)");
  cmd->add_option("--group", a->group,
                  "query id column of a ranker (required for one; rows of a query contiguous): the folds keep each "
                  "query whole, dealing consecutive blocks of queries as KFold deals rows (--shuffle: the queries "
                  "permuted first); each fold scores the ranker's mean NDCG@eval_at");
  cmd->add_option("--json", a->json, "also write the scores (with --grid: cv_results) and each row's test fold as JSON");
  cmd->add_option("--refit", a->refit, "fit the best parameters on every row and write the model file");
  CLI::Option* threads = cmd->add_option("--threads", a->threads, "CPU threads, 1 to 1024 (results do not depend on it)");
  cmd->callback([a, threads] {
    a->threads_given = threads->count() > 0;
    run_cv(*a);
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
