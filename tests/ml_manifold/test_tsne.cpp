// test_tsne.cpp: tsne against float64 references built here from the definitions: the joint
// probabilities (each row's precision found by a long bisection on ln beta to the exact entropy, so
// the library's 1e-5 entropy tolerance bounds the difference) and the gradient of the KL divergence
// against central differences of the divergence itself (std::exp / std::log, another route than the
// closed form; at n_components <= 2, where scikit-learn's step is the derivative) and the closed
// form itself. Far blobs stay apart in the embedding; learning_rate=auto and the fitted state;
// identical bytes at threads 1, 2 and 3 with the sabotage arm, the state round trip and each
// refusal named. method=barnes_hut: test_tsne_barnes_hut.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml/manifold/tsne.h"
#include "ml_common/family_checks.h"
#include "ml_manifold/tsne_reference.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;

using ml_common::state_f32;

using tsne_reference::sq_dists;

// P from the definition: beta_i with entropy exactly ln(perplexity) (bisection on ln beta).
std::vector<double> joint_reference(const std::vector<double>& sq, int64_t n, double perplexity) {
  std::vector<double> c(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> others;
    for (int64_t j = 0; j < n; ++j)
      if (j != i) others.push_back(j);
    tsne_reference::conditional_row(sq, n, i, others, perplexity, c);
  }
  return tsne_reference::symmetrized(c, n);
}

// The KL divergence of the embedding y [n, k] against P, from its definition.
double kl_reference(const std::vector<double>& P, const std::vector<double>& y, int64_t n, int64_t k) {
  const double dof = std::max<double>(static_cast<double>(k - 1), 1.0);
  std::vector<double> w(static_cast<size_t>(n * n), 0.0);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double q = 0.0;
      for (int64_t t = 0; t < k; ++t) q += (y[i * k + t] - y[j * k + t]) * (y[i * k + t] - y[j * k + t]);
      w[i * n + j] = std::pow(1.0 + q / dof, -(dof + 1.0) / 2.0);
      sum += w[i * n + j];
    }
  double kl = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (j != i) kl += P[i * n + j] * std::log(P[i * n + j] / (w[i * n + j] / sum));
  return kl;
}

TEST(Tsne, JointProbabilitiesMatchTheFloat64Reference) {
  const Data x = ml_common::uniform_blobs(40, 4, 3, 3.0f, 5);
  const std::vector<double> sq = sq_dists(x);
  for (double perplexity : {5.0, 12.5}) {
    const std::vector<double> P = ml::tsne::joint_probabilities(sq, x.n, perplexity);
    const std::vector<double> ref = joint_reference(sq, x.n, perplexity);
    double total = 0.0;
    for (int64_t i = 0; i < x.n; ++i)
      for (int64_t j = 0; j < x.n; ++j) {
        total += P[i * x.n + j];
        EXPECT_EQ(P[i * x.n + j], P[j * x.n + i]);
        if (j == i) EXPECT_EQ(P[i * x.n + j], 0.0);
        else EXPECT_NEAR(P[i * x.n + j], ref[i * x.n + j], 1e-3 * ref[i * x.n + j] + 1e-15) << i << "," << j;
      }
    EXPECT_NEAR(total, 1.0, 1e-12);
  }
}

TEST(Tsne, GradientMatchesCentralDifferencesOfTheDivergence) {
  const Data x = ml_common::uniform_blobs(7, 3, 2, 2.0f, 7);
  const std::vector<double> P = ml::tsne::joint_probabilities(sq_dists(x), x.n, 3.0);
  for (int64_t k : {1, 2, 3, 4}) {
    test_rng::SplitMix64 rng(100 + static_cast<uint64_t>(k));
    std::vector<double> y(static_cast<size_t>(x.n * k));
    for (double& v : y) v = rng.uniform_pm1();
    std::vector<double> grad, w;
    const double kl = ml::tsne::kl_gradient(P, 1.0, y, x.n, k, true, grad, w);
    EXPECT_NEAR(kl, kl_reference(P, y, x.n, k), 1e-12) << "k=" << k;
    // The exaggerated divergence: 4 P against the same q.
    std::vector<double> P4(P.size());
    for (size_t t = 0; t < P.size(); ++t) P4[t] = 4.0 * P[t];
    std::vector<double> grad4;
    EXPECT_NEAR(ml::tsne::kl_gradient(P, 4.0, y, x.n, k, true, grad4, w), kl_reference(P4, y, x.n, k), 1e-11);
    EXPECT_EQ(ml::tsne::kl_gradient(P, 1.0, y, x.n, k, false, grad4, w), 0.0);
    EXPECT_EQ(grad4, grad);  // the error is optional; the gradient is the same bits
    // The closed form c sum_j (p_ij - q_ij) w_ij (y_i - y_j) with std::pow, at every k.
    const double dof = std::max<double>(static_cast<double>(k - 1), 1.0);
    std::vector<double> wr(static_cast<size_t>(x.n * x.n), 0.0);
    double sum = 0.0;
    for (int64_t i = 0; i < x.n; ++i)
      for (int64_t j = 0; j < x.n; ++j) {
        double q = 0.0;
        for (int64_t t = 0; t < k; ++t) q += (y[i * k + t] - y[j * k + t]) * (y[i * k + t] - y[j * k + t]);
        if (j != i) sum += wr[i * x.n + j] = std::pow(1.0 + q / dof, -(dof + 1.0) / 2.0);
      }
    for (int64_t i = 0; i < x.n; ++i)
      for (int64_t t = 0; t < k; ++t) {
        double g = 0.0;
        for (int64_t j = 0; j < x.n; ++j)
          if (j != i) g += (P[i * x.n + j] - wr[i * x.n + j] / sum) * wr[i * x.n + j] * (y[i * k + t] - y[j * k + t]);
        EXPECT_NEAR(grad[i * k + t], 2.0 * (dof + 1.0) / dof * g, 1e-13) << "k=" << k << " row " << i;
      }
    // At dof = 1 (k <= 2) that is the divergence's gradient; above, scikit-learn's step (the factor
    // w_ij in place of (1 + d_ij^2 / dof)^-1), not the derivative, so the differences check k <= 2.
    for (size_t t = 0; k <= 2 && t < y.size(); ++t) {
      const double h = 1e-6;
      std::vector<double> up = y, down = y;
      up[t] += h;
      down[t] -= h;
      const double fd = (kl_reference(P, up, x.n, k) - kl_reference(P, down, x.n, k)) / (2.0 * h);
      EXPECT_NEAR(grad[t], fd, 1e-7) << "k=" << k << " coordinate " << t;
    }
  }
}

TEST(Tsne, FarBlobsStayApartAndTheStateHoldsTheFit) {
  const Data x = ml_common::uniform_blobs(90, 5, 3, 8.0f, 9);
  for (const char* init : {"pca", "random"}) {
    auto est = ml::make_estimator("tsne", {{"perplexity", "10"}, {"init", init}});
    est->fit(x.X());
    const std::vector<float> z = state_f32(*est, "embedding");
    ASSERT_EQ(z.size(), 180u);
    // Each row's nearest embedded row is of its blob.
    for (int64_t i = 0; i < x.n; ++i) {
      int64_t best = -1;
      double bd = 0.0;
      for (int64_t j = 0; j < x.n; ++j) {
        if (j == i) continue;
        const double a = z[i * 2] - z[j * 2], b = z[i * 2 + 1] - z[j * 2 + 1], dd = a * a + b * b;
        if (best < 0 || dd < bd) {
          best = j;
          bd = dd;
        }
      }
      EXPECT_EQ(best % 3, i % 3) << init << " row " << i;
    }
    const nlohmann::json st = ml_common::state_of(*est);
    EXPECT_LE(st["n_iter"].get<int64_t>(), 999);
    EXPECT_GE(st["n_iter"].get<int64_t>(), 299);
    EXPECT_GT(ml_common::f64_field(st, "kl_divergence")[0], 0.0);
    EXPECT_EQ(ml_common::f64_field(st, "learning_rate_used")[0], 50.0);  // auto: max(90 / 12 / 4, 50)
    EXPECT_EQ(est->transform(x.X()).to_vector<float>(), z);
  }
  auto big = ml::make_estimator("tsne", {{"early_exaggeration", "1"}, {"max_iter", "250"}});
  big->fit(ml_common::uniform_blobs(400, 3, 2, 1.0f, 3).X());
  EXPECT_EQ(ml_common::f64_field(ml_common::state_of(*big), "learning_rate_used")[0], 100.0);  // 400 / 1 / 4
  EXPECT_EQ(ml_common::state_of(*big)["n_iter"].get<int64_t>(), 249);
}

TEST(Tsne, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data x = ml_common::uniform_blobs(200, 4, 3, 2.0f, 13), test = ml_common::uniform_blobs(30, 4, 3, 2.0f, 17);
  ml_common::expect_same_bytes_at_threads_123("tsne", {{"max_iter", "300"}}, x.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("tsne", {{"max_iter", "260"}, {"init", "random"}, {"n_components", "3"}},
                                              x.X(), Tensor(), test.X());
  ml_common::expect_input_change_moves_the_model("tsne", {{"perplexity", "5"}, {"max_iter", "250"}}, test, 3.0f);
}

TEST(Tsne, StateRoundTripAndRefusals) {
  const Data x = ml_common::uniform_blobs(40, 3, 2, 2.0f, 31);
  auto est = ml::make_estimator("tsne");
  EXPECT_NE(error_of([&] { est->transform(x.X()); }).find("before fit"), std::string::npos);
  est->fit(x.X());
  ml_common::expect_transformer_state_round_trip(*est, x.X());
  EXPECT_NE(error_of([&] { est->transform(ml_common::uniform_blobs(3, 2, 1, 0.0f, 1).X()); }).find("tsne"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("tsne", {{"method", "fast"}}); }).find("method"), std::string::npos);
  for (const auto& kv : std::vector<std::pair<std::string, std::string>>{
           {"max_iter", "249"}, {"perplexity", "0"}, {"early_exaggeration", "0.5"}, {"learning_rate", "0"},
           {"learning_rate", "fast"}, {"init", "spectral"}, {"metric", "cosine"}, {"min_grad_norm", "-1"},
           {"n_iter_without_progress", "-2"}})
    EXPECT_NE(error_of([&] { ml::make_estimator("tsne", {{kv.first, kv.second}}); }).find(kv.first), std::string::npos)
        << kv.first;
  auto wide = ml::make_estimator("tsne", {{"perplexity", "30"}});
  EXPECT_NE(error_of([&] { wide->fit(ml_common::uniform_blobs(30, 3, 2, 2.0f, 3).X()); }).find("perplexity=30"),
            std::string::npos);
  auto many = ml::make_estimator("tsne", {{"n_components", "4"}, {"perplexity", "5"}});
  EXPECT_NE(error_of([&] { many->fit(x.X()); }).find("init=pca"), std::string::npos);
  auto random4 = ml::make_estimator("tsne", {{"n_components", "4"}, {"perplexity", "5"}, {"init", "random"},
                                             {"max_iter", "250"}});
  random4->fit(x.X());
  EXPECT_EQ(random4->transform(x.X()).dim(1), 4);
}

}  // namespace
}  // namespace bl
