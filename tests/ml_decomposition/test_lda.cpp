// test_lda.cpp: latent_dirichlet_allocation against a float64 reference written here (std:: math and
// an independent digamma): the E-step of transform and the approximate bound (score) given the fitted
// binary64 components; a sabotage arm (components moved by one part in 1e2 leave the reference
// tolerance); topic recovery on counts drawn from three disjoint topics; identical bytes at threads 1,
// 2 and 3; a changed input moves the model; the state round trip; the refusals named (negative counts,
// non-positive priors, bad states). learning_method=online: with learning_decay=0 and one mini-batch it
// is the batch method to the bit; two one-step fits with other decays pin the update
// lambda = (1 - rho) lambda + rho (eta + S) with rho = (learning_offset + 1)^-learning_decay (sabotage:
// rho from n_batch_iter 0 does not fit); identical bytes at threads 1, 2 and 3 over several
// mini-batches; the training perplexity within a few percent of the batch method's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::expect_refusal_names;

const char* const kName = "latent_dirichlet_allocation";

// n documents over 3 topics of 4 words each (topic t owns words 4t .. 4t+3, plus 2 rare shared words):
// document i leans on topic i % 3; counts are small integers drawn from SplitMix64(seed).
Data topic_counts(int64_t n, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  const int64_t d = 14;
  std::vector<float> x(static_cast<size_t>(n * d), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t w = 0; w < 30; ++w) {
      const uint64_t r = rng.next();
      const int64_t topic = (r >> 60) < 12 ? i % 3 : static_cast<int64_t>((r >> 20) % 3);
      const int64_t word = (r >> 40) % 16 == 0 ? 12 + static_cast<int64_t>((r >> 10) % 2)
                                                : 4 * topic + static_cast<int64_t>((r >> 30) % 4);
      x[i * d + word] += 1.0f;
    }
  return ml_common::host_table(n, d, std::move(x));
}

double digamma_ref(double x) {
  double r = 0.0;
  while (x < 8.0) {
    r -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

std::vector<double> exp_dirichlet(const std::vector<double>& a) {
  double s = 0.0;
  for (double v : a) s += v;
  std::vector<double> out(a.size());
  for (size_t t = 0; t < a.size(); ++t) out[t] = std::exp(digamma_ref(a[t]) - digamma_ref(s));
  return out;
}

struct Reference {
  std::vector<double> gamma;  // [n, k] unnormalized
  double bound = 0.0;
};

// The variational E-step from ones for every document and the approximate bound, in float64.
Reference reference(const Data& x, const std::vector<double>& lambda, int64_t k, double alpha, double eta) {
  const int64_t n = x.n, d = x.d;
  std::vector<double> eb(lambda.size()), elb(lambda.size());
  for (int64_t t = 0; t < k; ++t) {
    std::vector<double> row(lambda.begin() + t * d, lambda.begin() + (t + 1) * d);
    std::vector<double> e = exp_dirichlet(row);
    for (int64_t j = 0; j < d; ++j) {
      eb[t * d + j] = e[j];
      elb[t * d + j] = std::log(e[j]);
    }
  }
  Reference ref;
  ref.gamma.assign(static_cast<size_t>(n * k), 1.0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> g(static_cast<size_t>(k), 1.0), et = exp_dirichlet(g);
    for (int it = 0; it < 100; ++it) {
      std::vector<double> ng(static_cast<size_t>(k), 0.0);
      for (int64_t j = 0; j < d; ++j) {
        const double c = x.x[i * d + j];
        if (c == 0.0) continue;
        double phi = 2.220446049250313e-16;
        for (int64_t t = 0; t < k; ++t) phi += et[t] * eb[t * d + j];
        for (int64_t t = 0; t < k; ++t) ng[t] += c / phi * eb[t * d + j];
      }
      double change = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        ng[t] = et[t] * ng[t] + alpha;
        change += std::fabs(ng[t] - g[t]);
      }
      g = ng;
      et = exp_dirichlet(g);
      if (change / static_cast<double>(k) < 1e-3) break;
    }
    std::copy(g.begin(), g.end(), ref.gamma.begin() + i * k);
    std::vector<double> elt(static_cast<size_t>(k));
    double gs = 0.0;
    for (int64_t t = 0; t < k; ++t) {
      elt[t] = std::log(et[t]);
      gs += g[t];
      ref.bound += (alpha - g[t]) * elt[t] + std::lgamma(g[t]) - std::lgamma(alpha);
    }
    ref.bound += std::lgamma(alpha * static_cast<double>(k)) - std::lgamma(gs);
    for (int64_t j = 0; j < d; ++j) {
      const double c = x.x[i * d + j];
      if (c == 0.0) continue;
      double z = 0.0;
      for (int64_t t = 0; t < k; ++t) z += std::exp(elt[t] + elb[t * d + j]);
      ref.bound += c * std::log(z);
    }
  }
  for (int64_t t = 0; t < k; ++t) {
    double ls = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      const double l = lambda[t * d + j];
      ls += l;
      ref.bound += (eta - l) * elb[t * d + j] + std::lgamma(l) - std::lgamma(eta);
    }
    ref.bound += std::lgamma(eta * static_cast<double>(d)) - std::lgamma(ls);
  }
  return ref;
}

// The largest |transform - normalized reference gamma|.
double transform_gap(const ml::Estimator& est, const Data& x, const Reference& ref, int64_t k) {
  const std::vector<float> got = ml_common::transform_of(est, x);
  double gap = 0.0;
  for (int64_t i = 0; i < x.n; ++i) {
    double s = 0.0;
    for (int64_t t = 0; t < k; ++t) s += ref.gamma[i * k + t];
    for (int64_t t = 0; t < k; ++t) gap = std::max(gap, std::fabs(got[i * k + t] - ref.gamma[i * k + t] / s));
  }
  return gap;
}

TEST(LatentDirichletAllocation, EStepAndBoundMatchTheFloat64Reference) {
  const Data x = topic_counts(20, 7);
  for (const char* iters : {"1", "5"}) {
    auto est = ml::make_estimator(kName, {{"n_components", "3"}, {"max_iter", iters}});
    est->fit(x.X());
    const nlohmann::json st = ml_common::state_of(*est);
    const std::vector<double> lambda = ml_common::f64_field(st, "components_f64");
    const Reference ref = reference(x, lambda, 3, 1.0 / 3, 1.0 / 3);
    EXPECT_LT(transform_gap(*est, x, ref, 3), 2e-6) << iters;
    EXPECT_NEAR(est->score(x.X(), Tensor()), ref.bound, 1e-9 * std::fabs(ref.bound)) << iters;
    double total = 0.0;
    for (float v : x.x) total += v;
    // bound_ is the training perplexity exp(-bound / total) of the final model.
    EXPECT_NEAR(ml_common::state_f32(*est, "bound")[0], std::exp(-ref.bound / total), 1e-5 * std::exp(-ref.bound / total));
    // Sabotage: components moved by one part in 1e2 give a reference that the transform leaves.
    std::vector<double> moved = lambda;
    for (size_t i = 0; i < moved.size(); i += 2) moved[i] *= 1.01;
    EXPECT_GT(transform_gap(*est, x, reference(x, moved, 3, 1.0 / 3, 1.0 / 3), 3), 2e-5) << iters;
  }
}

TEST(LatentDirichletAllocation, RecoversDisjointTopics) {
  const Data x = topic_counts(150, 11);
  auto est = ml::make_estimator(kName, {{"n_components", "3"}, {"max_iter", "30"}});
  est->fit(x.X());
  const std::vector<float> c = ml_common::state_f32(*est, "components");
  std::vector<int> owner(3, -1);
  for (int64_t t = 0; t < 3; ++t) {
    // The topic's mass is concentrated on one block of 4 words.
    double best = 0.0, total = 0.0;
    for (int64_t b = 0; b < 3; ++b) {
      double m = 0.0;
      for (int64_t j = 4 * b; j < 4 * b + 4; ++j) m += c[t * 14 + j];
      if (m > best) {
        best = m;
        owner[t] = static_cast<int>(b);
      }
    }
    for (int64_t j = 0; j < 14; ++j) total += c[t * 14 + j];
    EXPECT_GT(best / total, 0.75) << "topic " << t;
  }
  std::sort(owner.begin(), owner.end());
  EXPECT_EQ(owner, (std::vector<int>{0, 1, 2}));
  // Documents leaning on one topic are assigned mostly to it.
  const std::vector<float> z = ml_common::transform_of(*est, x);
  for (int64_t i = 0; i < 3; ++i) EXPECT_GT(*std::max_element(z.begin() + i * 3, z.begin() + i * 3 + 3), 0.6f);
}

TEST(LatentDirichletAllocation, ParityStateAndRefusals) {
  const Data train = topic_counts(60, 3), test = topic_counts(25, 4);
  ml_common::expect_same_bytes_at_threads_123(kName, {{"n_components", "4"}, {"max_iter", "4"}}, train.X(), Tensor(),
                                              test.X());
  ml_common::expect_same_bytes_at_threads_123(
      kName, {{"n_components", "3"}, {"evaluate_every", "1"}, {"doc_topic_prior", "0.5"}}, train.X(), Tensor(),
      test.X());
  ml_common::expect_input_change_moves_the_model(kName, {{"n_components", "2"}, {"max_iter", "2"}}, topic_counts(10, 5),
                                                 3.0f);
  auto fitted = ml::make_estimator(kName, {{"n_components", "3"}, {"max_iter", "3"}});
  fitted->fit(train.X());
  ml_common::expect_model_text_round_trip(*fitted, test.X());
  auto plain = ml::make_estimator(kName);
  plain->fit(train.X());
  ml_common::expect_transformer_state_round_trip(*plain, test.X());
  // The random_state decides the initial components.
  auto other = ml::make_estimator(kName, {{"n_components", "3"}, {"max_iter", "3"}, {"random_state", "1"}});
  other->fit(train.X());
  EXPECT_NE(other->to_json_text(), fitted->to_json_text());

  Data neg = train;
  neg.x[5] = -1.0f;
  auto e = ml::make_estimator(kName);
  expect_refusal_names([&] { e->fit(neg.X()); }, "Negative values");
  expect_refusal_names([&] { fitted->transform(neg.X()); }, "Negative values");
  expect_refusal_names([] { ml::make_estimator(kName, {{"learning_method", "stochastic"}}); }, "learning_method");
  expect_refusal_names([] { ml::make_estimator(kName, {{"doc_topic_prior", "0"}}); }, "doc_topic_prior");
  expect_refusal_names([] { ml::make_estimator(kName, {{"topic_word_prior", "-1"}}); }, "topic_word_prior");
  expect_refusal_names([] { ml::make_estimator(kName, {{"n_components", "0"}}); }, "n_components");
  expect_refusal_names([] { ml::make_estimator(kName, {{"max_doc_update_iter", "0"}}); }, "max_doc_update_iter");
  ml_common::expect_transform_refusals(kName, train.X(), ml_common::host_table(5, 3, std::vector<float>(15, 1.0f)).X(), "features");
  nlohmann::json bad = ml_common::state_of(*fitted);
  bad["components_f64"] = ml::f32_to_hex({1.0f});
  ml_common::expect_state_refused(kName, bad, "components_f64");
}

std::vector<double> fitted_lambda(const Data& x, const ml::Params& params) {
  auto est = ml::make_estimator(kName, params);
  est->fit(x.X());
  return ml_common::f64_field(ml_common::state_of(*est), "components_f64");
}

TEST(LatentDirichletAllocation, OnlineWithOneBatchAndNoDecayIsTheBatchMethod) {
  const Data x = topic_counts(40, 9);
  for (const char* iters : {"1", "3"}) {
    const std::vector<double> batch = fitted_lambda(x, {{"n_components", "3"}, {"max_iter", iters}});
    const std::vector<double> online = fitted_lambda(
        x, {{"n_components", "3"}, {"max_iter", iters}, {"learning_method", "online"}, {"batch_size", "40"},
            {"learning_decay", "0"}});
    EXPECT_EQ(online, batch) << iters;
  }
}

// One online step from the initial components L0 on one batch of all n rows gives
// L(rho) = (1 - rho) L0 + rho Lb, Lb the batch method's one-step components (the same E-step). L0 is
// solved from the fit at decay 0.5 and the fit at decay 0.9 predicted from it; the gap is the largest
// relative error of the prediction.
double one_step_gap(const Data& x, double offset_step) {
  const std::vector<double> lb = fitted_lambda(x, {{"n_components", "3"}, {"max_iter", "1"}});
  auto online = [&](const char* decay) {
    return fitted_lambda(x, {{"n_components", "3"}, {"max_iter", "1"}, {"learning_method", "online"},
                             {"batch_size", "128"}, {"learning_decay", decay}, {"learning_offset", "10"}});
  };
  const std::vector<double> l1 = online("0.5"), l2 = online("0.9");
  const double r1 = std::pow(10.0 + offset_step, -0.5), r2 = std::pow(10.0 + offset_step, -0.9);
  double gap = 0.0;
  for (size_t i = 0; i < lb.size(); ++i) {
    const double l0 = (l1[i] - r1 * lb[i]) / (1.0 - r1);
    gap = std::max(gap, std::fabs((1.0 - r2) * l0 + r2 * lb[i] - l2[i]) / std::fabs(l2[i]));
  }
  return gap;
}

TEST(LatentDirichletAllocation, OnlineStepFollowsTheLearningRate) {
  const Data x = topic_counts(30, 13);
  const double gap = one_step_gap(x, 1.0), sabotaged = one_step_gap(x, 0.0);
  std::printf("[ LDA      ] one-step prediction gap %.3g (rate of n_batch_iter 0: %.3g)\n", gap, sabotaged);
  EXPECT_LT(gap, 1e-12);
  // Sabotage: the rate of n_batch_iter 0, (learning_offset)^-learning_decay, does not explain the fits.
  EXPECT_GT(sabotaged, 1e-4);
}

TEST(LatentDirichletAllocation, OnlineParityAndQuality) {
  const Data train = topic_counts(60, 3), test = topic_counts(25, 4);
  ml_common::expect_same_bytes_at_threads_123(
      kName, {{"n_components", "4"}, {"max_iter", "3"}, {"learning_method", "online"}, {"batch_size", "16"}},
      train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123(kName,
                                              {{"n_components", "3"},
                                               {"learning_method", "online"},
                                               {"batch_size", "25"},
                                               {"evaluate_every", "1"},
                                               {"learning_offset", "4"},
                                               {"learning_decay", "0.6"}},
                                              train.X(), Tensor(), test.X());
  // The training perplexity of an online fit (mini-batches of 32 of 150 rows) against the batch fit's.
  const Data x = topic_counts(150, 11);
  auto batch = ml::make_estimator(kName, {{"n_components", "3"}, {"max_iter", "30"}});
  auto online = ml::make_estimator(
      kName, {{"n_components", "3"}, {"max_iter", "30"}, {"learning_method", "online"}, {"batch_size", "32"}});
  batch->fit(x.X());
  online->fit(x.X());
  const double pb = ml_common::state_f32(*batch, "bound")[0], po = ml_common::state_f32(*online, "bound")[0];
  std::printf("[ LDA      ] training perplexity batch %.6f online %.6f\n", pb, po);
  EXPECT_LT(std::fabs(po - pb), 0.03 * pb);
  EXPECT_EQ(ml_common::state_of(*online)["n_batch_iter"].get<int64_t>(), 150);
  // The model file keeps n_batch_iter; one written without it reads as one step per pass.
  ml_common::expect_model_text_round_trip(*online, test.X());
  nlohmann::json old = ml_common::state_of(*batch);
  old.erase("n_batch_iter");
  auto loaded = ml::make_estimator(kName);
  loaded->load_state(old);
  EXPECT_EQ(ml_common::state_of(*loaded)["n_batch_iter"].get<int64_t>(), 30);

  expect_refusal_names([] { ml::make_estimator(kName, {{"batch_size", "0"}}); }, "batch_size");
  expect_refusal_names([] { ml::make_estimator(kName, {{"learning_offset", "0.5"}}); }, "learning_offset");
  expect_refusal_names([] { ml::make_estimator(kName, {{"total_samples", "0"}}); }, "total_samples");
  auto steep = ml::make_estimator(kName, {{"learning_method", "online"}, {"learning_decay", "1.5"}});
  expect_refusal_names([&] { steep->fit(train.X()); }, "learning_decay");
}

}  // namespace
}  // namespace bl
