// test_discriminant.cpp: linear_discriminant_analysis and quadratic_discriminant_analysis against a
// float64 evaluation of their formulas on random data (probabilities within 1e-4), the LDA transform
// whitening the within-class covariance, identical bytes at thread counts 1, 2 and 3 on a larger fit,
// and each refusal named: one class, one sample in a class, collinear features, bad shrinkage,
// shrinkage with svd, n_components too large, transform with lsqr.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ops.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

using ml_common::softmax_rows;
using Data = ml_common::HostData;

// n rows, d features, c classes 0..c-1; correlated features on different scales, shifted by class.
Data make_data(int64_t n, int64_t d, int64_t c, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out{{}, {}, n, d, c};  // x, y, n, d, c
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i % c;
    out.y.push_back(static_cast<float>(k));
    float prev = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      float u = rng.uniform_pm1() + 0.5f * prev * (k == 1 ? -1.0f : 1.0f);
      prev = u;
      float scale = j % 3 == 0 ? 10.0f : (j % 3 == 1 ? 1.0f : 0.1f);
      out.x.push_back(scale * (u + 0.6f * static_cast<float>(k) * static_cast<float>((j + k) % 2)));
    }
  }
  return out;
}

Tensor X_of(const Data& s) { return s.X(); }
Tensor y_of(const Data& s) { return s.Y(); }

// Solves A x = b (d x d, float64, partial pivoting); returns log |det A|.
double solve(std::vector<double> A, std::vector<double>& b, int64_t d) {
  double logdet = 0;
  for (int64_t col = 0; col < d; ++col) {
    int64_t piv = col;
    for (int64_t r = col + 1; r < d; ++r)
      if (std::fabs(A[r * d + col]) > std::fabs(A[piv * d + col])) piv = r;
    for (int64_t j = 0; j < d; ++j) std::swap(A[col * d + j], A[piv * d + j]);
    std::swap(b[col], b[piv]);
    logdet += std::log(std::fabs(A[col * d + col]));
    for (int64_t r = col + 1; r < d; ++r) {
      double f = A[r * d + col] / A[col * d + col];
      for (int64_t j = col; j < d; ++j) A[r * d + j] -= f * A[col * d + j];
      b[r] -= f * b[col];
    }
  }
  for (int64_t r = d - 1; r >= 0; --r) {
    for (int64_t j = r + 1; j < d; ++j) b[r] -= A[r * d + j] * b[j];
    b[r] /= A[r * d + r];
  }
  return logdet;
}

struct Stats {
  std::vector<double> cnt, mean, scatter;  // [c], [c, d], [c, d, d]
};

Stats stats_of(const Data& tr) {
  const int64_t c = tr.c, d = tr.d;
  Stats s{std::vector<double>(c, 0), std::vector<double>(c * d, 0), std::vector<double>(c * d * d, 0)};
  for (int64_t i = 0; i < tr.n; ++i) {
    int64_t k = static_cast<int64_t>(tr.y[i]);
    s.cnt[k] += 1;
    for (int64_t j = 0; j < d; ++j) s.mean[k * d + j] += tr.x[i * d + j];
  }
  for (int64_t k = 0; k < c; ++k)
    for (int64_t j = 0; j < d; ++j) s.mean[k * d + j] /= s.cnt[k];
  for (int64_t i = 0; i < tr.n; ++i) {
    int64_t k = static_cast<int64_t>(tr.y[i]);
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q < d; ++q)
        s.scatter[(k * d + p) * d + q] += (tr.x[i * d + p] - s.mean[k * d + p]) * (tr.x[i * d + q] - s.mean[k * d + q]);
  }
  return s;
}

// Joint log-likelihood (up to a per-row constant) of QDA (reg) or LDA (pooled covariance / denom).
std::vector<double> reference_jll(bool quadratic, const Data& tr, const Data& te, double reg, double lda_denom) {
  const int64_t c = tr.c, d = tr.d;
  Stats s = stats_of(tr);
  std::vector<double> jll(te.n * c);
  std::vector<double> pooled(d * d, 0);
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < d * d; ++i) pooled[i] += s.scatter[k * d * d + i] / lda_denom;
  for (int64_t k = 0; k < c; ++k) {
    std::vector<double> S(d * d);
    for (int64_t i = 0; i < d * d; ++i)
      S[i] = quadratic ? (1 - reg) * s.scatter[k * d * d + i] / s.cnt[k] + (i % (d + 1) == 0 ? reg : 0)
                       : pooled[i];
    for (int64_t i = 0; i < te.n; ++i) {
      std::vector<double> diff(d), sol(d);
      for (int64_t j = 0; j < d; ++j) diff[j] = sol[j] = te.x[i * d + j] - s.mean[k * d + j];
      double logdet = solve(S, sol, d), m2 = 0;
      for (int64_t j = 0; j < d; ++j) m2 += diff[j] * sol[j];
      jll[i * c + k] = -0.5 * (m2 + (quadratic ? logdet : 0)) + std::log(s.cnt[k] / tr.n);
    }
  }
  return jll;
}

TEST(Discriminant, ProbabilitiesMatchAFloat64Evaluation) {
  struct Case {
    const char* name;
    ml::Params params;
  };
  const Case cases[] = {{"quadratic_discriminant_analysis", {}},
                        {"quadratic_discriminant_analysis", {{"reg_param", "0.3"}}},
                        {"linear_discriminant_analysis", {}},
                        {"linear_discriminant_analysis", {{"solver", "lsqr"}}},
                        {"linear_discriminant_analysis", {{"solver", "eigen"}}}};
  for (const Case& cs : cases) {
    const bool quadratic = std::string(cs.name) == "quadratic_discriminant_analysis";
    for (int64_t c : {2, 3}) {
      for (int64_t n : {40, 301}) {
        Data tr = make_data(n, 5, c, 1 + n + c), te = make_data(50, 5, c, 2 + n + c);
        auto est = ml::make_estimator(cs.name, cs.params);
        est->fit(X_of(tr), y_of(tr));
        std::vector<float> p = est->predict_proba(X_of(te)).to_vector<float>();
        const double reg = quadratic && !cs.params.empty() ? 0.3 : 0.0;
        std::vector<double> want = softmax_rows(reference_jll(quadratic, tr, te, reg, static_cast<double>(n)), te.n, c);
        ASSERT_EQ(p.size(), want.size());
        for (size_t i = 0; i < p.size(); ++i)
          EXPECT_NEAR(p[i], want[i], 1e-4) << cs.name << " c=" << c << " n=" << n << " at " << i;
        // predict is the argmax of predict_proba; decision_function's shape follows the class count.
        Tensor z = est->decision_function(X_of(te));
        EXPECT_EQ(z.ndim(), c == 2 ? 1 : 2) << cs.name;
        std::vector<float> lab = est->predict(X_of(te)).to_vector<float>();
        for (int64_t i = 0; i < te.n; ++i) {
          int64_t best = 0;
          for (int64_t k = 1; k < c; ++k)
            if (want[i * c + k] > want[i * c + best]) best = k;
          if (std::fabs(want[i * c + best] - 1.0 / c) > 1e-3 && lab[i] != static_cast<float>(best)) {
            double gap = 1;
            for (int64_t k = 0; k < c; ++k)
              if (k != best) gap = std::min(gap, want[i * c + best] - want[i * c + k]);
            EXPECT_LT(gap, 1e-4) << cs.name << " row " << i;
          }
        }
      }
    }
  }
}

// The transform directions whiten Sigma: the transformed within-class covariance is the identity.
TEST(Discriminant, TransformWhitensTheWithinClassCovariance) {
  for (const char* solver : {"svd", "eigen"}) {
    Data tr = make_data(400, 6, 4, 9);
    auto est = ml::make_estimator("linear_discriminant_analysis", {{"solver", solver}});
    est->fit(X_of(tr), y_of(tr));
    Tensor T = est->transform(X_of(tr));
    ASSERT_EQ(T.dim(1), 3);
    std::vector<float> t = T.to_vector<float>();
    const int64_t k = 3;
    Data proj{std::vector<float>(t.begin(), t.end()), tr.y, tr.n, k, tr.c};
    Stats s = stats_of(proj);
    const double denom = static_cast<double>(tr.n);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t q = 0; q < k; ++q) {
        double w = 0;
        for (int64_t c = 0; c < tr.c; ++c) w += s.scatter[(c * k + p) * k + q];
        EXPECT_NEAR(w / denom, p == q ? 1.0 : 0.0, 1e-3) << solver << " " << p << "," << q;
      }
  }
}

TEST(Discriminant, SameBytesAtThreads123OnALargerFit) {
  struct Case {
    const char* name;
    ml::Params params;
  };
  const Case cases[] = {{"quadratic_discriminant_analysis", {}},
                        {"linear_discriminant_analysis", {}},
                        {"linear_discriminant_analysis", {{"solver", "eigen"}, {"shrinkage", "auto"}}},
                        {"linear_discriminant_analysis", {{"solver", "lsqr"}, {"shrinkage", "0.2"}}}};
  for (const Case& cs : cases) {
    Data tr = make_data(2000, 37, 4, 5), te = make_data(513, 37, 4, 6);
    std::string model0;
    std::vector<unsigned char> out0;
    const int saved = num_threads();
    for (int t : {1, 2, 3}) {
      set_num_threads(t);
      auto est = ml::make_estimator(cs.name, cs.params);
      est->fit(X_of(tr), y_of(tr));
      std::string m = est->to_json_text();
      std::vector<unsigned char> o = ml_common::outputs_of(*est, X_of(te));
      auto again = ml::estimator_from_json_text(m);
      EXPECT_EQ(ml_common::outputs_of(*again, X_of(te)), o) << cs.name << " reloaded";
      std::vector<unsigned char> z = ml_common::bytes_of(est->decision_function(X_of(te)));
      o.insert(o.end(), z.begin(), z.end());
      if (t == 1) {
        model0 = m;
        out0 = o;
      } else {
        EXPECT_EQ(m, model0) << cs.name << " threads=" << t;
        EXPECT_EQ(o, out0) << cs.name << " threads=" << t;
      }
    }
    set_num_threads(saved);
  }
}

TEST(Discriminant, ShrinkageMovesTowardsTheScaledIdentity) {
  // shrinkage=1 gives Sigma = mean variance x I: coef_k = mean_k / mu, a pure function of the means.
  Data tr = make_data(90, 3, 3, 4);
  auto est = ml::make_estimator("linear_discriminant_analysis", {{"solver", "lsqr"}, {"shrinkage", "1"}});
  est->fit(X_of(tr), y_of(tr));
  Stats s = stats_of(tr);
  double mu = 0;
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < 3; ++j) mu += s.scatter[(k * 3 + j) * 3 + j] / 90.0;  // prior_k x trace(Cov_k)
  mu /= 3;
  nlohmann::json st = nlohmann::json::parse(est->to_json_text())["state"];
  std::vector<float> coef = ml::f32_from_hex(st["coef"].get<std::string>(), "coef");
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(coef[k * 3 + j], s.mean[k * 3 + j] / mu, 1e-4 * (1 + std::fabs(coef[k * 3 + j])));
  EXPECT_EQ(est->get_params().at("shrinkage"), "1");
}

TEST(Discriminant, RefusalsAreNamed) {
  Data tr = make_data(30, 3, 3, 7);
  Tensor X = X_of(tr), y = y_of(tr);
  auto lda = [](ml::Params p) { return ml::make_estimator("linear_discriminant_analysis", p); };
  auto qda = [](ml::Params p) { return ml::make_estimator("quadratic_discriminant_analysis", p); };
  auto has = [](const std::string& msg, const char* part) { return msg.find(part) != std::string::npos; };

  std::string e = error_of([&] { lda({{"shrinkage", "auto"}})->fit(X, y); });
  EXPECT_TRUE(has(e, "not supported with solver=svd")) << e;
  e = error_of([&] { lda({{"shrinkage", "2"}}); });
  EXPECT_TRUE(has(e, "shrinkage=2") && has(e, "[0, 1]")) << e;
  e = error_of([&] { lda({{"shrinkage", "lots"}}); });
  EXPECT_TRUE(has(e, "shrinkage=lots")) << e;
  e = error_of([&] { lda({{"n_components", "3"}})->fit(X, y); });
  EXPECT_TRUE(has(e, "n_components=3")) << e;
  e = error_of([&] {
    auto m = lda({{"solver", "lsqr"}});
    m->fit(X, y);
    m->transform(X);
  });
  EXPECT_TRUE(has(e, "transform is not supported with solver=lsqr")) << e;
  Tensor one = Tensor::from_vector(std::vector<float>(30, 1.0f), {30});
  e = error_of([&] { lda({})->fit(X, one); });
  EXPECT_TRUE(has(e, "linear_discriminant_analysis")) << e;
  e = error_of([&] { qda({})->fit(X, one); });
  EXPECT_TRUE(has(e, "quadratic_discriminant_analysis")) << e;

  // A class with one sample.
  std::vector<float> ys = tr.y;
  ys[0] = 7.0f;
  e = error_of([&] { qda({})->fit(X, Tensor::from_vector(ys, {30})); });
  EXPECT_TRUE(has(e, "only 1 sample in class 7")) << e;

  // A duplicated column: collinear. QDA refuses without reg_param, LDA lsqr / eigen refuse as singular,
  // LDA svd drops the direction, shrinkage fixes it.
  std::vector<float> xd;
  for (int64_t i = 0; i < tr.n; ++i) {
    for (int64_t j = 0; j < 3; ++j) xd.push_back(tr.x[i * 3 + j]);
    xd.push_back(tr.x[i * 3]);
  }
  Tensor Xd = Tensor::from_vector(xd, {30, 4});
  e = error_of([&] { qda({})->fit(Xd, y); });
  EXPECT_TRUE(has(e, "variables are collinear in class 0")) << e;
  EXPECT_EQ(error_of([&] { qda({{"reg_param", "0.5"}})->fit(Xd, y); }), "(no error)");
  for (const char* solver : {"lsqr", "eigen"}) {
    e = error_of([&] { lda({{"solver", solver}})->fit(Xd, y); });
    EXPECT_TRUE(has(e, "singular")) << e;
    EXPECT_EQ(error_of([&] { lda({{"solver", solver}, {"shrinkage", "auto"}})->fit(Xd, y); }), "(no error)");
  }
  auto svd = lda({});
  svd->fit(Xd, y);
  auto plain = lda({});
  plain->fit(X, y);
  std::vector<float> a = svd->predict_proba(Xd).to_vector<float>(), b = plain->predict_proba(X).to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4) << i;
}

}  // namespace
}  // namespace bl
