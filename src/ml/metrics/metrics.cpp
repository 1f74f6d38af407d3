// metrics.cpp: classification and regression metrics (bitlearn/ml/metrics.h).
#include "bitlearn/ml/metrics.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace bl::ml {

namespace {

int64_t index_of(const std::vector<double>& sorted, double v) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), v);
  return it != sorted.end() && *it == v ? it - sorted.begin() : -1;
}

double safe_div(double a, double b) { return b == 0 ? 0.0 : a / b; }

void check_pairs(const char* what, const std::vector<double>& y_true, const std::vector<double>& y_pred) {
  BL_CHECK(!y_true.empty(), what, ": no rows to evaluate");
  BL_CHECK(y_true.size() == y_pred.size(), what, ": ", y_true.size(), " true values but ", y_pred.size(),
           " predictions");
  for (size_t i = 0; i < y_true.size(); ++i) {
    BL_CHECK(std::isfinite(y_true[i]), what, ": the true value of row ", i, " (counted from 0) is not finite");
    BL_CHECK(std::isfinite(y_pred[i]), what, ": the prediction of row ", i, " (counted from 0) is not finite");
  }
}

}  // namespace

double roc_auc_binary(const std::vector<bool>& positive, const std::vector<double>& score) {
  BL_CHECK(positive.size() == score.size() && !score.empty(), "roc_auc: ", positive.size(), " labels but ",
           score.size(), " scores");
  const size_t n = score.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  // Mann-Whitney: the sum of the positives' ranks (ties get the mean rank of their run).
  double rank_sum = 0;
  int64_t n_pos = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && score[order[j]] == score[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k) {
      if (positive[order[k]]) {
        rank_sum += mean_rank;
        ++n_pos;
      }
    }
    i = j;
  }
  const int64_t n_neg = static_cast<int64_t>(n) - n_pos;
  BL_CHECK(n_pos > 0 && n_neg > 0, "roc_auc: only one class is present in the true labels (",
           n_pos, " positive, ", n_neg, " negative rows); it is undefined");
  const double np = static_cast<double>(n_pos), nn = static_cast<double>(n_neg);
  return (rank_sum - np * (np + 1) / 2) / (np * nn);
}

ClassificationMetrics classification_metrics(const std::vector<double>& y_true, const std::vector<double>& y_pred,
                                             const std::vector<double>& classes, const std::vector<double>& proba) {
  check_pairs("classification metrics", y_true, y_pred);
  ClassificationMetrics m;
  m.labels = y_true;
  m.labels.insert(m.labels.end(), y_pred.begin(), y_pred.end());
  std::sort(m.labels.begin(), m.labels.end());
  m.labels.erase(std::unique(m.labels.begin(), m.labels.end()), m.labels.end());
  const size_t k = m.labels.size(), n = y_true.size();
  m.confusion.assign(k * k, 0);
  int64_t correct = 0;
  for (size_t i = 0; i < n; ++i) {
    ++m.confusion[static_cast<size_t>(index_of(m.labels, y_true[i])) * k +
                  static_cast<size_t>(index_of(m.labels, y_pred[i]))];
    correct += y_true[i] == y_pred[i];
  }
  m.accuracy = static_cast<double>(correct) / static_cast<double>(n);
  // Averages over the labels present in y_true (scikit-learn's labels of both, with zero_division=0:
  // a label only ever predicted counts in the macro mean with recall 0 and support 0).
  for (size_t c = 0; c < k; ++c) {
    int64_t tp = m.confusion[c * k + c], pred = 0, real = 0;
    for (size_t r = 0; r < k; ++r) {
      pred += m.confusion[r * k + c];
      real += m.confusion[c * k + r];
    }
    ClassMetrics cm;
    cm.label = m.labels[c];
    cm.precision = safe_div(static_cast<double>(tp), static_cast<double>(pred));
    cm.recall = safe_div(static_cast<double>(tp), static_cast<double>(real));
    cm.f1 = safe_div(2 * cm.precision * cm.recall, cm.precision + cm.recall);
    cm.support = real;
    m.per_class.push_back(cm);
  }
  for (const ClassMetrics& cm : m.per_class) {
    const double w = static_cast<double>(cm.support) / static_cast<double>(n);
    m.macro_precision += cm.precision / static_cast<double>(k);
    m.macro_recall += cm.recall / static_cast<double>(k);
    m.macro_f1 += cm.f1 / static_cast<double>(k);
    m.weighted_precision += w * cm.precision;
    m.weighted_recall += w * cm.recall;
    m.weighted_f1 += w * cm.f1;
  }
  if (!proba.empty()) {
    const size_t nc = classes.size();
    BL_CHECK(nc >= 2 && proba.size() == n * nc, "classification metrics: probabilities of ", proba.size(),
             " values for ", n, " rows and ", nc, " classes");
    BL_CHECK(std::is_sorted(classes.begin(), classes.end()), "classification metrics: classes are not ascending");
    std::vector<int64_t> truth(n);
    for (size_t i = 0; i < n; ++i) {
      truth[i] = index_of(classes, y_true[i]);
      BL_CHECK(truth[i] >= 0, "classification metrics: the true label ", y_true[i], " of row ", i,
               " (counted from 0) is not one of the model's classes");
    }
    const double eps = FLT_EPSILON;
    double loss = 0;
    for (size_t i = 0; i < n; ++i) {
      double row = 0, mine = 0;
      for (size_t c = 0; c < nc; ++c) {
        const double p = std::clamp(proba[i * nc + c], eps, 1 - eps);
        row += p;
        if (static_cast<int64_t>(c) == truth[i]) mine = p;
      }
      loss -= std::log(mine / row);
    }
    m.log_loss = loss / static_cast<double>(n);
    // AUC over the classes present in y_true (needs at least two of them).
    std::vector<bool> present(nc, false);
    for (int64_t t : truth) present[static_cast<size_t>(t)] = true;
    const int64_t n_present = std::count(present.begin(), present.end(), true);
    if (n_present >= 2) {
      std::vector<double> score(n);
      std::vector<bool> pos(n);
      if (nc == 2) {
        for (size_t i = 0; i < n; ++i) {
          score[i] = proba[i * nc + 1];
          pos[i] = truth[i] == 1;
        }
        m.roc_auc = roc_auc_binary(pos, score);
      } else if (n_present == static_cast<int64_t>(nc)) {
        double sum = 0;
        for (size_t c = 0; c < nc; ++c) {
          for (size_t i = 0; i < n; ++i) {
            score[i] = proba[i * nc + c];
            pos[i] = truth[i] == static_cast<int64_t>(c);
          }
          sum += roc_auc_binary(pos, score);
        }
        m.roc_auc = sum / static_cast<double>(nc);
      }
    }
  }
  return m;
}

RegressionMetrics regression_metrics(const std::vector<double>& y_true, const std::vector<double>& y_pred) {
  check_pairs("regression metrics", y_true, y_pred);
  const double n = static_cast<double>(y_true.size());
  double mean = 0;
  for (double v : y_true) mean += v;
  mean /= n;
  RegressionMetrics m;
  double ss_res = 0, ss_tot = 0, abs_sum = 0;
  for (size_t i = 0; i < y_true.size(); ++i) {
    const double e = y_true[i] - y_pred[i];
    ss_res += e * e;
    abs_sum += std::fabs(e);
    m.max_error = std::max(m.max_error, std::fabs(e));
    ss_tot += (y_true[i] - mean) * (y_true[i] - mean);
  }
  m.mse = ss_res / n;
  m.rmse = std::sqrt(m.mse);
  m.mae = abs_sum / n;
  m.r2 = ss_tot != 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  return m;
}

}  // namespace bl::ml
