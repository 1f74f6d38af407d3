// Learning to rank with histogram boosting (hist_gradient_boosting_ranker, losses lambdarank and
// pairwise): gradients against a binary64 brute force over all pairs, NDCG against hand values,
// identical model bytes at 1, 2 and 3 threads with a sabotage arm, save / load, sample weights, the chunked
// prediction loop's progress reports, early stopping on held-out whole queries (or the training
// queries) scored by mean NDCG (weighted by the queries' mean row weights with sample weights), and
// bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml/boosting/hgb_losses.h"
#include "ml/boosting/hist_gbm.h"
#include "ml/cluster/density_clustering.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

// nq queries of m rows; X [n, d + 1] holds d Philox normal features and the query id in column
// qcol; relevance 0 .. 4 from a noisy function of the features.
Dataset ranking_data(int64_t nq, int64_t m, int64_t d, int64_t qcol, uint64_t seed) {
  const int64_t n = nq * m, w = d + 1;
  std::vector<float> x(static_cast<size_t>(n * w)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float f[16];
    for (int64_t j = 0; j < d; ++j) f[j] = bl::normal_element(seed, 1, static_cast<uint64_t>(i * d + j));
    for (int64_t j = 0, c = 0; c < w; ++c) x[i * w + c] = c == qcol ? static_cast<float>(100 + i / m) : f[j++];
    const double s = 1.2 * f[0] - 0.8 * f[1 % d] * f[1 % d] + 0.5 * f[2 % d] +
                     0.4 * bl::normal_element(seed, 2, static_cast<uint64_t>(i));
    y[i] = static_cast<float>(std::min(4.0, std::max(0.0, std::floor(s + 1.5))));
  }
  return {Tensor::from_vector(x, {n, w}), Tensor::from_vector(y, {n})};
}

double disc(int64_t rank) { return 1.0 / std::log2(2.0 + static_cast<double>(rank)); }
double gain(double rel) { return std::pow(2.0, rel) - 1.0; }

// Binary64 brute force of one query's gradients: every ordered pair (a, b) with y_a > y_b, ranks by
// counting (ties to the lower row), std::exp / std::log2.
void brute_force(BoostLoss loss, const std::vector<float>& r, const std::vector<float>& y, double sigma, int64_t T,
                 bool norm, std::vector<double>& G, std::vector<double>& H) {
  const int64_t m = static_cast<int64_t>(r.size());
  G.assign(m, 0.0);
  H.assign(m, 0.0);
  std::vector<int64_t> rank(m, 0);
  for (int64_t a = 0; a < m; ++a) {
    for (int64_t b = 0; b < m; ++b) rank[a] += r[b] > r[a] || (r[b] == r[a] && b < a);
  }
  std::vector<float> ys = y;
  std::sort(ys.begin(), ys.end(), [](float p, float q) { return p > q; });
  double ideal = 0.0;
  for (int64_t k = 0; k < std::min(T, m); ++k) ideal += gain(ys[k]) * disc(k);
  const bool spread = *std::max_element(r.begin(), r.end()) != *std::min_element(r.begin(), r.end());
  double S = 0.0;
  for (int64_t a = 0; a < m; ++a) {
    for (int64_t b = 0; b < m; ++b) {
      if (!(y[a] > y[b])) continue;
      double w = 1.0;
      if (loss == BoostLoss::lambdarank) {
        if (std::min(rank[a], rank[b]) >= T) continue;
        w = (gain(y[a]) - gain(y[b])) * std::fabs(disc(rank[a]) - disc(rank[b])) / ideal;
        if (norm && spread) w /= 0.01 + std::fabs(static_cast<double>(r[a]) - r[b]);
      }
      const double rho = 1.0 / (1.0 + std::exp(sigma * (static_cast<double>(r[a]) - r[b])));
      G[a] -= sigma * rho * w;
      G[b] += sigma * rho * w;
      H[a] += sigma * sigma * rho * (1.0 - rho) * w;
      H[b] += sigma * sigma * rho * (1.0 - rho) * w;
      S += 2.0 * sigma * rho * w;
    }
  }
  if (loss == BoostLoss::lambdarank && norm && S > 0.0) {
    const double f = std::log2(1.0 + S) / S;
    for (int64_t i = 0; i < m; ++i) {
      G[i] *= f;
      H[i] *= f;
    }
  }
}

void expect_close(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 2e-7 * std::max(1.0, std::fabs(want))) << what;
}

TEST(HgbRanking, GradientsMatchBruteForce) {
  // Three queries: label ties, score ties, a query of equal scores (no lambdarank normalization by
  // |delta|), and one whose labels are all equal (no pairs: zero gradients).
  const std::vector<std::vector<float>> raws = {{0.3f, -1.2f, 0.3f, 2.0f, 0.7f, -0.1f, 0.3f},
                                                {0.5f, 0.5f, 0.5f, 0.5f},
                                                {1.0f, -2.0f, 0.25f},
                                                {0.1f, 0.9f, -0.4f, 1.7f, 0.0f, 0.2f, -1.0f, 0.6f, 3.0f, -0.3f, 0.45f}};
  const std::vector<std::vector<float>> labels = {
      {2, 0, 1, 0, 3, 1, 2}, {1, 0, 2, 0}, {1, 1, 1}, {0, 4, 1, 2, 0, 3, 1, 0, 2, 1, 31}};
  for (BoostLoss loss : {BoostLoss::pairwise, BoostLoss::lambdarank}) {
    for (double sigma : {1.0, 2.5}) {
      for (int64_t T : {3, 30}) {
        for (bool norm : {true, false}) {
          BoostParams p;
          p.loss = loss;
          p.sigmoid = sigma;
          p.truncation_level = T;
          p.lambdarank_norm = norm;
          std::vector<float> raw, y;
          p.query_start = {0};
          for (size_t q = 0; q < raws.size(); ++q) {
            raw.insert(raw.end(), raws[q].begin(), raws[q].end());
            y.insert(y.end(), labels[q].begin(), labels[q].end());
            p.query_start.push_back(static_cast<int64_t>(raw.size()));
          }
          std::vector<float> g(raw.size()), h(raw.size());
          ranking_gradients(p, raw.data(), y.data(), g.data(), h.data());
          for (size_t q = 0; q < raws.size(); ++q) {
            std::vector<double> G, H;
            brute_force(loss, raws[q], labels[q], sigma, T, norm, G, H);
            for (size_t i = 0; i < raws[q].size(); ++i) {
              const size_t at = p.query_start[q] + i;
              const std::string what = std::string(loss == BoostLoss::pairwise ? "pairwise" : "lambdarank") +
                                       " sigma " + std::to_string(sigma) + " T " + std::to_string(T) + " query " +
                                       std::to_string(q) + " row " + std::to_string(i);
              expect_close(g[at], G[i], what + " grad");
              expect_close(h[at], H[i], what + " hess");
            }
          }
          for (int64_t i = p.query_start[2]; i < p.query_start[3]; ++i) {  // equal labels: no pairs
            EXPECT_EQ(g[i], 0.0f);
            EXPECT_EQ(h[i], 0.0f);
          }
        }
      }
    }
  }
}

// Sabotage arm of the brute-force comparison: scores ranked with ties to the higher row (another
// order) give other lambdarank gradients, so the comparison can fail.
TEST(HgbRanking, GradientSabotageTieOrderIsSeen) {
  const std::vector<float> raw = {0.3f, -1.2f, 0.3f, 2.0f, 0.3f}, y = {0, 1, 2, 0, 3};
  BoostParams p;
  p.loss = BoostLoss::lambdarank;
  p.query_start = {0, 5};
  std::vector<float> g(5), h(5);
  ranking_gradients(p, raw.data(), y.data(), g.data(), h.data());
  // The same query with the tied rows renumbered in reverse: the brute force of that order differs.
  const std::vector<float> raw_r = {0.3f, -1.2f, 0.3f, 2.0f, 0.3f}, y_r = {3, 1, 2, 0, 0};
  std::vector<double> G, H;
  brute_force(BoostLoss::lambdarank, raw_r, y_r, 1.0, 30, true, G, H);
  bool differs = false;
  const int map[5] = {4, 1, 2, 3, 0};  // row i of the original is row map[i] of the reversed query
  for (int i = 0; i < 5; ++i) differs = differs || std::fabs(g[i] - G[map[i]]) > 1e-5;
  EXPECT_TRUE(differs) << "the tie order does not matter, so the comparison above proves less";
}

TEST(HgbRanking, QueryNdcgHandValues) {
  // Ranked by score: labels 3, 1, 2, 0 -> DCG@4 = 7 + 1/log2(3) + 3/log2(4) + 0; ideal 3, 2, 1, 0.
  const std::vector<float> s = {0.1f, 0.9f, 0.2f, 0.5f}, rel = {0, 3, 2, 1};
  const double dcg = 7.0 + 1.0 / std::log2(3.0) + 3.0 / 2.0;
  const double ideal = 7.0 + 3.0 / std::log2(3.0) + 1.0 / 2.0;
  EXPECT_NEAR(query_ndcg(s.data(), rel.data(), 4, 0), dcg / ideal, 1e-15);
  EXPECT_NEAR(query_ndcg(s.data(), rel.data(), 4, 2), (7.0 + 1.0 / std::log2(3.0)) / (7.0 + 3.0 / std::log2(3.0)),
              1e-15);
  EXPECT_EQ(query_ndcg(s.data(), rel.data(), 4, 1), 1.0);
  const std::vector<float> zero = {0, 0, 0, 0};
  EXPECT_EQ(query_ndcg(s.data(), zero.data(), 4, 3), 1.0);  // no relevant row: 1 (LightGBM's convention)
  const std::vector<float> tie = {0.5f, 0.5f}, rel2 = {0, 1};  // ties rank the lower row first
  EXPECT_NEAR(query_ndcg(tie.data(), rel2.data(), 2, 1), 0.0, 1e-15);
}

TEST(HgbRanking, LearnsAndScoresMeanNdcg) {
  for (const char* loss : {"lambdarank", "pairwise"}) {
    Dataset train = ranking_data(60, 15, 4, 0, 7), test = ranking_data(40, 15, 4, 0, 8);
    auto est = make_estimator("hist_gradient_boosting_ranker",
                              {{"group_column", "0"}, {"loss", loss}, {"max_iter", "30"}, {"min_samples_leaf", "5"}});
    est->fit(train.X, train.y);
    const double fitted = est->score(test.X, test.y);
    // Reference: a ranking by a random feature (the fourth, unused by the rule).
    std::vector<float> xs = test.X.to_vector<float>(), ys = test.y.to_vector<float>(), noise(15);
    double base = 0.0;
    for (int q = 0; q < 40; ++q) {
      for (int i = 0; i < 15; ++i) noise[i] = xs[(q * 15 + i) * 5 + 4];
      base += query_ndcg(noise.data(), ys.data() + q * 15, 15, 5);
    }
    base /= 40.0;
    EXPECT_GT(fitted, base + 0.15) << loss << ": NDCG@5 " << fitted << " vs random " << base;
    EXPECT_GT(fitted, 0.75) << loss;
    std::vector<float> pred = est->predict(test.X).to_vector<float>();
    double mine = 0.0;
    for (int q = 0; q < 40; ++q) mine += query_ndcg(pred.data() + q * 15, ys.data() + q * 15, 15, 5);
    EXPECT_DOUBLE_EQ(fitted, mine / 40.0) << "score is the mean NDCG@eval_at of predict";
    expect_round_trip(*est, test.X);
  }
}

TEST(HgbRanking, SameBytesAtThreads123) {
  // 70 queries so that the query tasks split differently over 1, 2 and 3 threads; the query id in
  // the last column.
  Dataset train = ranking_data(70, 13, 3, 3, 11), test = ranking_data(10, 13, 3, 3, 12);
  for (const char* loss : {"lambdarank", "pairwise"}) {
    expect_thread_identity("hist_gradient_boosting_ranker",
                           {{"group_column", "3"}, {"loss", loss}, {"max_iter", "8"}, {"subsample", "0.8"}}, train,
                           test.X, false);
  }
}

// Sabotage arm of the identity test: one relevance label changed gives other model bytes.
TEST(HgbRanking, SabotageOneLabelChangesTheModel) {
  Dataset train = ranking_data(30, 10, 3, 0, 3);
  const Params p = {{"group_column", "0"}, {"max_iter", "5"}, {"min_samples_leaf", "3"}};
  auto a = make_estimator("hist_gradient_boosting_ranker", p);
  a->fit(train.X, train.y);
  std::vector<float> y = train.y.to_vector<float>();
  y[17] = y[17] == 4.0f ? 0.0f : 4.0f;
  auto b = make_estimator("hist_gradient_boosting_ranker", p);
  b->fit(train.X, Tensor::from_vector(y, {static_cast<int64_t>(y.size())}));
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

// Sample weights multiply each row's gradient and hessian: all ones give the unweighted model's
// bytes; a weight of 0 on one query's rows differs.
TEST(HgbRanking, SampleWeights) {
  Dataset train = ranking_data(20, 10, 3, 0, 4);
  const Params p = {{"group_column", "0"}, {"max_iter", "5"}, {"min_samples_leaf", "3"}};
  auto plain = make_estimator("hist_gradient_boosting_ranker", p);
  plain->fit(train.X, train.y);
  std::vector<float> w(200, 1.0f);
  auto ones = make_estimator("hist_gradient_boosting_ranker", p);
  ones->fit_weighted(train.X, train.y, Tensor::from_vector(w, {200}));
  EXPECT_EQ(ones->to_json_text(), plain->to_json_text());
  std::fill(w.begin(), w.begin() + 10, 0.0f);
  auto zero = make_estimator("hist_gradient_boosting_ranker", p);
  zero->fit_weighted(train.X, train.y, Tensor::from_vector(w, {200}));
  EXPECT_NE(zero->to_json_text(), plain->to_json_text());
}

std::string fit_error(const Params& params, const Tensor& X, const Tensor& y) {
  try {
    make_estimator("hist_gradient_boosting_ranker", params)->fit(X, y);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HgbRanking, BadInputIsANamedError) {
  Dataset ds = ranking_data(4, 5, 2, 0, 1);
  const int64_t n = 20;
  const Params p = {{"group_column", "0"}, {"max_iter", "2"}};
  auto with_y = [&](int64_t row, float v) {
    std::vector<float> y = ds.y.to_vector<float>();
    y[row] = v;
    return Tensor::from_vector(y, {n});
  };
  auto with_id = [&](int64_t row, float v) {
    std::vector<float> x = ds.X.to_vector<float>();
    x[row * 3] = v;
    return Tensor::from_vector(x, {n, 3});
  };
  auto has = [](const std::string& msg, const char* part) {
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    EXPECT_NE(msg.find("hist_gradient_boosting_ranker"), std::string::npos) << msg;
  };
  has(fit_error(p, ds.X, with_y(3, -1.0f)), "relevance labels must be integers in 0 .. 31 (y[3] = -1)");
  has(fit_error(p, ds.X, with_y(4, 1.5f)), "relevance labels must be integers in 0 .. 31 (y[4] = 1.5)");
  has(fit_error(p, ds.X, with_y(5, 32.0f)), "(y[5] = 32)");
  has(fit_error(p, ds.X, with_y(6, std::numeric_limits<float>::quiet_NaN())), "NaN");
  has(fit_error(p, with_id(7, std::numeric_limits<float>::quiet_NaN()), ds.y), "query id of row 7 is NaN");
  // Row 19 alone: the last query becomes 4 rows and a 1-row query of id 999.
  has(fit_error(p, with_id(19, 999.0f), ds.y), "query id 999 (row 19) has a single row");
  // Row 12 (query 102) given query 100's id: 100 reappears after query 101.
  has(fit_error(p, with_id(12, 100.0f), ds.y), "query id 100 reappears at row 12");
  has(fit_error({{"max_iter", "2"}}, ds.X, ds.y), "needs the query id column: set group_column");
  has(fit_error({{"group_column", "3"}}, ds.X, ds.y), "group_column=3 but X has 3 columns");
  has(fit_error({{"group_column", "0"}, {"loss", "ndcg"}}, ds.X, ds.y), "loss=ndcg: expected lambdarank or pairwise");
  // Early stopping: whole queries are held out, so one query cannot be split; bad parameters.
  const Tensor one_query = Tensor::from_vector(std::vector<float>(20 * 3, 1.0f), {20, 3});
  has(fit_error({{"group_column", "0"}, {"early_stopping", "true"}}, one_query, ds.y),
      "early stopping with validation_fraction holds out whole queries and needs at least 2 queries (got 1)");
  has(fit_error({{"group_column", "0"}, {"early_stopping", "yes"}}, ds.X, ds.y),
      "early_stopping=yes: expected auto, true or false");
  has(fit_error({{"group_column", "0"}, {"early_stopping", "true"}, {"scoring", "loglik"}}, ds.X, ds.y),
      "scoring=loglik: expected ndcg (the mean NDCG@eval_at)");
  has(fit_error({{"group_column", "0"}, {"validation_fraction", "1"}}, ds.X, ds.y),
      "validation_fraction=1: expected a value in (0, 1) or none");
  has(fit_error({{"group_column", "0"}, {"n_iter_no_change", "0"}}, ds.X, ds.y), "n_iter_no_change=0: expected >= 1");
  has(fit_error({{"group_column", "0"}, {"early_stopping", "true"}, {"booster", "dart"}}, ds.X, ds.y),
      "early_stopping is not supported with booster=dart");
  has(fit_error({{"group_column", "0"}, {"lambdarank_truncation_level", "0"}}, ds.X, ds.y), "expected >= 1");
  has(fit_error({{"group_column", "0"}, {"sigmoid", "-1"}}, ds.X, ds.y), "sigmoid=-1: expected > 0");
  // Predict and score need the same columns as fit (the query id column included).
  auto est = make_estimator("hist_gradient_boosting_ranker", p);
  est->fit(ds.X, ds.y);
  std::string m;
  try {
    est->predict(Tensor::zeros({3, 2}));
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_FALSE(m.empty());
  m.clear();
  try {
    est->predict_proba(ds.X);
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("not supported (a ranker)"), std::string::npos) << m;
  // The other boosting estimators know no group column.
  m.clear();
  try {
    make_estimator("hist_gradient_boosting_regressor", {{"group_column", "0"}});
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("unknown parameter 'group_column'"), std::string::npos) << m;
}

// The rows of X, y whose mask entry equals keep (row order kept), X of w columns.
Dataset rows_where(const Dataset& ds, const std::vector<char>& mask, char keep) {
  const int64_t n = ds.X.dim(0), w = ds.X.dim(1);
  const std::vector<float> x = ds.X.to_vector<float>(), y = ds.y.to_vector<float>();
  std::vector<float> xo, yo;
  for (int64_t i = 0; i < n; ++i) {
    if (mask[i] != keep) continue;
    xo.insert(xo.end(), x.begin() + i * w, x.begin() + (i + 1) * w);
    yo.push_back(y[i]);
  }
  const int64_t m = static_cast<int64_t>(yo.size());
  return {Tensor::from_vector(xo, {m, w}), Tensor::from_vector(yo, {m})};
}

nlohmann::json state_of(const Estimator& est) { return nlohmann::json::parse(est.to_json_text())["state"]; }

std::vector<int64_t> starts_of(const Dataset& ds, int64_t qcol) {
  const std::vector<float> x = ds.X.to_vector<float>();
  return query_starts(x.data() + qcol, ds.X.dim(0), ds.X.dim(1), 2, "test");
}

TEST(HgbRanking, QueryValidationMaskHoldsOutWholeQueries) {
  Dataset ds = ranking_data(37, 1, 2, 0, 5);  // query sizes 2 .. 7 below
  std::vector<int64_t> qs = {0};
  for (int64_t q = 0; q < 37; ++q) qs.push_back(qs.back() + 2 + q % 6);
  for (double f : {0.1, 0.25, 0.5, 0.9}) {
    const std::vector<char> a = query_validation_mask(qs, f, 42, "test"), b = query_validation_mask(qs, f, 42, "test");
    EXPECT_EQ(a, b) << "the mask is a function of (queries, fraction, seed)";
    ASSERT_EQ(static_cast<int64_t>(a.size()), qs.back());
    int64_t held = 0;
    for (size_t q = 0; q + 1 < qs.size(); ++q) {
      for (int64_t i = qs[q]; i < qs[q + 1]; ++i) EXPECT_EQ(a[i], a[qs[q]]) << "query " << q << " is split";
      held += a[qs[q]];
    }
    EXPECT_EQ(held, static_cast<int64_t>(std::ceil(f * 37.0))) << f;
  }
  EXPECT_NE(query_validation_mask(qs, 0.3, 1, "test"), query_validation_mask(qs, 0.3, 2, "test"));
  // Two queries: one is held out however small the fraction, never both.
  const std::vector<int64_t> two = {0, 3, 5};
  for (double f : {0.01, 0.99}) {
    const std::vector<char> m = query_validation_mask(two, f, 0, "test");
    EXPECT_EQ(m[0] + m[3], 1) << f;
  }
  (void)ds;
}

TEST(HgbRanking, EarlyStoppingOnHeldOutQueries) {
  Dataset train = ranking_data(80, 12, 4, 0, 21);
  const Params common = {{"group_column", "0"}, {"learning_rate", "0.3"}, {"min_samples_leaf", "3"},
                         {"random_state", "7"}};
  Params es = common;
  es["max_iter"] = "200";
  es["early_stopping"] = "true";
  es["validation_fraction"] = "0.25";
  es["n_iter_no_change"] = "5";
  auto est = make_estimator("hist_gradient_boosting_ranker", es);
  est->fit(train.X, train.y);
  const nlohmann::json st = state_of(*est);
  const int64_t n_iter = st["n_iter"].get<int64_t>();
  EXPECT_GE(n_iter, 5);
  EXPECT_LT(n_iter, 200) << "noisy labels: the held-out NDCG stops improving";
  EXPECT_EQ(est->get_params().at("scoring"), "ndcg");
  const std::vector<double> val = density_detail::f64_from_state(st, "validation_score", n_iter + 1, "test");
  const std::vector<double> tr = density_detail::f64_from_state(st, "train_score", n_iter + 1, "test");
  // The held-out queries are those of the mask; the recorded score after the last iteration is
  // score() (mean NDCG@eval_at) of the fitted model on them, bit for bit.
  const std::vector<char> held = query_validation_mask(starts_of(train, 0), 0.25, 7, "test");
  const Dataset va = rows_where(train, held, 1), rest = rows_where(train, held, 0);
  EXPECT_EQ(va.X.dim(0) % 12, 0);
  EXPECT_EQ(val.back(), est->score(va.X, va.y));
  EXPECT_EQ(tr.back(), est->score(rest.X, rest.y));
  // The stopping rule: none of the last n_iter_no_change scores beats the one before them by tol.
  EXPECT_TRUE(boost_should_stop(val, 5, 1e-7));
  EXPECT_FALSE(boost_should_stop(std::vector<double>(val.begin(), val.end() - 1), 5, 1e-7));
  // The model is the plain fit of max_iter = n_iter iterations on the training queries.
  Params plain = common;
  plain["max_iter"] = std::to_string(n_iter);
  auto ref = make_estimator("hist_gradient_boosting_ranker", plain);
  ref->fit(rest.X, rest.y);
  const nlohmann::json rs = state_of(*ref);
  EXPECT_EQ(st["trees"], rs["trees"]);
  EXPECT_EQ(st["base"], rs["base"]);
  EXPECT_EQ(tensor_sha(est->predict(train.X)), tensor_sha(ref->predict(train.X)));
  expect_round_trip(*est, train.X);
  // Another seed holds out other queries, so another model.
  Params es2 = es;
  es2["random_state"] = "8";
  auto other = make_estimator("hist_gradient_boosting_ranker", es2);
  other->fit(train.X, train.y);
  EXPECT_NE(state_of(*other)["trees"], st["trees"]);
}

TEST(HgbRanking, EarlyStoppingOnTrainingQueries) {
  Dataset train = ranking_data(40, 10, 3, 2, 22);
  Params es = {{"group_column", "2"}, {"learning_rate", "0.5"}, {"min_samples_leaf", "2"}, {"max_iter", "300"},
               {"early_stopping", "true"}, {"validation_fraction", "none"}, {"n_iter_no_change", "4"},
               {"eval_at", "3"}};
  auto est = make_estimator("hist_gradient_boosting_ranker", es);
  est->fit(train.X, train.y);
  const nlohmann::json st = state_of(*est);
  const int64_t n_iter = st["n_iter"].get<int64_t>();
  EXPECT_LT(n_iter, 300) << "the training NDCG@3 saturates";
  EXPECT_FALSE(st.contains("validation_score"));
  const std::vector<double> tr = density_detail::f64_from_state(st, "train_score", n_iter + 1, "test");
  EXPECT_EQ(tr.back(), est->score(train.X, train.y));
  EXPECT_GT(tr.back(), tr.front());
  Params plain = es;
  plain.erase("early_stopping");
  plain.erase("validation_fraction");
  plain.erase("n_iter_no_change");
  plain["max_iter"] = std::to_string(n_iter);
  auto ref = make_estimator("hist_gradient_boosting_ranker", plain);
  ref->fit(train.X, train.y);
  EXPECT_EQ(st["trees"], state_of(*ref)["trees"]);
}

TEST(HgbRanking, EarlyStoppingSameBytesAtThreads123) {
  // 70 queries, query tasks split differently over 1, 2 and 3 threads; held-out and training scores.
  Dataset train = ranking_data(70, 13, 3, 3, 11), test = ranking_data(10, 13, 3, 3, 12);
  for (const char* frac : {"0.2", "none"}) {
    expect_thread_identity("hist_gradient_boosting_ranker",
                           {{"group_column", "3"}, {"max_iter", "60"}, {"learning_rate", "0.4"},
                            {"early_stopping", "true"}, {"validation_fraction", frac}, {"n_iter_no_change", "3"},
                            {"subsample", "0.8"}},
                           train, test.X, false);
  }
}

TEST(HgbRanking, EarlyStoppingAutoAbove10000Rows) {
  const Params p = {{"group_column", "0"}, {"max_iter", "3"}, {"early_stopping", "auto"}};
  Dataset small = ranking_data(100, 10, 2, 0, 3);  // 1000 rows: off, the bytes of early_stopping=false
  auto a = make_estimator("hist_gradient_boosting_ranker", p);
  a->fit(small.X, small.y);
  EXPECT_FALSE(state_of(*a).contains("train_score"));
  auto off = make_estimator("hist_gradient_boosting_ranker", {{"group_column", "0"}, {"max_iter", "3"}});
  off->fit(small.X, small.y);
  EXPECT_EQ(state_of(*a)["trees"], state_of(*off)["trees"]);
  Dataset big = ranking_data(1001, 10, 2, 0, 3);  // 10010 rows: on
  auto b = make_estimator("hist_gradient_boosting_ranker", p);
  b->fit(big.X, big.y);
  const nlohmann::json st = state_of(*b);
  EXPECT_TRUE(st.contains("validation_score"));
  EXPECT_EQ(density_detail::f64_from_state(st, "validation_score", st["n_iter"].get<int64_t>() + 1, "test").size(),
            static_cast<size_t>(st["n_iter"].get<int64_t>() + 1));
}

// The weighted mean NDCG (early stopping with sample weights): query weight = the mean of its rows'
// weights (LightGBM's query weights), sum_q ndcg_q w_q / sum_q w_q in binary64.
TEST(HgbRanking, WeightedMeanNdcgOverQueries) {
  Dataset ds = ranking_data(9, 1, 2, 0, 31);  // only the scores / labels below matter
  const std::vector<int64_t> qs = {0, 4, 7, 12, 14, 20};
  const int64_t n = qs.back(), nq = 5;
  std::vector<float> score(n), rel(n), w(n);
  for (int64_t i = 0; i < n; ++i) {
    score[i] = bl::normal_element(5, 1, static_cast<uint64_t>(i));
    rel[i] = static_cast<float>((i * 7 + 3) % 5);
    w[i] = 0.25f * static_cast<float>(1 + (i * 5) % 7);
  }
  const double plain = mean_query_ndcg(score.data(), rel.data(), qs, 3);
  const std::vector<float> ones(n, 1.0f);
  EXPECT_EQ(mean_query_ndcg(score.data(), rel.data(), qs, 3, ones.data()), plain) << "all ones: the unweighted bits";
  // Hand value (binary64, the same order).
  double s = 0.0, t = 0.0;
  for (int64_t q = 0; q < nq; ++q) {
    double wq = 0.0;
    for (int64_t i = qs[q]; i < qs[q + 1]; ++i) wq += w[i];
    wq /= static_cast<double>(qs[q + 1] - qs[q]);
    s += query_ndcg(score.data() + qs[q], rel.data() + qs[q], qs[q + 1] - qs[q], 3) * wq;
    t += wq;
  }
  const double weighted = mean_query_ndcg(score.data(), rel.data(), qs, 3, w.data());
  EXPECT_EQ(weighted, s / t);
  EXPECT_NE(weighted, plain) << "the weights above must matter, else this test proves less";
  // Doubling every weight: the same bits (a power of two scales every sum exactly).
  std::vector<float> w2 = w;
  for (float& v : w2) v *= 2.0f;
  EXPECT_EQ(mean_query_ndcg(score.data(), rel.data(), qs, 3, w2.data()), weighted);
  // Rows within a query may carry different weights: only their mean counts.
  std::vector<float> shuffled = w;
  std::swap(shuffled[qs[2]], shuffled[qs[2] + 3]);
  EXPECT_EQ(mean_query_ndcg(score.data(), rel.data(), qs, 3, shuffled.data()), weighted);
  // A query whose rows all weigh 0 does not count: ones elsewhere give the unweighted mean of the
  // other queries, bit for bit, whatever that query's scores and labels.
  std::vector<float> z(n, 1.0f), rel_z = rel, score_z = score;
  for (int64_t i = qs[1]; i < qs[2]; ++i) {
    z[i] = 0.0f;
    rel_z[i] = 4.0f - rel_z[i];
    score_z[i] = -score_z[i];
  }
  std::vector<float> sc_rest, rel_rest;
  std::vector<int64_t> qs_rest = {0};
  for (int64_t q = 0; q < nq; ++q) {
    if (q == 1) continue;
    sc_rest.insert(sc_rest.end(), score.begin() + qs[q], score.begin() + qs[q + 1]);
    rel_rest.insert(rel_rest.end(), rel.begin() + qs[q], rel.begin() + qs[q + 1]);
    qs_rest.push_back(qs_rest.back() + qs[q + 1] - qs[q]);
  }
  const double rest = mean_query_ndcg(sc_rest.data(), rel_rest.data(), qs_rest, 3);
  EXPECT_EQ(mean_query_ndcg(score.data(), rel.data(), qs, 3, z.data()), rest);
  EXPECT_EQ(mean_query_ndcg(score_z.data(), rel_z.data(), qs, 3, z.data()), rest);
  // Every weight 0: a named error, not NaN.
  const std::vector<float> zeros(n, 0.0f);
  std::string m;
  try {
    mean_query_ndcg(score.data(), rel.data(), qs, 3, zeros.data());
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("sample weights summing to 0"), std::string::npos) << m;
  (void)ds;
}

// Early stopping of a weighted fit scores the weighted mean NDCG of the held-out (or training) queries.
TEST(HgbRanking, EarlyStoppingWithSampleWeights) {
  Dataset train = ranking_data(80, 12, 4, 0, 21);
  const int64_t n = train.X.dim(0);
  Params es = {{"group_column", "0"}, {"learning_rate", "0.3"}, {"min_samples_leaf", "3"}, {"random_state", "7"},
               {"max_iter", "200"}, {"early_stopping", "true"}, {"validation_fraction", "0.25"},
               {"n_iter_no_change", "5"}};
  auto fit_w = [&](const Params& p, const Dataset& ds, const std::vector<float>& w) {
    auto est = make_estimator("hist_gradient_boosting_ranker", p);
    est->fit_weighted(ds.X, ds.y, Tensor::from_vector(w, {static_cast<int64_t>(w.size())}));
    return est;
  };
  // All-ones weights: the unweighted model's bytes, scores included, held out or not.
  for (const char* frac : {"0.25", "none"}) {
    Params p = es;
    p["validation_fraction"] = frac;
    auto plain = make_estimator("hist_gradient_boosting_ranker", p);
    plain->fit(train.X, train.y);
    EXPECT_TRUE(fit_w(p, train, std::vector<float>(n, 1.0f))->to_json_text() == plain->to_json_text()) << frac;
  }
  auto plain = make_estimator("hist_gradient_boosting_ranker", es);
  plain->fit(train.X, train.y);
  const nlohmann::json ps = state_of(*plain);
  // Weights 1 on the training queries and uneven on the held-out ones: the same trees, other
  // validation scores, each the weighted mean NDCG of the model so far.
  const std::vector<int64_t> qs = starts_of(train, 0);
  const std::vector<char> held = query_validation_mask(qs, 0.25, 7, "test");
  std::vector<float> w(n, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    if (held[i]) w[i] = 0.5f * static_cast<float>(1 + (i / 12) % 5);
  }
  auto weighted = fit_w(es, train, w);
  const nlohmann::json st = state_of(*weighted);
  const int64_t n_iter = st["n_iter"].get<int64_t>();
  const std::vector<double> val = density_detail::f64_from_state(st, "validation_score", n_iter + 1, "test");
  const std::vector<double> pval =
      density_detail::f64_from_state(ps, "validation_score", ps["n_iter"].get<int64_t>() + 1, "test");
  const std::vector<double> tr = density_detail::f64_from_state(st, "train_score", n_iter + 1, "test");
  const std::vector<double> ptr =
      density_detail::f64_from_state(ps, "train_score", ps["n_iter"].get<int64_t>() + 1, "test");
  EXPECT_NE(val.front(), pval.front()) << "the held-out weights must change the held-out score";
  const int64_t common = std::min<int64_t>(n_iter, ps["n_iter"].get<int64_t>());
  for (int64_t t = 0; t <= common; ++t) EXPECT_EQ(tr[t], ptr[t]) << "training queries weigh 1: iteration " << t;
  for (int64_t t = 0; t < common; ++t) EXPECT_EQ(st["trees"][t], ps["trees"][t]) << "tree " << t;
  const Dataset va = rows_where(train, held, 1);
  std::vector<float> wva;
  for (int64_t i = 0; i < n; ++i) {
    if (held[i]) wva.push_back(w[i]);
  }
  const std::vector<float> pred = weighted->predict(va.X).to_vector<float>(), yva = va.y.to_vector<float>();
  EXPECT_EQ(val.back(), mean_query_ndcg(pred.data(), yva.data(), starts_of(va, 0), 5, wva.data()));
  EXPECT_TRUE(boost_should_stop(val, 5, 1e-7));
  // A held-out query whose rows weigh 0 does not influence the fit: other labels there, same bytes.
  int64_t q0 = -1;
  for (size_t q = 0; q + 1 < qs.size() && q0 < 0; ++q) {
    if (held[qs[q]]) q0 = static_cast<int64_t>(q);
  }
  ASSERT_GE(q0, 0);
  std::vector<float> wz = w, y2 = train.y.to_vector<float>();
  for (int64_t i = qs[q0]; i < qs[q0 + 1]; ++i) {
    wz[i] = 0.0f;
    y2[i] = 4.0f - y2[i];
  }
  const Dataset flipped = {train.X, Tensor::from_vector(y2, {n})};
  const std::string a = fit_w(es, train, wz)->to_json_text();
  EXPECT_TRUE(fit_w(es, flipped, wz)->to_json_text() == a);
  EXPECT_TRUE(fit_w(es, flipped, w)->to_json_text() != fit_w(es, train, w)->to_json_text())
      << "with its weight the query's labels count, else the line above proves less";
  // Every held-out query weighing 0: a named error.
  std::vector<float> wh(n, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    if (held[i]) wh[i] = 0.0f;
  }
  std::string m;
  try {
    fit_w(es, train, wh);
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("hist_gradient_boosting_ranker: early stopping: every held-out query"), std::string::npos) << m;
  for (int64_t i = 0; i < n; ++i) wh[i] = held[i] ? 1.0f : 0.0f;  // and every training query
  m.clear();
  try {
    fit_w(es, train, wh);
  } catch (const Error& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("hist_gradient_boosting_ranker: early stopping: every training query"), std::string::npos) << m;
  // Threads 1, 2 and 3: the same bytes, held out and on the training queries.
  for (const char* frac : {"0.25", "none"}) {
    Params p = es;
    p["validation_fraction"] = frac;
    const int before = num_threads();
    std::string first;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const std::string text = fit_w(p, train, w)->to_json_text();
      if (threads == 1) first = text;
      EXPECT_TRUE(text == first) << frac << " threads " << threads;
    }
    set_num_threads(before);
  }
}

TEST(HgbRanking, ChunkedPredictionReportsProgressAndKeepsBits) {
  // More rows than one prediction block (64 row chunks of 4096): the loop reports per block, and
  // every row's score is the same sum as a row predicted alone.
  const int64_t n = 64 * 4096 + 1000;
  Dataset small = make_data(400, 2, 0, 5);
  BoostParams p;
  p.max_iter = 5;
  BoostModel model = fit_boosting(small.X.to_vector<float>().data(), 400, 2, small.y.to_vector<float>().data(),
                                  nullptr, p);
  std::vector<float> x(static_cast<size_t>(n * 2));
  for (int64_t i = 0; i < n * 2; ++i) x[i] = bl::normal_element(9, 1, static_cast<uint64_t>(i));
  std::vector<std::pair<int64_t, int64_t>> reports;
  set_progress_listener([&](const std::string& stage, int64_t done, int64_t total) {
    if (stage == "boosting predict rows") reports.push_back({done, total});
  });
  const std::vector<float> all = boosting_raw(model, x.data(), n, 2);
  set_progress_listener(nullptr);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0], std::make_pair(int64_t{64 * 4096}, n));
  EXPECT_EQ(reports[1], std::make_pair(n, n));
  for (int64_t i : {int64_t{0}, int64_t{4095}, int64_t{64 * 4096 - 1}, int64_t{64 * 4096}, n - 1}) {
    const std::vector<float> one = boosting_raw(model, x.data() + i * 2, 1, 2);
    EXPECT_EQ(one[0], all[i]) << "row " << i;
  }
}

}  // namespace
}  // namespace bl::ml::testing
