// test_mlp_estimators.cpp: mlp_classifier and mlp_regressor against a float64 evaluation of their
// training rule (full-batch gradient descent from the same initial weights, the L2 term included:
// weights and per-epoch losses within 1e-4), identical bytes at thread counts 1, 2 and 3 with a
// sabotage arm, the early stop's epoch count, a model file round trip, and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/nn.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;
using Data = ml_common::HostData;

struct Net {
  std::vector<double> w1, b1, w2, b2;  // [h, d], [h], [k, h], [k]
};

// The estimator's initial weights: nn::Linear layers d -> h -> k drawn from InitStream(seed).
Net initial_net(int64_t d, int64_t h, int64_t k, uint64_t seed) {
  nn::InitStream init(seed);
  nn::Linear a(d, h, init), b(h, k, init);
  auto host = [](const ag::Var& v) {
    std::vector<float> f = v.value().to_vector<float>();
    return std::vector<double>(f.begin(), f.end());
  };
  return {host(a.weight), host(a.bias), host(b.weight), host(b.bias)};
}

double act(const std::string& a, double z) { return a == "tanh" ? std::tanh(z) : (z > 0 ? z : 0.0); }
double act_grad(const std::string& a, double z) {
  return a == "tanh" ? 1.0 - std::tanh(z) * std::tanh(z) : (z > 0 ? 1.0 : 0.0);
}

// Full-batch gradient descent in float64 for `epochs` steps; returns each step's loss (before the
// update) and leaves the final weights in net. Classifier: softmax cross-entropy; else half the
// mean squared error; plus alpha / (2 n) * (|W1|^2 + |W2|^2).
std::vector<double> reference_fit(Net& net, const Data& s, int64_t h, int64_t k, bool classifier,
                                  const std::string& activation, double lr, double alpha, int epochs) {
  const int64_t n = s.n, d = s.d;
  std::vector<double> losses;
  for (int e = 0; e < epochs; ++e) {
    std::vector<double> gw1(net.w1.size(), 0), gb1(h, 0), gw2(net.w2.size(), 0), gb2(k, 0);
    double loss = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> z(h), a(h), o(k), dout(k);
      for (int64_t u = 0; u < h; ++u) {
        double t = net.b1[u];
        for (int64_t j = 0; j < d; ++j) t += net.w1[u * d + j] * s.x[i * d + j];
        z[u] = t;
        a[u] = act(activation, t);
      }
      for (int64_t c = 0; c < k; ++c) {
        double t = net.b2[c];
        for (int64_t u = 0; u < h; ++u) t += net.w2[c * h + u] * a[u];
        o[c] = t;
      }
      if (classifier) {
        double mx = o[0];
        for (double v : o) mx = std::max(mx, v);
        double sum = 0;
        for (double v : o) sum += std::exp(v - mx);
        const int64_t label = static_cast<int64_t>(s.y[i]);
        loss += -(o[label] - mx - std::log(sum));
        for (int64_t c = 0; c < k; ++c) dout[c] = (std::exp(o[c] - mx) / sum - (c == label ? 1.0 : 0.0)) / n;
      } else {
        loss += 0.5 * (o[0] - s.y[i]) * (o[0] - s.y[i]);
        dout[0] = (o[0] - s.y[i]) / n;
      }
      for (int64_t c = 0; c < k; ++c) {
        gb2[c] += dout[c];
        for (int64_t u = 0; u < h; ++u) gw2[c * h + u] += dout[c] * a[u];
      }
      for (int64_t u = 0; u < h; ++u) {
        double da = 0;
        for (int64_t c = 0; c < k; ++c) da += dout[c] * net.w2[c * h + u];
        const double dz = da * act_grad(activation, z[u]);
        gb1[u] += dz;
        for (int64_t j = 0; j < d; ++j) gw1[u * d + j] += dz * s.x[i * d + j];
      }
    }
    double sq = 0;
    for (double v : net.w1) sq += v * v;
    for (double v : net.w2) sq += v * v;
    losses.push_back(loss / n + 0.5 * alpha / n * sq);
    for (size_t q = 0; q < net.w1.size(); ++q) net.w1[q] -= lr * (gw1[q] + alpha / n * net.w1[q]);
    for (size_t q = 0; q < net.w2.size(); ++q) net.w2[q] -= lr * (gw2[q] + alpha / n * net.w2[q]);
    for (int64_t u = 0; u < h; ++u) net.b1[u] -= lr * gb1[u];
    for (int64_t c = 0; c < k; ++c) net.b2[c] -= lr * gb2[c];
  }
  return losses;
}

nlohmann::json state_of(const ml::Estimator& est) { return nlohmann::json::parse(est.to_json_text())["state"]; }

void expect_matches_reference(const std::string& name, const std::string& activation) {
  const bool classifier = name == "mlp_classifier";
  Data s = ml_common::uniform_blobs(60, 5, 3, 1.5f, 11);
  if (!classifier)
    for (int64_t i = 0; i < s.n; ++i) s.y[i] = s.x[i * s.d] - 0.5f * s.x[i * s.d + 1] + 0.1f * s.y[i];
  const int64_t h = 6, k = classifier ? 3 : 1;
  const int epochs = 12;
  auto est = ml::make_estimator(name, {{"hidden_layer_sizes", "6"}, {"activation", activation}, {"solver", "sgd"},
                                       {"momentum", "0"}, {"batch_size", "200"}, {"shuffle", "false"},
                                       {"learning_rate_init", "0.1"}, {"alpha", "0.5"}, {"random_state", "7"},
                                       {"max_iter", std::to_string(epochs)}, {"tol", "0"}});
  est->fit(s.X(), s.Y());
  Net net = initial_net(s.d, h, k, 7);
  std::vector<double> losses = reference_fit(net, s, h, k, classifier, activation, 0.1, 0.5, epochs);
  nlohmann::json st = state_of(*est);
  ASSERT_EQ(st["n_iter"].get<int64_t>(), epochs) << name;
  std::vector<float> curve = ml::f32_from_hex(st["loss_curve"].get<std::string>(), "loss_curve");
  ASSERT_EQ(curve.size(), losses.size());
  for (size_t e = 0; e < losses.size(); ++e) EXPECT_NEAR(curve[e], losses[e], 1e-4 * (1 + losses[e])) << name << " epoch " << e;
  std::vector<float> w = ml::f32_from_hex(st["weights"].get<std::string>(), "weights");
  std::vector<double> ref;
  for (const auto* part : {&net.w1, &net.b1, &net.w2, &net.b2}) ref.insert(ref.end(), part->begin(), part->end());
  ASSERT_EQ(w.size(), ref.size());
  for (size_t q = 0; q < w.size(); ++q) EXPECT_NEAR(w[q], ref[q], 1e-4) << name << " weight " << q;
}

TEST(MlpEstimators, FullBatchDescentMatchesAFloat64Evaluation) {
  expect_matches_reference("mlp_classifier", "tanh");
  expect_matches_reference("mlp_classifier", "relu");
  expect_matches_reference("mlp_regressor", "tanh");
  expect_matches_reference("mlp_regressor", "relu");
}

TEST(MlpEstimators, SameBytesAtThreads123AndAnInputChangeMovesThem) {
  for (const char* name : {"mlp_classifier", "mlp_regressor"}) {
    Data tr = ml_common::uniform_blobs(700, 13, 4, 1.0f, 5), te = ml_common::uniform_blobs(129, 13, 4, 1.0f, 6);
    const ml::Params p{{"hidden_layer_sizes", "32,16"}, {"max_iter", "4"}, {"batch_size", "64"}};
    ml_common::expect_same_bytes_at_threads_123(name, p, tr.X(), tr.Y(), te.X());
    ml_common::expect_input_change_moves_the_model(name, p, tr, tr.x[0] + 1.0f);
  }
}

TEST(MlpEstimators, EarlyStopCountsEpochsWithoutImprovement) {
  Data s = ml_common::uniform_blobs(90, 4, 3, 1.5f, 3);
  // tol larger than any loss: every epoch after the first counts as no improvement, so the fit
  // stops after 1 + (n_iter_no_change + 1) epochs.
  auto est = ml::make_estimator("mlp_classifier", {{"hidden_layer_sizes", "5"}, {"tol", "1e9"},
                                                   {"n_iter_no_change", "2"}, {"max_iter", "50"}});
  est->fit(s.X(), s.Y());
  EXPECT_EQ(state_of(*est)["n_iter"].get<int64_t>(), 4);
  auto full = ml::make_estimator("mlp_classifier", {{"hidden_layer_sizes", "5"}, {"tol", "0"}, {"max_iter", "30"},
                                                    {"learning_rate_init", "0.05"}});
  full->fit(s.X(), s.Y());
  EXPECT_EQ(state_of(*full)["n_iter"].get<int64_t>(), 30);
  EXPECT_GT(full->score(s.X(), s.Y()), 0.9);
}

TEST(MlpEstimators, ModelFileRoundTripGivesTheSameBytes) {
  Data s = ml_common::uniform_blobs(120, 6, 3, 1.5f, 8);
  for (const char* name : {"mlp_classifier", "mlp_regressor"}) {
    auto est = ml::make_estimator(name, {{"hidden_layer_sizes", "(7, 5)"}, {"activation", "logistic"},
                                         {"max_iter", "5"}});
    est->fit(s.X(), s.Y());
    auto again = ml::estimator_from_json_text(est->to_json_text());
    EXPECT_EQ(again->to_json_text(), est->to_json_text()) << name;
    EXPECT_EQ(ml_common::outputs_of(*again, s.X()), ml_common::outputs_of(*est, s.X())) << name;
    EXPECT_EQ(est->get_params().at("hidden_layer_sizes"), "7,5");
  }
}

TEST(MlpEstimators, BadInputsAreNamedErrors) {
  Data s = ml_common::uniform_blobs(30, 3, 2, 1.0f, 2);
  auto bad = [&](const ml::Params& p) {
    return error_of([&] { ml::make_estimator("mlp_classifier", p)->fit(s.X(), s.Y()); });
  };
  EXPECT_NE(bad({{"hidden_layer_sizes", "0"}}).find("hidden_layer_sizes"), std::string::npos);
  EXPECT_NE(bad({{"hidden_layer_sizes", "8,x"}}).find("hidden_layer_sizes"), std::string::npos);
  EXPECT_NE(bad({{"hidden_layer_sizes", ""}}).find("hidden_layer_sizes"), std::string::npos);
  EXPECT_NE(bad({{"solver", "lbfgs"}}).find("solver"), std::string::npos);
  EXPECT_NE(bad({{"activation", "softplus"}}).find("activation"), std::string::npos);
  EXPECT_NE(bad({{"momentum", "1.5"}}).find("momentum"), std::string::npos);
  EXPECT_NE(bad({{"batch_size", "2.5"}}).find("batch_size"), std::string::npos);
  EXPECT_NE(bad({{"learning_rate_init", "0"}}).find("learning_rate_init"), std::string::npos);
  EXPECT_NE(bad({{"max_iter", "0"}}).find("max_iter"), std::string::npos);
  EXPECT_NE(bad({{"n_iter_no_change", "0"}}).find("n_iter_no_change"), std::string::npos);
  EXPECT_NE(bad({{"beta_1", "1"}}).find("beta_1"), std::string::npos);
  auto est = ml::make_estimator("mlp_regressor");
  EXPECT_NE(error_of([&] { est->predict(s.X()); }).find("mlp_regressor"), std::string::npos);
  est->set_params({{"max_iter", "2"}, {"hidden_layer_sizes", "4"}});
  est->fit(s.X(), s.Y());
  EXPECT_NE(error_of([&] { est->predict(Tensor::from_vector(std::vector<float>(8, 0.0f), {2, 4})); }), "");
  EXPECT_NE(error_of([&] { est->predict_proba(s.X()); }).find("predict_proba"), std::string::npos);
  // A diverging fit names the estimator (a learning rate far too large for the squared error).
  Data big = s;
  for (float& v : big.y) v *= 1e30f;
  auto wild = ml::make_estimator("mlp_regressor", {{"learning_rate_init", "1e30"}, {"solver", "sgd"},
                                                   {"hidden_layer_sizes", "4"}});
  EXPECT_NE(error_of([&] { wild->fit(big.X(), big.Y()); }).find("mlp_regressor"), std::string::npos);
}

}  // namespace
}  // namespace bl
