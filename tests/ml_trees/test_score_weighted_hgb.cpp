// Estimator::score_weighted of the histogram boosting estimators: the ranker's NDCG mean over
// queries weighted by each query's mean row weight (against a binary64 brute force with its own
// ranking and gains), all-ones weights giving score()'s bits, the same bits at 1, 2 and 3 threads;
// the classifier's weighted accuracy and the regressor's weighted R^2 against repeated rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

// nq queries of m rows: column 0 the query id, columns 1..3 Philox normals, relevance 0..3.
Dataset queries(int64_t nq, int64_t m, uint64_t seed) {
  const int64_t n = nq * m;
  std::vector<float> x(static_cast<size_t>(n * 4)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[i * 4] = static_cast<float>(7 + i / m);
    for (int64_t j = 1; j < 4; ++j) x[i * 4 + j] = bl::normal_element(seed, 1, static_cast<uint64_t>(i * 3 + j));
    const double s = x[i * 4 + 1] - 0.5 * x[i * 4 + 2] + 0.6 * bl::normal_element(seed, 2, static_cast<uint64_t>(i));
    y[i] = static_cast<float>(std::min(3.0, std::max(0.0, std::floor(s + 1.5))));
  }
  return {Tensor::from_vector(x, {n, 4}), Tensor::from_vector(y, {n})};
}

// NDCG@k of one query by sorting (score descending, ties to the lower row), gain 2^rel - 1,
// discount 1 / log2(2 + rank); an all-zero query scores 1.
double brute_ndcg(const std::vector<float>& s, const std::vector<float>& rel, int64_t k) {
  const size_t m = s.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
  std::vector<float> ideal = rel;
  std::sort(ideal.begin(), ideal.end(), [](float a, float b) { return a > b; });
  double dcg = 0.0, idcg = 0.0;
  for (size_t r = 0; r < std::min<size_t>(m, static_cast<size_t>(k)); ++r) {
    dcg += (std::pow(2.0, rel[order[r]]) - 1.0) / std::log2(2.0 + static_cast<double>(r));
    idcg += (std::pow(2.0, ideal[r]) - 1.0) / std::log2(2.0 + static_cast<double>(r));
  }
  return idcg > 0.0 ? dcg / idcg : 1.0;
}

std::vector<float> weights_of(int64_t n) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[i] = static_cast<float>((i * 7) % 5) * 0.5f;  // 0, 1.0, 2.0, 0.5, 1.5, ...
  return w;
}

TEST(ScoreWeightedHgb, RankerWeightsQueriesByTheirMeanRowWeight) {
  const int64_t nq = 23, m = 9;
  Dataset train = queries(40, m, 3), test = queries(nq, m, 4);
  auto est = make_estimator("hist_gradient_boosting_ranker",
                            {{"group_column", "0"}, {"max_iter", "15"}, {"min_samples_leaf", "4"}, {"eval_at", "4"}});
  est->fit(train.X, train.y);
  const std::vector<float> w = weights_of(nq * m);
  const double got = est->score_weighted(test.X, test.y, Tensor::from_vector(w, {nq * m}));
  const std::vector<float> pred = est->predict(test.X).to_vector<float>(), rel = test.y.to_vector<float>();
  double num = 0.0, den = 0.0, plain = 0.0;
  for (int64_t q = 0; q < nq; ++q) {
    std::vector<float> s(pred.begin() + q * m, pred.begin() + (q + 1) * m), r(rel.begin() + q * m, rel.begin() + (q + 1) * m);
    double wq = 0.0;
    for (int64_t i = 0; i < m; ++i) wq += w[q * m + i];
    wq /= static_cast<double>(m);
    const double v = brute_ndcg(s, r, 4);
    num += wq * v;
    den += wq;
    plain += v;
  }
  EXPECT_NEAR(got, num / den, 1e-12);
  EXPECT_GT(std::fabs(got - plain / nq), 1e-6) << "the weights must matter for this data";
  // All-ones weights: score()'s bits; an undefined tensor: score() itself.
  const double unweighted = est->score(test.X, test.y);
  EXPECT_EQ(est->score_weighted(test.X, test.y, Tensor::from_vector(std::vector<float>(nq * m, 1.0f), {nq * m})),
            unweighted);
  EXPECT_EQ(est->score_weighted(test.X, test.y, Tensor()), unweighted);
  EXPECT_NEAR(unweighted, plain / nq, 1e-12);
  // A query of weight 0 drops out: the same as scoring without its rows.
  std::vector<float> w0(static_cast<size_t>(nq * m), 1.0f);
  for (int64_t i = 0; i < m; ++i) w0[i] = 0.0f;  // the first query
  const std::vector<float> xs = test.X.to_vector<float>();
  const Tensor rest_X = Tensor::from_vector(std::vector<float>(xs.begin() + m * 4, xs.end()), {(nq - 1) * m, 4});
  const Tensor rest_y = Tensor::from_vector(std::vector<float>(rel.begin() + m, rel.end()), {(nq - 1) * m});
  EXPECT_NEAR(est->score_weighted(test.X, test.y, Tensor::from_vector(w0, {nq * m})), est->score(rest_X, rest_y),
              1e-15);
}

TEST(ScoreWeightedHgb, RankerSameBitsAtThreads123) {
  const int64_t nq = 31, m = 7;
  Dataset train = queries(30, m, 5), test = queries(nq, m, 6);
  auto est = make_estimator("hist_gradient_boosting_ranker",
                            {{"group_column", "0"}, {"max_iter", "10"}, {"min_samples_leaf", "3"}});
  est->fit(train.X, train.y);
  const Tensor w = Tensor::from_vector(weights_of(nq * m), {nq * m});
  const int before = bl::num_threads();
  std::vector<double> got;
  for (int t : {1, 2, 3}) {
    bl::set_num_threads(t);
    got.push_back(est->score_weighted(test.X, test.y, w));
  }
  bl::set_num_threads(before);
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(got[0], got[2]);
}

// Rows repeated by integer weights: the weighted accuracy equals the repeated rows' accuracy exactly
// (the same integers divided), the weighted R^2 to rounding.
TEST(ScoreWeightedHgb, ClassifierAndRegressorMatchRepeatedRows) {
  for (int k : {0, 3}) {
    Dataset train = make_data(300, 4, k, 21), test = make_data(80, 4, k, 22);
    auto est = make_estimator(k ? "hist_gradient_boosting_classifier" : "hist_gradient_boosting_regressor",
                              {{"max_iter", "20"}});
    est->fit(train.X, train.y);
    const std::vector<float> x = test.X.to_vector<float>(), y = test.y.to_vector<float>();
    std::vector<float> w(80), xr, yr;
    for (int64_t i = 0; i < 80; ++i) {
      w[i] = static_cast<float>(i % 4);  // 0 .. 3 copies
      for (int c = 0; c < static_cast<int>(w[i]); ++c) {
        xr.insert(xr.end(), x.begin() + i * 4, x.begin() + (i + 1) * 4);
        yr.push_back(y[i]);
      }
    }
    const int64_t nr = static_cast<int64_t>(yr.size());
    const double weighted = est->score_weighted(test.X, test.y, Tensor::from_vector(w, {80}));
    const double repeated = est->score(Tensor::from_vector(xr, {nr, 4}), Tensor::from_vector(yr, {nr}));
    if (k) EXPECT_EQ(weighted, repeated);
    else EXPECT_NEAR(weighted, repeated, 1e-12);
    EXPECT_EQ(est->score_weighted(test.X, test.y, Tensor::from_vector(std::vector<float>(80, 1.0f), {80})),
              est->score(test.X, test.y));
  }
}

TEST(ScoreWeightedHgb, RankerBadWeights) {
  Dataset train = queries(12, 6, 8);
  auto est = make_estimator("hist_gradient_boosting_ranker", {{"group_column", "0"}, {"max_iter", "3"}});
  est->fit(train.X, train.y);
  auto message = [&](const Tensor& w) {
    try {
      est->score_weighted(train.X, train.y, w);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::vector<float> neg(72, 1.0f);
  neg[5] = -1.0f;
  EXPECT_NE(message(Tensor::from_vector(neg, {72})).find(
                "hist_gradient_boosting_ranker: sample_weight holds -1 at row 5 (counted from 0)"),
            std::string::npos);
  EXPECT_NE(message(Tensor::from_vector(std::vector<float>(71, 1.0f), {71})).find("sample_weight has 71 entries but X has 72 rows"),
            std::string::npos);
  EXPECT_NE(message(Tensor::from_vector(std::vector<float>(72, 0.0f), {72})).find("sample_weight is zero for every row"),
            std::string::npos);
}

}  // namespace
}  // namespace bl::ml::testing
