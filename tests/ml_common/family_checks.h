// family_checks.h: helpers shared by the estimator families' own tests: a host data set with its
// tensors, the float64 softmax of joint log-likelihoods, and the check that an estimator's model
// file and outputs are the same bytes at threads 1, 2 and 3, with its sabotage arm.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/thread_pool.h"
#include "ml_common/estimator_checks.h"

namespace bl::ml_common {

// X [n, d] row-major and y [n] on the host (c: the class count where y holds classes 0..c-1).
struct HostData {
  std::vector<float> x, y;
  int64_t n = 0, d = 0, c = 0;
  Tensor X() const { return Tensor::from_vector(x, {n, d}); }
  Tensor Y() const { return Tensor::from_vector(y, {n}); }
};

// n rows in k blobs: row i is in blob i % k (its label y), feature j = uniform[-1, 1) + gap where
// j == i % k; the uniform values drawn row by row from SplitMix64(seed).
inline HostData uniform_blobs(int64_t n, int64_t d, int64_t k, float gap, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  HostData out;
  out.n = n;
  out.d = d;
  out.c = k;
  for (int64_t i = 0; i < n; ++i) {
    out.y.push_back(static_cast<float>(i % k));
    for (int64_t j = 0; j < d; ++j) out.x.push_back(rng.uniform_pm1() + gap * static_cast<float>((i % k) == j));
  }
  return out;
}

// The softmax of each row of jll [m, c] in float64 (the reference of predict_proba).
inline std::vector<double> softmax_rows(const std::vector<double>& jll, int64_t m, int64_t c) {
  std::vector<double> p(jll.size());
  for (int64_t i = 0; i < m; ++i) {
    double mx = jll[i * c];
    for (int64_t k = 1; k < c; ++k) mx = std::max(mx, jll[i * c + k]);
    double s = 0;
    for (int64_t k = 0; k < c; ++k) s += std::exp(jll[i * c + k] - mx);
    for (int64_t k = 0; k < c; ++k) p[i * c + k] = std::exp(jll[i * c + k] - mx) / s;
  }
  return p;
}

// Fits `name` with params on (X, y) at threads 1, 2 and 3; the model file text and the bytes of
// every output on X_test (outputs_of) must equal those of the 1-thread fit.
inline void expect_same_bytes_at_threads_123(const std::string& name, const ml::Params& params, const Tensor& X,
                                             const Tensor& y, const Tensor& X_test) {
  std::string model0;
  std::vector<unsigned char> out0;
  const int saved = num_threads();
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto est = ml::make_estimator(name, params);
    est->fit(X, y);
    std::string m = est->to_json_text();
    std::vector<unsigned char> o = outputs_of(*est, X_test);
    if (t == 1) {
      model0 = m;
      out0 = o;
    } else {
      EXPECT_EQ(m, model0) << name << " threads=" << t;
      EXPECT_EQ(o, out0) << name << " threads=" << t;
    }
  }
  set_num_threads(saved);
}

// The sabotage arm of the check above: the same fit with X[0, 0] set to `moved_value` must write
// another model file, so byte equality is not vacuous.
inline void expect_input_change_moves_the_model(const std::string& name, const ml::Params& params,
                                                const HostData& data, float moved_value) {
  auto est = ml::make_estimator(name, params);
  est->fit(data.X(), data.Y());
  HostData moved = data;
  moved.x[0] = moved_value;
  auto other = ml::make_estimator(name, params);
  other->fit(moved.X(), moved.Y());
  EXPECT_TRUE(other->to_json_text() != est->to_json_text())
      << name << ": X[0, 0] " << data.x[0] << " -> " << moved_value << " left the model unchanged";
}

// The fitted state of an estimator (a model file's "state").
inline nlohmann::json state_of(const ml::Estimator& est) {
  nlohmann::json st;
  est.save_state(st);
  return st;
}

// A binary64 array stored in a state field as the hex of its little-endian bytes.
inline std::vector<double> f64_field(const nlohmann::json& st, const char* key) {
  std::vector<int64_t> bits = ml::i64_from_hex(st[key].get<std::string>(), key);
  std::vector<double> v(bits.size());
  std::memcpy(v.data(), bits.data(), bits.size() * sizeof(double));
  return v;
}

// An unsupervised estimator refuses predict before fit; after fit on X, its state loaded into a new
// estimator gives the same model file and the same predictions on X.
inline void expect_predict_before_fit_refused_and_state_round_trip(const std::string& name, const Tensor& X) {
  auto est = ml::make_estimator(name);
  EXPECT_NE(error_of([&] { est->predict(X); }).find("before fit"), std::string::npos) << name;
  est->fit(X);
  auto back = ml::make_estimator(name);
  back->load_state(state_of(*est));
  EXPECT_EQ(back->to_json_text(), est->to_json_text()) << name;
  EXPECT_EQ(back->predict(X).to_vector<int64_t>(), est->predict(X).to_vector<int64_t>()) << name;
}

// A fitted transformer's state loaded into a new estimator, and its model file read back, give the
// same model file and the same transform output on test.
inline void expect_transformer_state_round_trip(const ml::Estimator& est, const Tensor& test) {
  const std::string name = est.name();
  const std::vector<float> want = est.transform(test).to_vector<float>();
  auto back = ml::make_estimator(name);
  back->load_state(state_of(est));
  EXPECT_EQ(back->to_json_text(), est.to_json_text()) << name;
  EXPECT_EQ(back->transform(test).to_vector<float>(), want) << name;
  auto from_text = ml::estimator_from_json_text(est.to_json_text());
  EXPECT_EQ(from_text->transform(test).to_vector<float>(), want) << name;
}

}  // namespace bl::ml_common
