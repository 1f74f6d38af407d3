// hist_gbm.h: the histogram gradient boosting engine shared by the boosting estimators.
//
// Each iteration computes float32 gradients and hessians with the contract's arithmetic, quantizes
// them to int64 fixed point (per array a power-of-two scale 2^s with s chosen so that the sum of
// all |values| stays below 2^62: exact, order-free sums), and grows one tree per output group on
// integer histograms (kernels/histogram.h; the larger child's histogram is parent - smaller child,
// also exact). Split gains and leaf values are float64 functions of those integer sums, so the
// model is the same for every thread count and on CUDA. Growth is loss-guided (best gain first,
// ties to the lower node id, up to max_leaf_nodes) or depth-wise (level by level). Missing values
// (NaN) go to the side that gains more at each split (learned default direction). Symmetric growth
// (CatBoost's oblivious trees) splits every node of a level on the same (feature, bin): the one that
// maximises the sum of the nodes' gains. DART drops earlier iterations' trees while fitting a new
// one and rescales both (docs/ml-trees.md). Regression losses other than squared error
// (hgb_losses.h): absolute error and quantile (their leaf values are then replaced by the
// quantile of the leaf's residuals), Poisson, gamma and Tweedie (log link); ranking losses
// (lambdarank, pairwise) over query groups. Monotonic constraints
// bound each node's value by the mid-point of its ancestors' constrained splits; early stopping
// scores a validation set (or the training set) after every iteration.
//
// Categorical features (BoostParams::categorical): the bin is the category code; a node's split
// sends a set of categories left. The categories of the node with support H_c * n / H of at least
// kMinCatSupport (hessian sum in units of the node's mean hessian: the row count when hessians are
// constant; scikit-learn's rule; missing values count as one more category) are ordered by
// G / (H_c + kCatSmooth) (ties: lower code, missing last) and the prefixes of that order of at most
// half of them (scikit-learn's scan: (m + 1) / 2 from the low end, (m + 1) / 2 - 1 from the high
// end) are scored with the numeric gain and limits (Fisher 1958; LightGBM, scikit-learn).
// Categories of the node below the support and codes seen at fit but not in the node go right;
// codes never seen at fit and any value that is no code (negative, fractional, >= 256) go where
// missing values go.
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/tensor.h"
#include "ml/tree/tree_model.h"

namespace bl::ml {

enum class BoostLoss {
  squared_error, logistic, softmax, absolute_error, quantile, poisson, gamma, tweedie, huber,
  lambdarank, pairwise  // learning to rank (hgb_losses.h): query groups in BoostParams::query_start
};

struct BoostParams {
  BoostLoss loss = BoostLoss::squared_error;
  int64_t n_classes = 1;  // softmax: number of classes (one tree per class per iteration)
  double learning_rate = 0.1;
  int64_t max_iter = 100;
  int64_t max_leaf_nodes = 31;  // 0: unlimited
  int64_t max_depth = -1;       // -1: unlimited
  int64_t min_samples_leaf = 20;
  double min_child_weight = 1e-3;  // minimum hessian sum of a child
  double l2_regularization = 0.0;
  double l1_regularization = 0.0;
  double min_split_gain = 0.0;
  int64_t max_bins = 255;
  bool depthwise = false;
  bool symmetric = false;  // oblivious trees: one (feature, bin, NaN side) per depth level
  // DART (Rashmi & Gilad-Bachrach 2015): before each iteration every earlier iteration's trees are
  // dropped with probability rate_drop (Philox keyed by (seed, iteration)); skip_drop: probability
  // of dropping none; one_drop: drop at least one. normalize_forest: XGBoost's normalize_type=forest
  // (else tree).
  bool dart = false;
  double rate_drop = 0.1;
  double skip_drop = 0.0;
  bool one_drop = false;
  bool normalize_forest = false;
  double subsample = 1.0;         // rows per iteration (Philox)
  double colsample_bytree = 1.0;  // features per tree (Philox)
  uint64_t seed = 0;
  bool use_cuda = false;  // histograms on CUDA (needs a CUDA build)
  double quantile = 0.5;  // loss quantile: the target quantile in (0, 1)
  double power = 1.5;     // loss tweedie: the variance power in [1, 2)
  double alpha = 0.9;     // loss huber: where the loss turns from quadratic to linear (LightGBM's)
  // Ranking losses: query q holds rows [query_start[q], query_start[q + 1]) (contiguous, >= 2 rows);
  // y_value holds integer relevance labels. truncation_level: lambdarank's pairs have a higher row
  // among the top truncation_level by score; sigmoid: the pair probability's slope.
  std::vector<int64_t> query_start;
  int64_t truncation_level = 30;
  double sigmoid = 1.0;
  bool lambdarank_norm = true;  // LightGBM's lambdarank_norm: pair weights / (0.01 + |delta score|), log2 rescale
  // Per feature -1 / 0 / 1 (empty: none): a split on a constrained feature whose children's values
  // break the direction is rejected; the children's values then bound their subtrees (mid-point).
  std::vector<int8_t> monotonic;
  // Interaction constraints (empty: none): groups of feature indices; the features listed in no
  // group form one more group. A node may split on the features of the groups that hold every
  // feature its ancestors split on.
  std::vector<std::vector<int32_t>> interaction;
  // Categorical features (empty: none): feature indices whose values are NaN or integer codes in
  // [0, max_bins); a monotonic constraint on one is an error, as is grow_policy=symmetric.
  std::vector<int32_t> categorical;
  // Early stopping: after each iteration the loss on the validation rows (fit_boosting's
  // validation; none: the training rows) is recorded as a score (-loss); the fit stops once none
  // of the last n_iter_no_change scores beats the one before them by more than tol. Ranking losses
  // record instead the mean NDCG@ndcg_at over the queries (hgb_losses.h: mean_query_ndcg;
  // weighted by each query's mean row weight when there are weights, higher is better as -loss).
  bool early_stopping = false;
  int64_t n_iter_no_change = 10;
  double tol = 1e-7;
  int64_t ndcg_at = 5;
};

// Rows held out for early stopping (X [n, d], y as fit_boosting's, weight null: 1).
struct BoostValidation {
  const float* X = nullptr;
  int64_t n = 0;
  const float* y_value = nullptr;
  const int32_t* y_class = nullptr;
  const float* weight = nullptr;
  // Ranking losses: the validation rows' queries, as BoostParams::query_start (whole queries).
  std::vector<int64_t> query_start;
};

struct BoostModel {
  int64_t n_groups = 1;     // trees per iteration (classes for softmax, else 1)
  std::vector<float> base;  // initial raw score per group
  std::vector<Tree> trees;  // iteration-major: tree (i * n_groups + k)
  // Early stopping only: the score (-mean loss; ranking: mean NDCG) before the first and after each
  // iteration.
  std::vector<double> train_score, validation_score;
};

// Fits on host X [n, d] (NaN allowed). Regression reads y_value; logistic reads y_class (0/1);
// softmax reads y_class in [0, n_classes). weight: a sample weight per row (>= 0), or null: each
// row's gradient and hessian are multiplied by its weight (float32, one rounding each) and the
// initial scores are the weighted mean / class shares, as scikit-learn's sample_weight.
BoostModel fit_boosting(const float* X, int64_t n, int64_t d, const float* y_value,
                        const int32_t* y_class, const BoostParams& params, const float* weight = nullptr,
                        const BoostValidation* validation = nullptr);

// Checks the codes of params.categorical's features in X [n, d]: NaN or integers in
// [0, max_bins), else a bl::Error naming the feature, the value and the row ("<row_name> <i>").
// fit_boosting checks its training rows ("row") and validation rows ("validation row"); a caller
// that splits its rows first checks them before, so that the message counts the caller's rows.
void check_category_codes(const BoostParams& params, const float* X, int64_t n, int64_t d, const char* row_name);

// Raw scores [n * n_groups]: base + each tree's leaf value, added in tree order (float32).
std::vector<float> boosting_raw(const BoostModel& model, const float* X, int64_t n, int64_t d);

// In place: raw scores [n * k] to probabilities (k == 1: sigmoid; else softmax per row).
void raw_to_probability(std::vector<float>& raw, int64_t n, int64_t k);

}  // namespace bl::ml
