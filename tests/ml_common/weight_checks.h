// weight_checks.h: the checks every estimator that takes sample weights passes, shared by the
// families' weight tests: all-ones weights (and no weights) give the unweighted model file bit for
// bit, real-valued weights give the same bytes at threads 1, 2 and 3, a changed weight moves the
// model (the sabotage arm of that rule), rows of weight 0 change nothing whatever their values (where
// the estimator promises it), a weight of 0 on mislabeled rows recovers the clean fit, and the data
// with integer weights next to its repeated rows.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/thread_pool.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/family_checks.h"

namespace bl::ml_common {

// HostData with a weight per row.
// One estimator setting of a weight test: registry name, parameters, classes (or a regression).
struct WeightCase {
  const char* name;
  ml::Params params;
  bool classes;
};

struct WeightedHostData : HostData {
  std::vector<float> w;
  Tensor W() const { return Tensor::from_vector(w, {n}); }
  // Row i written w_i times (w must hold whole numbers; 0 drops the row).
  HostData repeated() const {
    HostData r;
    r.d = d;
    r.c = c;
    for (int64_t i = 0; i < n; ++i)
      for (int k = 0; k < static_cast<int>(w[i]); ++k) {
        r.x.insert(r.x.end(), x.begin() + i * d, x.begin() + (i + 1) * d);
        if (!y.empty()) r.y.push_back(y[i]);
        ++r.n;
      }
    return r;
  }
  // The rows of positive weight only.
  HostData kept() const {
    HostData r;
    r.d = d;
    r.c = c;
    for (int64_t i = 0; i < n; ++i)
      if (w[i] > 0.0f) {
        r.x.insert(r.x.end(), x.begin() + i * d, x.begin() + (i + 1) * d);
        if (!y.empty()) r.y.push_back(y[i]);
        ++r.n;
      }
    return r;
  }
};

// data with weights w_i = f(i).
template <class F>
WeightedHostData with_weights(const HostData& data, F f) {
  WeightedHostData out;
  static_cast<HostData&>(out) = data;
  for (int64_t i = 0; i < data.n; ++i) out.w.push_back(static_cast<float>(f(i)));
  return out;
}

// n rows, d features uniform in [-1, 1) (SplitMix64(seed), row by row) and the smooth target
// sum_j sin(freq x_j) (j + 1).
inline HostData smooth_regression(int64_t n, int64_t d, uint64_t seed, double freq = 1.5) {
  test_rng::SplitMix64 rng(seed);
  HostData out;
  out.n = n, out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    double t = 0;
    for (int64_t j = 0; j < d; ++j) {
      const float v = rng.uniform_pm1();
      out.x.push_back(v);
      t += std::sin(freq * v) * static_cast<double>(j + 1);
    }
    out.y.push_back(static_cast<float>(t));
  }
  return out;
}

inline Tensor y_of(const HostData& data) { return data.y.empty() ? Tensor() : data.Y(); }

// The model file text and output bytes on X_test of name fitted with weights W (undefined: unweighted).
inline std::string weighted_fit_text(const std::string& name, const ml::Params& params, const HostData& data,
                                     const Tensor& W, const Tensor& X_test) {
  auto est = ml::make_estimator(name, params);
  est->fit_weighted(data.X(), y_of(data), W);
  std::vector<unsigned char> o = outputs_of(*est, X_test);
  return est->to_json_text() + std::string(o.begin(), o.end());
}

// All-ones weights and no weights give the unweighted model file and outputs bit for bit.
inline void expect_all_ones_give_the_unweighted_bits(const std::string& name, const ml::Params& params,
                                                     const HostData& data) {
  auto plain = ml::make_estimator(name, params);
  plain->fit(data.X(), y_of(data));
  std::vector<unsigned char> o = outputs_of(*plain, data.X());
  const std::string want = plain->to_json_text() + std::string(o.begin(), o.end());
  const Tensor ones = Tensor::from_vector(std::vector<float>(static_cast<size_t>(data.n), 1.0f), {data.n});
  EXPECT_EQ(weighted_fit_text(name, params, data, ones, data.X()), want) << name << ": all-ones weights";
  EXPECT_EQ(weighted_fit_text(name, params, data, Tensor(), data.X()), want) << name << ": no weights";
}

// Threads 1, 2, 3 give the same bytes with data.w; a tenth of the weight of row `moved` changes them.
inline void expect_weighted_bytes_at_threads_123_and_moved(const std::string& name, const ml::Params& params,
                                                           const WeightedHostData& data, int64_t moved) {
  const int saved = num_threads();
  std::string first;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    const std::string text = weighted_fit_text(name, params, data, data.W(), data.X());
    if (t == 1) first = text;
    else EXPECT_EQ(text, first) << name << " at " << t << " threads";
  }
  set_num_threads(saved);
  WeightedHostData other = data;
  other.w[static_cast<size_t>(moved)] *= 0.1f;
  EXPECT_NE(weighted_fit_text(name, params, other, other.W(), data.X()), first)
      << name << ": the weight of row " << moved << " changed, the model did not";
}

// The rows of weight 0 get other values (X mirrored and moved, y the next class of data.c classes,
// or -50): the weighted fit's model file must not change.
inline void expect_zero_weight_rows_change_nothing(const std::string& name, const ml::Params& params,
                                                   WeightedHostData s) {
  auto a = ml::make_estimator(name, params), b = ml::make_estimator(name, params);
  a->fit_weighted(s.X(), y_of(s), s.W());
  for (int64_t i = 0; i < s.n; ++i) {
    if (s.w[i] != 0.0f) continue;
    for (int64_t j = 0; j < s.d; ++j) s.x[i * s.d + j] = 9.0f - 2.0f * s.x[i * s.d + j];
    if (!s.y.empty()) s.y[i] = s.c > 0 ? static_cast<float>((static_cast<int64_t>(s.y[i]) + 1) % s.c) : -50.0f;
  }
  b->fit_weighted(s.X(), y_of(s), s.W());
  EXPECT_EQ(a->to_json_text(), b->to_json_text()) << name << ": a row of weight 0 changed the model";
}

// Rows i % 5 < 2 of clean (classes 0..c-1) get the next class and weight 0: the weighted fit's
// accuracy on the clean rows beats the unweighted fit's by more than margin.
inline void expect_zero_weight_on_mislabeled_rows_recovers(const std::string& name, const ml::Params& params,
                                                           const HostData& clean, double margin) {
  WeightedHostData s = with_weights(clean, [](int64_t i) { return i % 5 < 2 ? 0 : 1; });
  for (int64_t i = 0; i < s.n; ++i)
    if (i % 5 < 2) s.y[i] = static_cast<float>((static_cast<int64_t>(s.y[i]) + 1) % clean.c);
  auto weighted = ml::make_estimator(name, params), plain = ml::make_estimator(name, params);
  weighted->fit_weighted(s.X(), s.Y(), s.W());
  plain->fit(s.X(), s.Y());
  const double acc_w = weighted->score(clean.X(), clean.Y()), acc_p = plain->score(clean.X(), clean.Y());
  EXPECT_GT(acc_w, acc_p + margin) << name << ": weighted " << acc_w << " plain " << acc_p;
}

}  // namespace bl::ml_common
