// hgb_losses.h: the regression losses of histogram boosting beyond squared error, the losses'
// values for early stopping, and the validation split.
//
// Raw scores r are float32; the link is the identity (absolute_error, quantile) or the log
// (poisson, gamma, tweedie: the prediction is exp(r)). Gradients and hessians per row, float32
// contract arithmetic (exp through math_map_cpu, bl::exp's bits):
//   absolute_error  g = sign(r - y)                        h = 1
//   quantile q      g = -q if y >= r else 1 - q            h = 1
//   poisson         g = e^r - y                            h = e^r
//   gamma           g = 1 - y e^-r                         h = y e^-r
//   tweedie p       g = e^((2-p) r) - y e^((1-p) r)        h = (2-p) e^((2-p) r) - (1-p) y e^((1-p) r)
//   huber a         g = r - y clipped to [-a, a]           h = 1 (LightGBM's objective=huber)
// Initial scores: the (weighted) median / q-quantile of y, the weighted mean of y (huber), or log of
// the weighted mean of y (binary64, log64). Absolute error and quantile replace each leaf's value
// by learning_rate times the median / q-quantile of y - r over the leaf's rows (float32 residuals
// sorted by value, then row): unweighted, linear interpolation between order statistics; weighted,
// the smallest residual of positive weight whose cumulative weight reaches q times the total.
// Ranking (y: integer relevance labels 0 .. 31, gain 2^y - 1; queries: BoostParams::query_start),
// per query in binary64 (exp64 / log64), each row's sums in a fixed pair order, rounded to float32
// once; queries run as parallel tasks writing their own rows. rho(s) = 1 / (1 + e^(sigma s)):
//   pairwise   (RankNet) every pair a < b of unequal labels, in row order, high: the more relevant,
//              s = r_high - r_low: g_high -= sigma rho, g_low += sigma rho, h += sigma^2 rho (1 - rho)
//   lambdarank (LambdaMART, LightGBM's objective) rows ranked by raw score descending (ties: lower
//              row first); pairs (i, j), i < j in rank order, i < truncation_level, unequal labels;
//              the pair's terms times |delta NDCG| = |gain_high - gain_low| |1/log2(2+i) -
//              1/log2(2+j)| / maxDCG@truncation_level; with lambdarank_norm (and raw scores not all
//              equal) also / (0.01 + |s|), and each query's g, h times log2(1 + S) / S, S the sum of
//              2 sigma rho |delta NDCG| over its pairs.
// Initial score 0. Early-stopping losses are the half losses, in binary64 (exp64 / log64) per row, weighted means
// summed over fixed row chunks in chunk order.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ml/boosting/hist_gbm.h"

namespace bl::ml {

bool boost_log_link(BoostLoss loss);
bool boost_updates_leaves(BoostLoss loss);  // absolute_error, quantile

// Refuses targets outside the loss's domain (poisson, tweedie: y >= 0 with a positive sum; gamma:
// y > 0), naming est.
void check_boost_targets(const BoostParams& p, const float* y, int64_t n, const std::string& est);

// The initial raw score of a regression loss other than squared error.
float regression_initial_score(const BoostParams& p, const float* y, const float* weight, int64_t n);

// grad / hess of the regression loss at raw for rows [0, n) (scratch: 2n floats for the exps).
void regression_gradients(const BoostParams& p, const float* raw, const float* y, int64_t n, float* grad,
                          float* hess, std::vector<float>& scratch);

// The q-quantile of the values (sorted here by value, then by the row in .second), as above.
double residual_quantile(std::vector<std::pair<float, int32_t>>& values, const float* weight, double q);

// -(weighted mean loss) of raw [n * K] (K: 1, or the classes for softmax).
double boost_score(const BoostParams& p, int64_t K, const float* raw, const float* y_value, const int32_t* y_class,
                   const float* weight, int64_t n);

bool boost_ranking(BoostLoss loss);  // lambdarank, pairwise

// grad / hess of a ranking loss at raw (rows [0, query_start.back())), as above.
void ranking_gradients(const BoostParams& p, const float* raw, const float* y, float* grad, float* hess);

// NDCG@k of one query of m rows (k <= 0: all rows): rows ranked by score descending, ties to the
// lower row; gain 2^rel - 1, discount 1 / log2(2 + rank); a query whose ideal DCG is 0 scores 1
// (LightGBM's convention). Binary64.
double query_ndcg(const float* score, const float* rel, int64_t m, int64_t k);

// The mean NDCG@k (query_ndcg) over the queries [query_start[q], query_start[q + 1]) of score: the
// queries' values computed as parallel tasks, added in query order in binary64 and divided by their
// count, so every thread count gives the same bits. The ranker's score() and its early-stopping score.
// With weight (one per row; null: unweighted) it is the weighted mean over queries, a query's weight
// being the mean of its rows' weights (LightGBM's query weights for ranking metrics), in binary64:
// sum_q ndcg_q * w_q / sum_q w_q. All-ones weights give the unweighted bits; a query of weight 0 adds
// nothing; weights summing to 0 are an error.
double mean_query_ndcg(const float* score, const float* rel, const std::vector<int64_t>& query_start, int64_t k,
                       const float* weight = nullptr);

// The ranker's early-stopping split, in whole queries: of the Q queries (Q >= 2, else an error naming
// est) the ceil(fraction * Q) (clamped to 1 .. Q - 1) of the smallest Philox keys (seed, query index)
// are held out. validation_fraction is thus a share of the queries, as scikit-learn's
// GroupShuffleSplit(test_size). Returns a row mask (1: validation), constant over each query.
std::vector<char> query_validation_mask(const std::vector<int64_t>& query_start, double fraction, uint64_t seed,
                                        const std::string& est);

// Query starts of a query-id column (n values, stride apart): runs of equal ids, each id's rows
// contiguous; refuses NaN ids, an id that reappears after another query and (min_rows 2) a
// single-row query, naming est.
std::vector<int64_t> query_starts(const float* ids, int64_t n, int64_t stride, int64_t min_rows,
                                  const std::string& est);

// Refuses relevance labels that are not integers in 0 .. 31, naming est.
void check_relevance(const float* y, int64_t n, const std::string& est);

// scikit-learn's rule: stop when none of the last n_iter_no_change scores exceeds the score before
// them plus tol.
bool boost_should_stop(const std::vector<double>& scores, int64_t n_iter_no_change, double tol);

// Validation rows: ceil(fraction * n) of [0, n), per class in proportion (stratified when classes
// are given; remainders to the largest fractional shares, ties to the lower class), within a class
// the rows of the smallest Philox keys (seed, row). Returns a mask (1: validation).
std::vector<char> validation_mask(int64_t n, const int32_t* y_class, int64_t n_classes, double fraction,
                                  uint64_t seed);

}  // namespace bl::ml
