// test_ml_identity.cpp: conformance of the linear, cluster, neighbors and decomposition estimators:
// the model file's SHA-256 and the prediction digests are the same at 1, 2 and 3 CPU threads, a
// saved and reloaded model writes the same bytes and predicts the same bits, and (sabotage arm) a
// one-ulp change of one input value moves the model hash, so the comparison can fail.
#include <gtest/gtest.h>

#include <cstring>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ops.h"
#include "core/thread_pool.h"
#include "ml_test_util.h"

namespace bl {
namespace {

struct Problem {
  Tensor X, y_reg, y_bin, y_multi;
};

Problem make_problem(int64_t n, int64_t d) {
  Problem p;
  p.X = ml_test::normal_data(n, d, 1234);
  Tensor w = ml_test::normal_data(d, 3, 99);
  Tensor s = matmul(p.X, w);  // [n, 3]
  std::vector<float> sv = s.to_vector<float>(), r(n), b(n), m(n);
  for (int64_t i = 0; i < n; ++i) {
    float noise = normal_element(5, 8, static_cast<uint64_t>(i));
    r[i] = sv[i * 3] + 0.5f * noise;
    b[i] = sv[i * 3 + 1] + noise > 0.0f ? 1.0f : 0.0f;
    int64_t best = 0;
    for (int64_t k = 1; k < 3; ++k)
      if (sv[i * 3 + k] > sv[i * 3 + best]) best = k;
    m[i] = static_cast<float>(best + 10);  // labels 10, 11, 12
  }
  p.y_reg = Tensor::from_vector(r, {n});
  p.y_bin = Tensor::from_vector(b, {n});
  p.y_multi = Tensor::from_vector(m, {n});
  return p;
}

struct Config {
  std::string name;
  ml::Params params;
  char target;  // 'r' regression, 'b' binary, 'm' multiclass, 'u' unsupervised
};

std::vector<Config> configs() {
  return {{"linear_regression", {}, 'r'},
          {"ridge", {{"alpha", "3"}}, 'r'},
          {"lasso", {{"alpha", "0.05"}}, 'r'},
          {"elastic_net", {{"alpha", "0.05"}, {"l1_ratio", "0.3"}}, 'r'},
          {"bayesian_ridge", {}, 'r'},
          {"logistic_regression", {}, 'b'},
          {"logistic_regression", {{"penalty", "l1"}, {"C", "0.5"}}, 'b'},
          {"logistic_regression", {{"C", "2"}}, 'm'},
          {"kmeans", {{"n_clusters", "5"}}, 'u'},
          {"kmeans", {{"n_clusters", "4"}, {"init", "random"}}, 'u'},
          {"minibatch_kmeans", {{"n_clusters", "5"}, {"batch_size", "256"}, {"max_iter", "3"}}, 'u'},
          {"kneighbors_classifier", {{"n_neighbors", "7"}}, 'm'},
          {"kneighbors_classifier", {{"n_neighbors", "4"}, {"weights", "distance"}}, 'b'},
          {"kneighbors_regressor", {{"n_neighbors", "5"}}, 'r'},
          {"pca", {{"n_components", "5"}}, 'u'},
          {"pca", {{"whiten", "true"}}, 'u'}};
}

using Outcome = ml_test::FitDigests;

Outcome fit_once(const Config& c, const Problem& p, const Tensor& X) {
  auto est = ml::make_estimator(c.name, c.params);
  const Tensor& y = c.target == 'r' ? p.y_reg : c.target == 'b' ? p.y_bin : p.y_multi;
  if (c.target == 'u') est->fit(X);
  else est->fit(X, y);
  Outcome o;
  std::string text = est->to_json_text();
  o.model_sha = ml_test::sha256_text(text);
  Tensor out = c.name == "pca" ? est->transform(X) : est->predict(X);
  o.predict_digest = out.digest();
  if (c.name == "logistic_regression" || c.name == "kneighbors_classifier")
    o.predict_digest += est->predict_proba(X).digest();
  if (c.name == "kmeans") o.predict_digest += est->transform(X).digest();
  // Reloaded: same bytes, same predictions.
  auto again = ml::estimator_from_json_text(text);
  EXPECT_EQ(again->to_json_text(), text) << c.name;
  Tensor out2 = c.name == "pca" ? again->transform(X) : again->predict(X);
  EXPECT_EQ(out2.digest(), out.digest()) << c.name;
  return o;
}

TEST(MlIdentity, ModelAndPredictionHashesAcrossThreads) {
  Problem p = make_problem(3001, 13);
  for (const Config& c : configs()) {
    SCOPED_TRACE(c.name);
    ml_test::expect_same_digests_across_threads(c.name, [&] { return fit_once(c, p, p.X); });
  }
}

TEST(MlIdentity, SabotageOneChangedValueMovesTheModelHash) {
  Problem p = make_problem(3001, 13);
  Tensor Xs = p.X.clone();
  float* x = Xs.data<float>();
  uint32_t bits;
  std::memcpy(&bits, &x[7], 4);
  bits ^= 1u << 23;  // the value doubles or halves
  std::memcpy(&x[7], &bits, 4);
  for (const Config& c : configs()) {
    if (c.name == "kneighbors_classifier" || c.name == "kneighbors_regressor") continue;  // stores X verbatim
    SCOPED_TRACE(c.name);
    Outcome a = fit_once(c, p, p.X), b = fit_once(c, p, Xs);
    EXPECT_NE(a.model_sha, b.model_sha);
  }
}

}  // namespace
}  // namespace bl
