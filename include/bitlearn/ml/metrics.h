// ml/metrics.h: the evaluation metrics users reach for, with scikit-learn's definitions.
//
// Computed on the host in float64 from the labels, predictions and probabilities, each sum in index
// order. They report on a model; they are not part of what the contract hashes. Everything but the
// log loss is arithmetic only; the log loss calls the C library's log, so its last digit may differ
// between C libraries.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace bl::ml {

struct ClassMetrics {
  double label = 0;
  double precision = 0, recall = 0, f1 = 0;  // 0 where undefined (scikit-learn's zero_division=0)
  int64_t support = 0;                       // rows whose true label is this one
};

struct ClassificationMetrics {
  std::vector<double> labels;     // every label seen in y_true or y_pred, ascending
  std::vector<int64_t> confusion; // [labels x labels], row = true label, column = predicted
  std::vector<ClassMetrics> per_class;
  double accuracy = 0;
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
  double weighted_precision = 0, weighted_recall = 0, weighted_f1 = 0;
  // From probabilities, when given: log loss (probabilities clipped to [eps, 1 - eps] with eps the
  // binary32 epsilon, as scikit-learn does for float32 input, and rows renormalized) and ROC AUC
  // (binary: of the second class's probability; more classes: the macro mean of one-vs-rest AUCs).
  std::optional<double> log_loss, roc_auc;
};

// y_true, y_pred: one label per row. proba (optional): [rows x classes.size()] row-major, column k the
// probability of classes[k] (ascending); a true label outside classes throws bl::Error. Throws on
// empty or mismatched input.
ClassificationMetrics classification_metrics(const std::vector<double>& y_true, const std::vector<double>& y_pred,
                                             const std::vector<double>& classes = {},
                                             const std::vector<double>& proba = {});

struct RegressionMetrics {
  double r2 = 0, mae = 0, mse = 0, rmse = 0, max_error = 0;
};

// R^2 is 1 - SS_res / SS_tot (scikit-learn: 1 where both are 0, 0 where only SS_tot is 0).
RegressionMetrics regression_metrics(const std::vector<double>& y_true, const std::vector<double>& y_pred);

// Area under the ROC curve of scores for the positive rows (ties counted half, the trapezoid rule).
double roc_auc_binary(const std::vector<bool>& positive, const std::vector<double>& score);

}  // namespace bl::ml
