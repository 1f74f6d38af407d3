// family_checks.h: helpers shared by the estimator families' own tests: a host data set with its
// tensors and its builders (a table, a low-rank matrix), the float64 softmax of joint
// log-likelihoods, the check that an estimator's model file and outputs are the same bytes at threads
// 1, 2 and 3, with its sabotage arm, the state and model file round trips, and named refusals.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

// A table of n rows of d values x (row-major), y all zero.
inline HostData host_table(int64_t n, int64_t d, std::vector<float> x) {
  HostData out;
  out.n = n;
  out.d = d;
  out.x = std::move(x);
  out.y.assign(static_cast<size_t>(n), 0.0f);
  return out;
}

// n rows of d features: offset plus a rank-r signal (the basis [r, d] uniform in [-1, 1), row
// coordinates uniform times 4 / (1 + t), so the scales decay) plus noise * uniform, all drawn from
// SplitMix64(seed) (the basis first, then row by row); y all zero.
inline HostData low_rank_rows(int64_t n, int64_t d, int64_t r, float noise, uint64_t seed, double offset) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> basis(static_cast<size_t>(r * d));
  for (float& b : basis) b = rng.uniform_pm1();
  HostData out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    out.y.push_back(0.0f);
    std::vector<float> z(static_cast<size_t>(r));
    for (int64_t t = 0; t < r; ++t) z[t] = rng.uniform_pm1() * 4.0f / static_cast<float>(1 + t);
    for (int64_t j = 0; j < d; ++j) {
      double v = offset;
      for (int64_t t = 0; t < r; ++t) v += static_cast<double>(z[t]) * basis[t * d + j];
      out.x.push_back(static_cast<float>(v + noise * rng.uniform_pm1()));
    }
  }
  return out;
}

// A binary32 array stored in a fitted estimator's state field (hex).
inline std::vector<float> state_f32(const ml::Estimator& est, const std::string& key) {
  nlohmann::json st = state_of(est);
  return ml::f32_from_hex(st[key].get<std::string>(), key);
}

// The transform of x by a fitted estimator, on the host.
inline std::vector<float> transform_of(const ml::Estimator& est, const HostData& x) {
  return est.transform(x.X()).to_vector<float>();
}

// f throws, and its message contains part (what: a label for the failure message).
inline void expect_refusal_names(const std::function<void()>& f, const std::string& part,
                                 const std::string& what = "") {
  const std::string m = error_of(f);
  EXPECT_NE(m.find(part), std::string::npos) << what << (what.empty() ? "" : ": ") << m;
}

// Loading st into a new `name` is refused with a message containing part.
inline void expect_state_refused(const std::string& name, const nlohmann::json& st, const std::string& part) {
  expect_refusal_names([&] { ml::make_estimator(name)->load_state(st); }, part);
}

// Each of names (a range of estimator names) fitted with its defaults on train passes
// expect_transformer_state_round_trip on test.
template <typename Names>
inline void expect_transformer_state_round_trips(const Names& names, const Tensor& train, const Tensor& test) {
  for (const auto& name : names) {
    auto est = ml::make_estimator(name);
    est->fit(train);
    expect_transformer_state_round_trip(*est, test);
  }
}

// A new `name` refuses transform of x before fit, and fit on bad with a message containing bad_part;
// fitted on x, it refuses transform of other (another feature count), transform of bad (bad_part)
// and a y of 4 entries.
inline void expect_transformer_input_refusals(const std::string& name, const HostData& x, const HostData& other,
                                              const HostData& bad, const std::string& bad_part) {
  auto est = ml::make_estimator(name);
  expect_refusal_names([&] { est->transform(x.X()); }, "before fit", name);
  expect_refusal_names([&] { est->fit(bad.X()); }, bad_part, name);
  est->fit(x.X());
  expect_refusal_names([&] { est->transform(other.X()); }, "features", name);
  expect_refusal_names([&] { est->transform(bad.X()); }, bad_part, name);
  expect_refusal_names([&] { est->fit(x.X(), Tensor::from_vector(std::vector<float>(4, 0.0f), {4})); },
                       "y has 4 entries", name);
}

// A fitted estimator's model file read back gives the same model file and the same transform of test.
inline void expect_model_text_round_trip(const ml::Estimator& est, const Tensor& test) {
  auto back = ml::estimator_from_json_text(est.to_json_text());
  EXPECT_EQ(back->to_json_text(), est.to_json_text()) << est.name();
  EXPECT_EQ(back->transform(test).to_vector<float>(), est.transform(test).to_vector<float>()) << est.name();
}

// A new `name` refuses transform before fit; fitted on x, it refuses the other feature count with a
// message containing width_part.
inline void expect_transform_refusals(const std::string& name, const Tensor& x, const Tensor& other,
                                      const std::string& width_part) {
  auto est = ml::make_estimator(name);
  expect_refusal_names([&] { est->transform(x); }, "before fit");
  est->fit(x);
  expect_refusal_names([&] { est->transform(other); }, width_part);
}

}  // namespace bl::ml_common
