// test_naive_bayes.cpp: the naive Bayes estimators and nearest_centroid against a float64
// evaluation of their formulas on random data (probabilities within 2e-5), identical bytes at
// thread counts 1, 2 and 3 on a larger fit, and each refusal named: negative counts, alpha = 0,
// zero variance without smoothing, a category unseen in fit, one class for nearest_centroid.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ops.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

using Data = ml_common::HostData;

// n rows, d features, 3 classes 0, 1, 2; counts: integers 0 to 7, else uniform in [-2, 2) shifted by class.
Data make_data(int64_t n, int64_t d, bool counts, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  out.c = 3;
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % 3);
    out.y.push_back(static_cast<float>(c));
    for (int64_t j = 0; j < d; ++j) {
      float u = rng.uniform_pm1();
      out.x.push_back(counts ? std::floor(4.0f * (u + 1.0f) * (j % 3 == c ? 0.999f : 0.5f))
                             : 2.0f * u + 0.5f * static_cast<float>(c) * static_cast<float>(j % 2));
    }
  }
  return out;
}

Tensor X_of(const Data& s) { return s.X(); }
Tensor y_of(const Data& s) { return s.Y(); }

// The float64 joint log-likelihood of each naive Bayes form (alpha = 1, fit_prior, binarize = 0).
std::vector<double> reference_jll(const std::string& name, const Data& tr, const Data& te) {
  const int64_t c = 3, d = tr.d;
  std::vector<double> cnt(c, 0), sum(c * d, 0), sq(c * d, 0);
  for (int64_t i = 0; i < tr.n; ++i) {
    int k = static_cast<int>(tr.y[i]);
    cnt[k] += 1;
    for (int64_t j = 0; j < d; ++j) {
      double v = tr.x[i * d + j];
      if (name == "bernoulli_nb") v = v > 0 ? 1 : 0;
      sum[k * d + j] += v;
    }
  }
  std::vector<double> jll(te.n * c);
  if (name == "gaussian_nb") {
    double maxvar = 0;
    for (int64_t j = 0; j < d; ++j) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < tr.n; ++i) m += tr.x[i * d + j];
      m /= tr.n;
      for (int64_t i = 0; i < tr.n; ++i) v += (tr.x[i * d + j] - m) * (tr.x[i * d + j] - m);
      maxvar = std::max(maxvar, v / tr.n);
    }
    for (int64_t i = 0; i < tr.n; ++i) {
      int k = static_cast<int>(tr.y[i]);
      for (int64_t j = 0; j < d; ++j) {
        double dv = tr.x[i * d + j] - sum[k * d + j] / cnt[k];
        sq[k * d + j] += dv * dv;
      }
    }
    for (int64_t i = 0; i < te.n; ++i)
      for (int64_t k = 0; k < c; ++k) {
        double s = std::log(cnt[k] / tr.n);
        for (int64_t j = 0; j < d; ++j) {
          double var = sq[k * d + j] / cnt[k] + 1e-9 * maxvar, dv = te.x[i * d + j] - sum[k * d + j] / cnt[k];
          s -= 0.5 * std::log(2 * M_PI * var) + 0.5 * dv * dv / var;
        }
        jll[i * c + k] = s;
      }
    return jll;
  }
  for (int64_t i = 0; i < te.n; ++i)
    for (int64_t k = 0; k < c; ++k) {
      double total = 0;
      for (int64_t j = 0; j < d; ++j) total += sum[k * d + j] + 1;
      double s = std::log(cnt[k] / tr.n);
      for (int64_t j = 0; j < d; ++j) {
        if (name == "multinomial_nb") {
          s += te.x[i * d + j] * std::log((sum[k * d + j] + 1) / total);
        } else {  // bernoulli_nb
          double p = (sum[k * d + j] + 1) / (cnt[k] + 2);
          s += te.x[i * d + j] > 0 ? std::log(p) : std::log(1 - p);
        }
      }
      jll[i * c + k] = s;
    }
  return jll;
}

TEST(NaiveBayes, ProbabilitiesMatchAFloat64Evaluation) {
  for (const char* name : {"gaussian_nb", "multinomial_nb", "bernoulli_nb"}) {
    const bool counts = std::string(name) == "multinomial_nb";
    for (int64_t n : {7, 60, 301}) {
      Data tr = make_data(n, 5, counts, 1 + n), te = make_data(40, 5, counts, 2 + n);
      auto est = ml::make_estimator(name);
      est->fit(X_of(tr), y_of(tr));
      std::vector<float> p = est->predict_proba(X_of(te)).to_vector<float>();
      std::vector<double> want = ml_common::softmax_rows(reference_jll(name, tr, te), te.n, 3);
      ASSERT_EQ(p.size(), want.size());
      for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], want[i], 2e-5) << name << " n=" << n << " at " << i;
    }
  }
}

TEST(NaiveBayes, SameBytesAtThreads123OnALargerFitAndAnInputChangeMovesThem) {
  for (const char* name :
       {"gaussian_nb", "multinomial_nb", "complement_nb", "bernoulli_nb", "categorical_nb", "nearest_centroid"}) {
    const bool counts = std::string(name) != "gaussian_nb" && std::string(name) != "nearest_centroid";
    Data tr = make_data(2000, 37, counts, 5), te = make_data(513, 37, counts, 6);
    ml_common::expect_same_bytes_at_threads_123(name, {}, tr.X(), tr.Y(), te.X());
    // Sabotage arm: one value moved by 1 (bernoulli_nb: its binary feature flipped). One ulp would
    // not do: a class mean of 667 rows rounds it away.
    const float v = tr.x[0];
    const float moved = std::string(name) == "bernoulli_nb" ? (v > 0 ? 0.0f : 1.0f) : v + 1.0f;
    ml_common::expect_input_change_moves_the_model(name, {}, tr, moved);
  }
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(NaiveBayes, BadInputsAreNamedErrors) {
  Data counts = make_data(30, 4, true, 9), real = make_data(30, 4, false, 9);
  // Negative counts.
  for (const char* name : {"multinomial_nb", "complement_nb", "categorical_nb"})
    EXPECT_TRUE(has(error_of([&] { ml::make_estimator(name)->fit(X_of(real), y_of(real)); }), "non-negative"))
        << name;
  // alpha = 0 with force_alpha: refused; force_alpha=false raises it to 1e-10.
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("multinomial_nb", {{"alpha", "0"}})->fit(X_of(counts), y_of(counts));
                  }),
                  "alpha=0"));
  EXPECT_EQ(error_of([&] {
              ml::make_estimator("multinomial_nb", {{"alpha", "0"}, {"force_alpha", "false"}})
                  ->fit(X_of(counts), y_of(counts));
            }),
            "(no error)");
  // Constant features with var_smoothing = 0: zero variance.
  Data flat = real;
  for (float& v : flat.x) v = 1.5f;
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("gaussian_nb", {{"var_smoothing", "0"}})->fit(X_of(flat), y_of(flat));
                  }),
                  "zero variance"));
  // Non-integral categories at fit, an unseen category at predict.
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("categorical_nb")->fit(bl::abs(X_of(real)), y_of(real)); }),
                  "integer categories"));
  auto cat = ml::make_estimator("categorical_nb");
  cat->fit(X_of(counts), y_of(counts));
  Tensor unseen = Tensor::from_vector(std::vector<float>{0, 0, 0, 99}, {1, 4});
  EXPECT_TRUE(has(error_of([&] { cat->predict(unseen); }), "was not seen in fit"));
  // nearest_centroid needs two classes; naive Bayes accepts one (probability 1).
  std::vector<float> one(30, 4.0f);
  Tensor y1 = Tensor::from_vector(one, {30});
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("nearest_centroid")->fit(X_of(real), y1); }), "class"));
  auto g = ml::make_estimator("gaussian_nb");
  g->fit(X_of(real), y1);
  EXPECT_EQ(g->predict_proba(X_of(real)).to_vector<float>(), std::vector<float>(30, 1.0f));
}

TEST(NaiveBayes, CorruptModelStateIsANamedError) {
  Data counts = make_data(30, 4, true, 9);
  auto cat = ml::make_estimator("categorical_nb");
  cat->fit(X_of(counts), y_of(counts));
  nlohmann::json j = nlohmann::json::parse(cat->to_json_text());
  j["state"]["n_categories"][1] = -3;
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(j); }), "n_categories"));
  j["state"]["n_categories"] = "x";
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(j); }), "n_categories"));
  auto g = ml::make_estimator("gaussian_nb");
  Data real = make_data(30, 4, false, 9);
  g->fit(X_of(real), y_of(real));
  nlohmann::json k = nlohmann::json::parse(g->to_json_text());
  k["state"]["var"] = ml::f32_to_hex(std::vector<float>(12, -1.0f));
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(k); }), "var must be positive"));
}

}  // namespace
}  // namespace bl
