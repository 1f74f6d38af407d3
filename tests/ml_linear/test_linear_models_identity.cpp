// test_linear_models_identity.cpp: identity of the second-wave linear estimators (sgd_classifier,
// sgd_regressor, huber_regressor, quantile_regressor, poisson/gamma/tweedie_regressor,
// ard_regression, lars, lasso_lars): the model file's SHA-256 and the prediction digests are the same
// at 1, 2 and 3 CPU threads; a saved and reloaded model writes the same bytes and predicts the same
// bits; and (sabotage arm) changing one input row (each value negated) moves the model hash.
#include <gtest/gtest.h>

#include <cstring>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ops.h"
#include "contract/math.h"
#include "core/thread_pool.h"
#include "ml_test_util.h"

namespace bl {
namespace {

struct Problem {
  Tensor X, y_reg, y_bin, y_multi, y_count, y_pos;
};

Problem make_problem(int64_t n, int64_t d) {
  Problem p;
  p.X = ml_test::normal_data(n, d, 4321);
  Tensor w = ml_test::normal_data(d, 3, 77);
  std::vector<float> sv = matmul(p.X, w).to_vector<float>(), r(n), b(n), m(n), c(n), g(n);
  for (int64_t i = 0; i < n; ++i) {
    float noise = normal_element(6, 8, static_cast<uint64_t>(i));
    r[i] = sv[i * 3] + 0.5f * noise + (i % 37 == 0 ? 20.0f : 0.0f);  // a few outliers
    b[i] = sv[i * 3 + 1] + noise > 0.0f ? 1.0f : 0.0f;
    int64_t best = 0;
    for (int64_t k = 1; k < 3; ++k)
      if (sv[i * 3 + k] > sv[i * 3 + best]) best = k;
    m[i] = static_cast<float>(best + 10);  // labels 10, 11, 12
    float e = bl::exp(0.15f * sv[i * 3 + 2] + 0.1f * noise);
    c[i] = static_cast<float>(static_cast<int>(2.0f * e));  // counts >= 0
    g[i] = e;                     // positive
  }
  p.y_reg = Tensor::from_vector(r, {n});
  p.y_bin = Tensor::from_vector(b, {n});
  p.y_multi = Tensor::from_vector(m, {n});
  p.y_count = Tensor::from_vector(c, {n});
  p.y_pos = Tensor::from_vector(g, {n});
  return p;
}

struct Config {
  std::string name;
  ml::Params params;
  char target;  // 'r' regression, 'b' binary, 'm' multiclass, 'c' counts, 'g' positive
};

std::vector<Config> configs() {
  return {{"sgd_classifier", {}, 'b'},
          {"sgd_classifier", {{"loss", "log_loss"}, {"penalty", "elasticnet"}}, 'm'},
          {"sgd_classifier", {{"loss", "modified_huber"}, {"learning_rate", "invscaling"}, {"eta0", "0.05"}}, 'b'},
          {"sgd_regressor", {}, 'r'},
          {"sgd_regressor", {{"loss", "huber"}, {"penalty", "l1"}, {"learning_rate", "constant"}}, 'r'},
          {"huber_regressor", {}, 'r'},
          {"quantile_regressor", {{"quantile", "0.7"}, {"alpha", "0.01"}}, 'r'},
          {"poisson_regressor", {{"alpha", "0.1"}}, 'c'},
          {"gamma_regressor", {{"alpha", "0.1"}}, 'g'},
          {"tweedie_regressor", {{"power", "1.5"}, {"alpha", "0.1"}}, 'c'},
          {"tweedie_regressor", {{"alpha", "0.5"}}, 'r'},
          {"ard_regression", {}, 'r'},
          {"lars", {}, 'r'},
          {"lars", {{"n_nonzero_coefs", "4"}}, 'r'},
          {"lasso_lars", {{"alpha", "0.05"}}, 'r'}};
}

const Tensor& target(const Problem& p, char t) {
  switch (t) {
    case 'r': return p.y_reg;
    case 'b': return p.y_bin;
    case 'm': return p.y_multi;
    case 'c': return p.y_count;
    default: return p.y_pos;
  }
}

using Outcome = ml_test::FitDigests;

Outcome fit_once(const Config& c, const Problem& p, const Tensor& X) {
  auto est = ml::make_estimator(c.name, c.params);
  est->fit(X, target(p, c.target));
  Outcome o;
  std::string text = est->to_json_text();
  o.model_sha = ml_test::sha256_text(text);
  Tensor out = est->predict(X);
  o.predict_digest = out.digest();
  const bool proba = c.name == "sgd_classifier" && c.params.count("loss") && c.params.at("loss") == "log_loss";
  if (proba) o.predict_digest += est->predict_proba(X).digest();
  auto again = ml::estimator_from_json_text(text);
  EXPECT_EQ(again->to_json_text(), text) << c.name;
  EXPECT_EQ(again->predict(X).digest(), out.digest()) << c.name;
  if (proba) EXPECT_EQ(again->predict_proba(X).digest() + "", o.predict_digest.substr(out.digest().size())) << c.name;
  return o;
}

TEST(LinearModelsIdentity, ModelAndPredictionHashesAcrossThreads) {
  Problem p = make_problem(2003, 11);
  for (const Config& c : configs()) {
    SCOPED_TRACE(c.name);
    ml_test::expect_same_digests_across_threads(c.name, [&] { return fit_once(c, p, p.X); });
  }
}

TEST(LinearModelsIdentity, SabotageOneChangedRowMovesTheModelHash) {
  Problem p = make_problem(2003, 11);
  Tensor Xs = p.X.clone();
  float* x = Xs.data<float>();
  for (int j = 0; j < 11; ++j) {  // every value of row 0 changes sign
    uint32_t bits;
    std::memcpy(&bits, &x[j], 4);
    bits ^= 1u << 31;
    std::memcpy(&x[j], &bits, 4);
  }
  for (const Config& c : configs()) {
    SCOPED_TRACE(c.name);
    Outcome a = fit_once(c, p, p.X), b = fit_once(c, p, Xs);
    EXPECT_NE(a.model_sha, b.model_sha);
  }
}

}  // namespace
}  // namespace bl
