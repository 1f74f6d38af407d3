// test_dictionary_sparse_pca.cpp: dictionary_learning and sparse_pca against float64 references.
// dictionary_learning: the cost error_ never rises, its last value equals a float64 evaluation of
// 0.5 ||X - U V||^2 + alpha ||U||_1 from the stored atoms V and the lasso code U of transform, that
// code meets the float64 lasso optimality conditions (with a sabotage arm: a perturbed code fails
// them), atoms of norm at most 1, the threshold code equals the float64 soft threshold, the omp code
// is the least squares fit on its chosen atoms (their count as asked), positive_code / positive_dict
// clip, split_sign splits the code's signs, fewer rows than features fit alike.
// sparse_pca: unit components with the sign rule, transform the float64 ridge projection, more
// sparsity with a larger alpha. Both: identical bytes at threads 1, 2 and 3, a changed input moves
// the model, state round trips, the iteration limit warns, each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::expect_refusal_names;
using ml_common::state_f32;

Data make_data(int64_t n, int64_t d, int64_t r, float noise, uint64_t seed) {
  return ml_common::low_rank_rows(n, d, r, noise, seed, 0.0);
}

// 0.5 ||X - U V||^2 + alpha ||U||_1 in float64.
double cost64(const Data& x, const std::vector<float>& u, const std::vector<float>& v, int64_t k, double alpha) {
  double sq = 0.0, l1 = 0.0;
  for (int64_t i = 0; i < x.n; ++i) {
    for (int64_t j = 0; j < x.d; ++j) {
      double r = x.x[i * x.d + j];
      for (int64_t t = 0; t < k; ++t) r -= static_cast<double>(u[i * k + t]) * v[t * x.d + j];
      sq += r * r;
    }
    for (int64_t t = 0; t < k; ++t) l1 += std::fabs(static_cast<double>(u[i * k + t]));
  }
  return 0.5 * sq + alpha * l1;
}

// The largest violation of the lasso optimality conditions of code u [n, k] for the dictionary v
// [k, d]: with g = V (x - V^T u), |g_t - alpha sign(u_t)| where u_t != 0, else max(|g_t| - alpha, 0);
// relative to alpha.
double kkt_violation(const Data& x, const std::vector<float>& u, const std::vector<float>& v, int64_t k, double alpha) {
  double worst = 0.0;
  for (int64_t i = 0; i < x.n; ++i) {
    std::vector<double> r(static_cast<size_t>(x.d));
    for (int64_t j = 0; j < x.d; ++j) {
      r[j] = x.x[i * x.d + j];
      for (int64_t t = 0; t < k; ++t) r[j] -= static_cast<double>(u[i * k + t]) * v[t * x.d + j];
    }
    for (int64_t t = 0; t < k; ++t) {
      double g = 0.0;
      for (int64_t j = 0; j < x.d; ++j) g += static_cast<double>(v[t * x.d + j]) * r[j];
      const double c = u[i * k + t];
      const double viol = c != 0.0 ? std::fabs(g - alpha * (c > 0.0 ? 1.0 : -1.0)) : std::max(std::fabs(g) - alpha, 0.0);
      worst = std::max(worst, viol / alpha);
    }
  }
  return worst;
}

TEST(DictionaryLearning, CostFallsAndMatchesAFloat64Evaluation) {
  const Data x = make_data(80, 10, 4, 0.2f, 11);
  const int64_t k = 6;
  for (const char* alpha : {"0.1", "1"}) {
    auto est = ml::make_estimator("dictionary_learning", {{"n_components", std::to_string(k)}, {"alpha", alpha},
                                                          {"transform_algorithm", "lasso_cd"}});
    est->fit(x.X());
    const std::vector<float> err = state_f32(*est, "error"), v = state_f32(*est, "components");
    ASSERT_EQ(static_cast<int64_t>(err.size()), ml_common::state_of(*est)["n_iter"].get<int64_t>());
    ASSERT_GE(err.size(), 2u);
    for (size_t i = 1; i < err.size(); ++i) EXPECT_LE(err[i], err[i - 1] * (1.0f + 1e-6f)) << alpha << " " << i;
    EXPECT_LT(err.back(), err.front()) << alpha;
    for (int64_t t = 0; t < k; ++t) {
      double q = 0.0;
      for (int64_t j = 0; j < x.d; ++j) q += static_cast<double>(v[t * x.d + j]) * v[t * x.d + j];
      EXPECT_LE(std::sqrt(q), 1.0 + 1e-6) << alpha << " atom " << t;
    }
    // transform (lasso_cd at the same alpha, from a zero code) reaches the fit's code: the float64 cost
    // of its code on the stored atoms equals the last error_ to binary32 rounding.
    const std::vector<float> u = est->transform(x.X()).to_vector<float>();
    const double a = std::stod(alpha);
    EXPECT_NEAR(cost64(x, u, v, k, a), err.back(), 1e-5 * err.back()) << alpha;
    EXPECT_LT(kkt_violation(x, u, v, k, a), 1e-3) << alpha;
    // Sabotage: the largest coefficient moved by 1% breaks the optimality conditions.
    std::vector<float> bad = u;
    size_t big = 0;
    for (size_t i = 1; i < bad.size(); ++i)
      if (std::fabs(bad[i]) > std::fabs(bad[big])) big = i;
    bad[big] *= 1.01f;
    EXPECT_GT(kkt_violation(x, bad, v, k, a), 1e-2) << alpha;
    EXPECT_GT(cost64(x, bad, v, k, a), cost64(x, u, v, k, a)) << alpha;
  }
}

TEST(DictionaryLearning, ThresholdAndOmpCodesEqualFloat64References) {
  const Data x = make_data(40, 12, 5, 0.3f, 13);
  const int64_t k = 5;
  auto th = ml::make_estimator("dictionary_learning", {{"n_components", "5"}, {"transform_algorithm", "threshold"},
                                                       {"transform_alpha", "0.5"}, {"max_iter", "20"}});
  th->fit(x.X());
  const std::vector<float> v = state_f32(*th, "components"), u = th->transform(x.X()).to_vector<float>();
  int64_t zeros = 0;
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t t = 0; t < k; ++t) {
      double q = 0.0;
      for (int64_t j = 0; j < x.d; ++j) q += static_cast<double>(v[t * x.d + j]) * x.x[i * x.d + j];
      const double want = std::fabs(q) > 0.5 ? (q > 0.0 ? q - 0.5 : q + 0.5) : 0.0;
      EXPECT_NEAR(u[i * k + t], want, 1e-6 * (1.0 + std::fabs(want))) << i << " " << t;
      zeros += u[i * k + t] == 0.0f;
    }
  EXPECT_GT(zeros, 0);
  // omp: transform_n_nonzero_coefs atoms per row, the code the least squares fit on them (the
  // residual orthogonal to each chosen atom) and no worse than the zero code.
  auto omp = ml::make_estimator("dictionary_learning", {{"n_components", "5"}, {"transform_n_nonzero_coefs", "2"},
                                                        {"max_iter", "20"}});
  omp->fit(x.X());
  const std::vector<float> vo = state_f32(*omp, "components"), uo = omp->transform(x.X()).to_vector<float>();
  for (int64_t i = 0; i < x.n; ++i) {
    std::vector<int64_t> s;
    for (int64_t t = 0; t < k; ++t)
      if (uo[i * k + t] != 0.0f) s.push_back(t);
    ASSERT_EQ(s.size(), 2u) << i;
    // Least squares: the residual is orthogonal to the chosen atoms.
    std::vector<double> r(static_cast<size_t>(x.d));
    double rn = 0.0, xn = 0.0;
    for (int64_t j = 0; j < x.d; ++j) {
      r[j] = x.x[i * x.d + j];
      for (int64_t t : s) r[j] -= static_cast<double>(uo[i * k + t]) * vo[t * x.d + j];
      rn += r[j] * r[j];
      xn += static_cast<double>(x.x[i * x.d + j]) * x.x[i * x.d + j];
    }
    for (int64_t t : s) {
      double g = 0.0;
      for (int64_t j = 0; j < x.d; ++j) g += vo[t * x.d + j] * r[j];
      EXPECT_NEAR(g, 0.0, 1e-4 * std::sqrt(xn)) << i << " atom " << t;
    }
    EXPECT_LE(rn, xn * (1.0 + 1e-6)) << i;
  }
  // The default count: floor(min(max(d / 10, 1), k)) = 1 atom per row for d = 12.
  auto def = ml::make_estimator("dictionary_learning", {{"n_components", "5"}, {"max_iter", "20"}});
  def->fit(x.X());
  const std::vector<float> ud = def->transform(x.X()).to_vector<float>();
  for (int64_t i = 0; i < x.n; ++i) {
    int64_t nz = 0;
    for (int64_t t = 0; t < k; ++t) nz += ud[i * k + t] != 0.0f;
    EXPECT_EQ(nz, 1) << i;
  }
}

TEST(DictionaryLearning, PositiveConstraintsClip) {
  const Data x = make_data(50, 8, 3, 0.2f, 17);
  auto est = ml::make_estimator("dictionary_learning", {{"n_components", "4"}, {"positive_code", "true"},
                                                        {"positive_dict", "true"}, {"alpha", "0.2"},
                                                        {"transform_algorithm", "lasso_cd"}});
  est->fit(x.X());
  for (float v : state_f32(*est, "components")) EXPECT_GE(v, 0.0f);
  for (float v : est->transform(x.X()).to_vector<float>()) EXPECT_GE(v, 0.0f);
  const std::vector<float> err = state_f32(*est, "error");
  for (size_t i = 1; i < err.size(); ++i) EXPECT_LE(err[i], err[i - 1] * (1.0f + 1e-6f)) << i;
}

TEST(DictionaryLearning, SplitSignAndWideData) {
  const Data x = make_data(30, 8, 3, 0.2f, 21);
  const ml::Params p = {{"n_components", "4"}, {"alpha", "0.3"}, {"transform_algorithm", "lasso_cd"}};
  auto plain = ml::make_estimator("dictionary_learning", p);
  ml::Params ps = p;
  ps["split_sign"] = "true";
  auto split = ml::make_estimator("dictionary_learning", ps);
  plain->fit(x.X());
  split->fit(x.X());
  const std::vector<float> u = plain->transform(x.X()).to_vector<float>(), s = split->transform(x.X()).to_vector<float>();
  ASSERT_EQ(s.size(), 2 * u.size());
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t t = 0; t < 4; ++t) {
      EXPECT_EQ(s[i * 8 + t], std::max(u[i * 4 + t], 0.0f)) << i << " " << t;
      EXPECT_EQ(s[i * 8 + 4 + t], -std::min(u[i * 4 + t], 0.0f)) << i << " " << t;
    }
  // Fewer rows than features: the SVD start from the rows' Gram matrix; the cost still falls and
  // equals the float64 evaluation.
  const Data wide = make_data(8, 20, 3, 0.2f, 22), wide_test = make_data(5, 20, 3, 0.2f, 23);
  auto est = ml::make_estimator("dictionary_learning", p);
  est->fit(wide.X());
  const std::vector<float> err = state_f32(*est, "error"), v = state_f32(*est, "components");
  for (size_t i = 1; i < err.size(); ++i) EXPECT_LE(err[i], err[i - 1] * (1.0f + 1e-6f)) << i;
  EXPECT_NEAR(cost64(wide, est->transform(wide.X()).to_vector<float>(), v, 4, 0.3), err.back(), 1e-5 * err.back());
  ml_common::expect_same_bytes_at_threads_123("dictionary_learning", p, wide.X(), Tensor(), wide_test.X());
}

TEST(DictionaryLearning, IterationLimitWarnsAndStops) {
  const Data x = make_data(40, 6, 3, 0.2f, 19);
  ml::WarningCollector warnings;
  auto est = ml::make_estimator("dictionary_learning", {{"n_components", "3"}, {"max_iter", "2"}, {"tol", "0"}});
  est->fit(x.X());
  EXPECT_EQ(ml_common::state_of(*est)["n_iter"].get<int64_t>(), 2);
  ASSERT_FALSE(warnings.messages().empty());
  EXPECT_NE(warnings.messages()[0].find("max_iter=2"), std::string::npos) << warnings.messages()[0];
}

// The components C [k, d] (unit rows or zero), the mean and the transform of x: the float64 ridge
// projection (x - mean) C^T (C C^T + ridge I)^-1 by Gauss-Jordan elimination.
void expect_ridge_transform(const ml::Estimator& est, const Data& x, double ridge) {
  const std::vector<float> c = state_f32(est, "components"), mean = state_f32(est, "mean");
  const int64_t d = x.d, k = static_cast<int64_t>(c.size()) / d;
  const std::vector<float> got = est.transform(x.X()).to_vector<float>();
  std::vector<double> a(static_cast<size_t>(k * 2 * k), 0.0);  // [C C^T + ridge I | I]
  for (int64_t s = 0; s < k; ++s) {
    for (int64_t t = 0; t < k; ++t) {
      double v = 0.0;
      for (int64_t j = 0; j < d; ++j) v += static_cast<double>(c[s * d + j]) * c[t * d + j];
      a[s * 2 * k + t] = v + (s == t ? ridge : 0.0);
    }
    a[s * 2 * k + k + s] = 1.0;
  }
  for (int64_t p = 0; p < k; ++p) {
    const double piv = a[p * 2 * k + p];
    for (int64_t t = 0; t < 2 * k; ++t) a[p * 2 * k + t] /= piv;
    for (int64_t r = 0; r < k; ++r) {
      if (r == p) continue;
      const double f = a[r * 2 * k + p];
      for (int64_t t = 0; t < 2 * k; ++t) a[r * 2 * k + t] -= f * a[p * 2 * k + t];
    }
  }
  for (int64_t i = 0; i < x.n; ++i) {
    std::vector<double> xc(static_cast<size_t>(k), 0.0);  // C (x - mean)
    for (int64_t s = 0; s < k; ++s)
      for (int64_t j = 0; j < d; ++j) xc[s] += static_cast<double>(c[s * d + j]) * (x.x[i * d + j] - mean[j]);
    for (int64_t t = 0; t < k; ++t) {
      double want = 0.0;
      for (int64_t s = 0; s < k; ++s) want += a[t * 2 * k + k + s] * xc[s];
      EXPECT_NEAR(got[i * k + t], want, 1e-4 * (1.0 + std::fabs(want))) << i << " " << t;
    }
  }
}

TEST(SparsePCA, UnitComponentsRidgeTransformAndSparsityGrowsWithAlpha) {
  const Data x = make_data(70, 9, 4, 0.3f, 23);
  int64_t last_zeros = -1;
  for (const char* alpha : {"0.05", "1", "5"}) {
    auto est = ml::make_estimator("sparse_pca", {{"n_components", "4"}, {"alpha", alpha}});
    est->fit(x.X());
    const std::vector<float> c = state_f32(*est, "components"), mean = state_f32(*est, "mean");
    int64_t zeros = 0;
    for (int64_t t = 0; t < 4; ++t) {
      double q = 0.0;
      int64_t big = 0;
      for (int64_t j = 0; j < x.d; ++j) {
        q += static_cast<double>(c[t * x.d + j]) * c[t * x.d + j];
        zeros += c[t * x.d + j] == 0.0f;
        if (std::fabs(c[t * x.d + j]) > std::fabs(c[t * x.d + big])) big = j;
      }
      if (q > 0.0) {
        EXPECT_NEAR(q, 1.0, 1e-6) << alpha << " component " << t;
        EXPECT_GT(c[t * x.d + big], 0.0f) << alpha << " sign rule " << t;
      }
    }
    for (int64_t j = 0; j < x.d; ++j) {
      double m = 0.0;
      for (int64_t i = 0; i < x.n; ++i) m += x.x[i * x.d + j];
      EXPECT_NEAR(mean[j], m / static_cast<double>(x.n), 1e-6) << j;
    }
    const std::vector<float> err = state_f32(*est, "error");
    for (size_t i = 1; i < err.size(); ++i) EXPECT_LE(err[i], err[i - 1] * (1.0f + 1e-6f)) << alpha << " " << i;
    EXPECT_GE(zeros, last_zeros) << alpha;
    last_zeros = zeros;
    expect_ridge_transform(*est, x, 0.01);
  }
  EXPECT_GT(last_zeros, 0);
  auto r = ml::make_estimator("sparse_pca", {{"n_components", "3"}, {"ridge_alpha", "2"}});
  r->fit(x.X());
  expect_ridge_transform(*r, x, 2.0);
}

TEST(DictionarySparsePCA, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = make_data(300, 12, 5, 0.2f, 31), test = make_data(100, 12, 5, 0.2f, 32);
  for (const char* algorithm : {"lasso_cd", "omp", "threshold"})
    ml_common::expect_same_bytes_at_threads_123(
        "dictionary_learning", {{"n_components", "8"}, {"alpha", "0.3"}, {"transform_algorithm", algorithm}},
        train.X(), Tensor(), test.X());
  ml_common::expect_same_bytes_at_threads_123("sparse_pca", {{"n_components", "5"}, {"alpha", "0.5"}}, train.X(),
                                              Tensor(), test.X());
  const Data small = make_data(30, 5, 3, 0.1f, 4);
  ml_common::expect_input_change_moves_the_model("dictionary_learning", {{"n_components", "3"}}, small, 3.0f);
  ml_common::expect_input_change_moves_the_model("sparse_pca", {{"n_components", "3"}}, small, 3.0f);
}

TEST(DictionarySparsePCA, StateRoundTrip) {
  const Data x = make_data(40, 6, 3, 0.2f, 9);
  for (const char* name : {"dictionary_learning", "sparse_pca"}) {
    auto est = ml::make_estimator(name);
    est->fit(x.X());
    ml_common::expect_transformer_state_round_trip(*est, x.X());
  }
}

TEST(DictionarySparsePCA, RefusalsAreNamed) {
  for (const char* name : {"dictionary_learning", "sparse_pca"}) {
    expect_refusal_names([&] { ml::make_estimator(name, {{"n_components", "0"}}); }, "n_components", name);
    expect_refusal_names([&] { ml::make_estimator(name, {{"alpha", "-1"}}); }, "alpha", name);
    expect_refusal_names([&] { ml::make_estimator(name, {{"tol", "-1"}}); }, "tol", name);
    expect_refusal_names([&] { ml::make_estimator(name, {{"max_iter", "0"}}); }, "max_iter", name);
    expect_refusal_names([&] { ml::make_estimator(name, {{"n_components", "1.5"}})->fit(make_data(5, 3, 2, 0.1f, 1).X()); },
                         "n_components", name);
    const Data x = make_data(10, 4, 2, 0.1f, 1), other = make_data(6, 3, 2, 0.1f, 2);
    Data bad = x;
    bad.x[5] = std::nanf("");
    ml_common::expect_transformer_input_refusals(name, x, other, bad, "non-finite");
  }
  expect_refusal_names([] { ml::make_estimator("dictionary_learning", {{"fit_algorithm", "omp"}}); }, "fit_algorithm");
  expect_refusal_names([] { ml::make_estimator("dictionary_learning", {{"transform_algorithm", "lasso"}}); },
                       "transform_algorithm");
  expect_refusal_names([] { ml::make_estimator("dictionary_learning", {{"transform_alpha", "-1"}}); }, "transform_alpha");
  expect_refusal_names(
      [] { ml::make_estimator("dictionary_learning", {{"positive_code", "true"}})->fit(make_data(8, 3, 2, 0.1f, 1).X()); },
      "omp");
  expect_refusal_names([] { ml::make_estimator("sparse_pca", {{"method", "lars"}}); }, "method");
  expect_refusal_names([] { ml::make_estimator("sparse_pca", {{"ridge_alpha", "-1"}}); }, "ridge_alpha");
}

}  // namespace
}  // namespace bl
