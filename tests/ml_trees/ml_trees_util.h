// ml_trees_util.h: synthetic data and identity helpers for the tree and boosting tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "contract/rng.h"
#include "core/digest.h"
#include "core/thread_pool.h"

namespace bl::ml::testing {

struct Dataset {
  Tensor X, y;
};

// n rows, d features of Philox normals; y from a fixed nonlinear rule: regression (k == 0) or k
// classes; nan_every > 0 puts a NaN at every nan_every-th value of X.
inline Dataset make_data(int64_t n, int64_t d, int k, uint64_t seed, int64_t nan_every = 0) {
  std::vector<float> x(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n * d; ++i) {
    x[i] = bl::normal_element(seed, 1, static_cast<uint64_t>(i));
  }
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* r = &x[i * d];
    double s = 1.5 * r[0] - 2.0 * r[1 % d] * (r[0] > 0 ? 1.0 : -0.5) + 0.7 * r[2 % d] * r[2 % d];
    s += 0.2 * bl::normal_element(seed, 2, static_cast<uint64_t>(i));
    if (k == 0) y[i] = static_cast<float>(s);
    else if (k == 2) y[i] = s > 0.3 ? 1.0f : 0.0f;
    else y[i] = static_cast<float>(std::min<int64_t>(k - 1, std::max<int64_t>(0, static_cast<int64_t>(std::floor(s + k / 2.0)))));
  }
  if (nan_every > 0) {
    for (int64_t i = 0; i < n * d; i += nan_every) x[i] = NAN;
  }
  return {Tensor::from_vector(x, {n, d}), Tensor::from_vector(y, {n})};
}

inline std::string tensor_sha(const Tensor& t) {
  Tensor h = t.contiguous();
  return sha256_hex(h.raw_data(), static_cast<size_t>(h.numel()) * h.element_size());
}

// Fits `name` with params at threads 1, 2 and 3 and requires the same model file bytes and the
// same prediction (and probability) bytes. Returns the model-file SHA-256.
// SHA-256 of an estimator's model file without its trees' "cover" keys (the training cover TreeSHAP
// reads, recorded since the digests of the pinned tests were taken): the pinned digests keep
// proving that the trees and their values did not move.
inline std::string model_sha_without_cover(const Estimator& est) {
  nlohmann::json j = nlohmann::json::parse(est.to_json_text());
  for (auto& t : j["state"]["trees"]) t.erase("cover");
  const std::string text = estimator_from_json_text(j.dump(), "without cover")->to_json_text();
  return sha256_hex(text.data(), text.size());
}

inline std::string expect_thread_identity(const std::string& name, const Params& params, const Dataset& train,
                                          const Tensor& X_test, bool proba) {
  std::string model_sha, pred_sha, proba_sha;
  const int before = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto est = make_estimator(name, params);
    est->fit(train.X, train.y);
    std::string text = est->to_json_text();
    std::string m = sha256_hex(text.data(), text.size());
    std::string p = tensor_sha(est->predict(X_test));
    std::string q = proba ? tensor_sha(est->predict_proba(X_test)) : "";
    if (threads == 1) {
      model_sha = m;
      pred_sha = p;
      proba_sha = q;
    } else {
      EXPECT_EQ(m, model_sha) << name << ": model file differs at " << threads << " threads";
      EXPECT_EQ(p, pred_sha) << name << ": predictions differ at " << threads << " threads";
      EXPECT_EQ(q, proba_sha) << name << ": probabilities differ at " << threads << " threads";
    }
  }
  set_num_threads(before);
  return model_sha;
}

// Saving, loading and predicting again gives the same model text and prediction bytes.
inline void expect_round_trip(const Estimator& est, const Tensor& X) {
  std::string text = est.to_json_text();
  auto again = estimator_from_json_text(text, "round-trip");
  EXPECT_EQ(again->to_json_text(), text);
  EXPECT_EQ(tensor_sha(again->predict(X)), tensor_sha(est.predict(X)));
}

// The weighted score of a fitted classifier (accuracy) or regressor (R^2) on labels made from its
// own predictions (every fifth label changed): all-ones weights give score()'s bits, and uneven
// weights (including zeros) give the weighted metric computed here in binary64.
inline void expect_weighted_score(const Estimator& est, const Tensor& X, bool classifier) {
  const std::vector<float> pred = est.predict(X).to_vector<float>();
  const int64_t n = static_cast<int64_t>(pred.size());
  std::vector<float> y(pred), ones(pred.size(), 1.0f), w(pred.size());
  for (int64_t i = 0; i < n; ++i) {
    if (i % 5 == 0) y[i] = classifier ? (pred[i] == 0.0f ? 1.0f : 0.0f) : pred[i] + 0.25f;
    w[i] = 0.5f * static_cast<float>(i % 4);
  }
  const Tensor yt = Tensor::from_vector(y, {n});
  const double plain = est.score(X, yt), all_ones = est.score_weighted(X, yt, Tensor::from_vector(ones, {n}));
  EXPECT_EQ(std::memcmp(&plain, &all_ones, sizeof(double)), 0) << est.name() << ": " << plain << " vs " << all_ones;
  double want;
  if (classifier) {
    double hits = 0.0, total = 0.0;
    for (int64_t i = 0; i < n; ++i) hits += y[i] == pred[i] ? w[i] : 0.0, total += w[i];
    want = hits / total;
  } else {
    double mean = 0.0, total = 0.0, res = 0.0, tot = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += static_cast<double>(w[i]) * y[i], total += w[i];
    mean /= total;
    for (int64_t i = 0; i < n; ++i) {
      res += w[i] * (static_cast<double>(y[i]) - pred[i]) * (static_cast<double>(y[i]) - pred[i]);
      tot += w[i] * (y[i] - mean) * (y[i] - mean);
    }
    want = 1.0 - res / tot;
  }
  EXPECT_NEAR(est.score_weighted(X, yt, Tensor::from_vector(w, {n})), want, 1e-12) << est.name();
}

}  // namespace bl::ml::testing
