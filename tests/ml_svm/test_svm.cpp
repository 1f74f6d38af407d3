// test_svm.cpp: svc, nu_svc, svr, nu_svr and one_class_svm. A two-point problem solved by hand
// (alpha = 1/2, w = 1, b = 0); the KKT conditions of the fitted duals checked in float64 (every
// alpha in its box, the equality constraints, and the margin conditions within tol plus binary32
// rounding) for two- and three-class svc, for svr, for one_class_svm (sum alpha = nu l, f >= 0 at
// alpha = 0, <= 0 at alpha = 1, 0 when free), nu_svc (the margins at 1 after libsvm's scaling by r)
// and nu_svr (sum coef = 0, sum |coef| <= C nu l); predict_proba of probability=true rows summing
// to 1 and agreeing with predict on separated data; the ovr decision_function against
// scikit-learn's transformation of the ovo values in float64; identical model files and outputs at
// threads 1, 2 and 3 with the sabotage arm; the max_iter warning and the named errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;
using Data = ml_common::HostData;

// n rows, d features in [-1, 1), c classes (row i in class i % c) shifted apart by class, or (c = 0)
// a smooth regression target.
Data make_data(int64_t n, int64_t d, int64_t c, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n, out.d = d, out.c = c;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = c > 0 ? i % c : 0;
    double t = 0;
    for (int64_t j = 0; j < d; ++j) {
      const float v = rng.uniform_pm1() + (c > 0 && j % c == k ? 0.8f : 0.0f);
      out.x.push_back(v);
      t += std::sin(1.5 * v) * (j + 1);
    }
    out.y.push_back(c > 0 ? static_cast<float>(k) : static_cast<float>(t));
  }
  return out;
}

struct Model {
  std::vector<int64_t> support, n_support;
  std::vector<float> sv, dual, intercept;
};

Model model_of(const ml::Estimator& est) {
  nlohmann::json s;
  est.save_state(s);
  Model m;
  m.support = s["support"].get<std::vector<int64_t>>();
  m.n_support = s["n_support"].get<std::vector<int64_t>>();
  m.sv = ml::f32_from_hex(s["support_vectors"].get<std::string>(), "support_vectors");
  m.dual = ml::f32_from_hex(s["dual_coef"].get<std::string>(), "dual_coef");
  m.intercept = ml::f32_from_hex(s["intercept"].get<std::string>(), "intercept");
  return m;
}

// The rbf (gamma > 0) or linear (gamma = 0) kernel in float64.
double kern(const float* a, const float* b, int64_t d, double gamma) {
  double s = 0;
  for (int64_t f = 0; f < d; ++f)
    s += gamma > 0 ? (double(a[f]) - b[f]) * (double(a[f]) - b[f]) : double(a[f]) * b[f];
  return gamma > 0 ? std::exp(-gamma * s) : s;
}

TEST(Svm, TwoPointsByHand) {
  auto est = ml::make_estimator("svc", {{"kernel", "linear"}});
  est->fit(Tensor::from_vector(std::vector<float>{-1.0f, 1.0f}, {2, 1}),
           Tensor::from_vector(std::vector<float>{0.0f, 1.0f}, {2}));
  Model m = model_of(*est);
  EXPECT_EQ(m.support, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m.n_support, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m.dual, (std::vector<float>{-0.5f, 0.5f}));
  EXPECT_EQ(m.intercept, (std::vector<float>{0.0f}));
  Tensor q = Tensor::from_vector(std::vector<float>{-2.0f, 0.25f, 3.0f}, {3, 1});
  EXPECT_EQ(est->decision_function(q).to_vector<float>(), (std::vector<float>{-2.0f, 0.25f, 3.0f}));
  EXPECT_EQ(est->predict(q).to_vector<float>(), (std::vector<float>{0.0f, 1.0f, 1.0f}));
}

// KKT of each class pair of an svc: alpha = |coef| in [0, C], sum y alpha = 0, and y f(x) >= 1 for
// alpha = 0, <= 1 for alpha = C, = 1 for free alpha, each within the slack.
void expect_svc_kkt(const Data& D, double gamma, double C) {
  const double tol = 1e-3, slack = 2 * tol + 1e-4;
  ml::Params p{{"C", std::to_string(C)}, {"kernel", gamma > 0 ? "rbf" : "linear"}, {"tol", "0.001"}};
  if (gamma > 0) p["gamma"] = std::to_string(gamma);
  auto est = ml::make_estimator("svc", p);
  est->fit(D.X(), D.Y());
  Model m = model_of(*est);
  const int64_t c = D.c, nsv = static_cast<int64_t>(m.support.size()), d = D.d;
  const double sign = c == 2 ? -1.0 : 1.0;  // two classes: stored negated (scikit-learn)
  std::vector<int64_t> start(c + 1, 0);
  for (int64_t k = 0; k < c; ++k) start[k + 1] = start[k] + m.n_support[k];
  int64_t pair = 0;
  for (int64_t a = 0; a < c; ++a)
    for (int64_t b = a + 1; b < c; ++b, ++pair) {
      // coef per training row of the pair (0 for rows that are no support vector here).
      std::vector<double> coef(D.n, 0.0);
      for (int64_t s = start[a]; s < start[a + 1]; ++s) coef[m.support[s]] = sign * m.dual[(b - 1) * nsv + s];
      for (int64_t s = start[b]; s < start[b + 1]; ++s) coef[m.support[s]] = sign * m.dual[a * nsv + s];
      const double rho = -sign * m.intercept[pair];
      double ysum = 0;
      int64_t free = 0;
      for (int64_t i = 0; i < D.n; ++i) {
        const int64_t k = static_cast<int64_t>(D.y[i]);
        if (k != a && k != b) continue;
        const double y = k == a ? 1.0 : -1.0, alpha = y * coef[i];
        EXPECT_GE(alpha, -1e-7) << "pair " << a << b << " row " << i;
        EXPECT_LE(alpha, C * (1 + 1e-6)) << "pair " << a << b << " row " << i;
        ysum += y * alpha;
        double f = -rho;
        for (int64_t j = 0; j < D.n; ++j)
          if (coef[j] != 0) f += coef[j] * kern(&D.x[j * d], &D.x[i * d], d, gamma);
        const double margin = y * f;
        if (alpha <= 1e-7 * C) EXPECT_GE(margin, 1 - slack) << "row " << i;
        else if (alpha >= C * (1 - 1e-6)) EXPECT_LE(margin, 1 + slack) << "row " << i;
        else EXPECT_NEAR(margin, 1.0, slack) << "row " << i, ++free;
      }
      EXPECT_NEAR(ysum, 0.0, 1e-5 * C * D.n);
    }
}

TEST(Svm, SvcKktTwoClassesLinearAndRbf) {
  Data D = make_data(120, 4, 2, 11);
  expect_svc_kkt(D, 0.0, 1.0);
  expect_svc_kkt(D, 0.5, 1.0);
  expect_svc_kkt(D, 0.5, 10.0);
}

TEST(Svm, SvcKktThreeClasses) {
  Data D = make_data(150, 3, 3, 12);
  expect_svc_kkt(D, 0.0, 1.0);
  expect_svc_kkt(D, 1.0, 2.0);
}

TEST(Svm, SvrKkt) {
  Data D = make_data(100, 3, 0, 13);
  const double C = 1.0, eps = 0.1, tol = 1e-3, slack = 2 * tol + 1e-4, gamma = 0.5;
  auto est = ml::make_estimator("svr", {{"C", "1"}, {"epsilon", "0.1"}, {"gamma", "0.5"}});
  est->fit(D.X(), D.Y());
  Model m = model_of(*est);
  std::vector<double> coef(D.n, 0.0);
  for (size_t s = 0; s < m.support.size(); ++s) coef[m.support[s]] = m.dual[s];
  double sum = 0;
  for (int64_t i = 0; i < D.n; ++i) {
    EXPECT_LE(std::fabs(coef[i]), C * (1 + 1e-6));
    sum += coef[i];
    double f = m.intercept[0];
    for (int64_t j = 0; j < D.n; ++j)
      if (coef[j] != 0) f += coef[j] * kern(&D.x[j * D.d], &D.x[i * D.d], D.d, gamma);
    const double r = D.y[i] - f;  // coef > 0: r >= eps; coef < 0: r <= -eps; 0: |r| <= eps
    if (coef[i] == 0) EXPECT_LE(std::fabs(r), eps + slack) << i;
    else if (std::fabs(coef[i]) >= C * (1 - 1e-6)) EXPECT_GE(coef[i] > 0 ? r : -r, eps - slack) << i;
    else EXPECT_NEAR(coef[i] > 0 ? r : -r, eps, slack) << i;
  }
  EXPECT_NEAR(sum, 0.0, 1e-5 * D.n);
  // predict is K(X, SV) coef + intercept.
  std::vector<float> pred = est->predict(D.X()).to_vector<float>();
  for (int64_t i = 0; i < D.n; ++i) {
    double f = m.intercept[0];
    for (size_t s = 0; s < m.support.size(); ++s) f += m.dual[s] * kern(&m.sv[s * D.d], &D.x[i * D.d], D.d, gamma);
    EXPECT_NEAR(pred[i], f, 1e-4 * (1 + std::fabs(f)));
  }
}

TEST(Svm, OvrDecisionIsTheTransformedOvo) {
  Data D = make_data(90, 3, 4, 14);
  auto ovo = ml::make_estimator("svc", {{"decision_function_shape", "ovo"}});
  auto ovr = ml::make_estimator("svc", {});
  ovo->fit(D.X(), D.Y());
  ovr->fit(D.X(), D.Y());
  std::vector<float> v = ovo->decision_function(D.X()).to_vector<float>();
  std::vector<float> w = ovr->decision_function(D.X()).to_vector<float>();
  std::vector<float> pred = ovr->predict(D.X()).to_vector<float>();
  const int64_t c = 4, P = 6;
  ASSERT_EQ(static_cast<int64_t>(w.size()), D.n * c);
  for (int64_t i = 0; i < D.n; ++i) {
    std::vector<double> votes(c, 0), conf(c, 0);
    int64_t p = 0;
    for (int64_t a = 0; a < c; ++a)
      for (int64_t b = a + 1; b < c; ++b, ++p) {
        votes[v[i * P + p] > 0 ? a : b] += 1;
        conf[a] += v[i * P + p];
        conf[b] -= v[i * P + p];
      }
    int64_t best = 0;
    for (int64_t k = 0; k < c; ++k) {
      EXPECT_EQ(w[i * c + k], static_cast<float>(votes[k] + conf[k] / (3 * (std::fabs(conf[k]) + 1))));
      if (votes[k] > votes[best]) best = k;
    }
    EXPECT_EQ(pred[i], static_cast<float>(best)) << i;
  }
}

TEST(Svm, SameBytesAtThreads123) {
  Data three = make_data(160, 5, 3, 21), two = make_data(140, 5, 2, 22), reg = make_data(150, 5, 0, 23);
  Data test3 = make_data(40, 5, 3, 24), testr = make_data(40, 5, 0, 25);
  for (const char* k : {"rbf", "linear", "poly", "sigmoid"}) {
    ml_common::expect_same_bytes_at_threads_123("svc", {{"kernel", k}}, three.X(), three.Y(), test3.X());
    ml_common::expect_same_bytes_at_threads_123("svc", {{"kernel", k}}, two.X(), two.Y(), test3.X());
    ml_common::expect_same_bytes_at_threads_123("svr", {{"kernel", k}}, reg.X(), reg.Y(), testr.X());
  }
  ml_common::expect_input_change_moves_the_model("svc", {}, three, 0.37f);
  ml_common::expect_input_change_moves_the_model("svr", {}, reg, 0.37f);
}

// one_class_svm: alpha in [0, 1], sum alpha = nu l; f = K alpha - rho >= 0 where alpha = 0, <= 0 at
// alpha = 1, 0 for free alpha, within the slack; score_samples = decision + offset; predict the sign.
TEST(Svm, OneClassKkt) {
  Data D = make_data(120, 3, 0, 51);
  for (double nu : {0.1, 0.5, 0.93}) {
    const double slack = 2e-3 + 1e-4, gamma = 0.5;
    auto est = ml::make_estimator("one_class_svm", {{"nu", std::to_string(nu)}, {"gamma", "0.5"}});
    est->fit(D.X(), Tensor());
    Model m = model_of(*est);
    std::vector<double> coef(D.n, 0.0);
    double sum = 0;
    for (size_t s = 0; s < m.support.size(); ++s) coef[m.support[s]] = m.dual[s], sum += m.dual[s];
    EXPECT_NEAR(sum, nu * D.n, 1e-5 * D.n);
    std::vector<float> dec = est->decision_function(D.X()).to_vector<float>();
    std::vector<float> ss = est->score_samples(D.X()).to_vector<float>();
    std::vector<float> pred = est->predict(D.X()).to_vector<float>();
    for (int64_t i = 0; i < D.n; ++i) {
      EXPECT_GE(coef[i], 0.0);
      EXPECT_LE(coef[i], 1.0 + 1e-6);
      double f = m.intercept[0];
      for (int64_t j = 0; j < D.n; ++j)
        if (coef[j] != 0) f += coef[j] * kern(&D.x[j * D.d], &D.x[i * D.d], D.d, gamma);
      if (coef[i] == 0) EXPECT_GE(f, -slack) << i;
      else if (coef[i] >= 1 - 1e-6) EXPECT_LE(f, slack) << i;
      else EXPECT_NEAR(f, 0.0, slack) << i;
      EXPECT_NEAR(dec[i], f, 1e-4 * (1 + std::fabs(f))) << i;
      EXPECT_EQ(ss[i], dec[i] - m.intercept[0]) << i;
      EXPECT_EQ(pred[i], dec[i] > 0 ? 1.0f : -1.0f) << i;
    }
  }
}

// nu_svc (two classes): alpha' = y coef in [0, 1/r], sum y alpha' = 0, sum alpha' = nu l / r; the
// margins y f at 1 as C-SVC's with the slack scaled by 1/r (r = nu l / sum alpha').
TEST(Svm, NuSvcKkt) {
  Data D = make_data(120, 4, 2, 52);
  for (double nu : {0.2, 0.6}) {
    const double gamma = 0.5;
    auto est = ml::make_estimator("nu_svc", {{"nu", std::to_string(nu)}, {"gamma", "0.5"}});
    est->fit(D.X(), D.Y());
    Model m = model_of(*est);
    std::vector<double> coef(D.n, 0.0);
    for (size_t s = 0; s < m.support.size(); ++s) coef[m.support[s]] = -m.dual[s];  // two classes: negated
    const double rho = m.intercept[0];  // -(-rho)
    double ysum = 0, asum = 0, amax = 0;
    for (int64_t i = 0; i < D.n; ++i) {
      const double y = D.y[i] == 0 ? 1.0 : -1.0, a = y * coef[i];
      EXPECT_GE(a, -1e-7) << i;
      ysum += coef[i], asum += a, amax = std::max(amax, a);
    }
    const double r = nu * D.n / asum, slack = (2e-3 + 1e-4) / r;
    EXPECT_NEAR(ysum, 0.0, 1e-5 * asum);
    EXPECT_LE(amax, (1 + 1e-5) / r);
    for (int64_t i = 0; i < D.n; ++i) {
      const double y = D.y[i] == 0 ? 1.0 : -1.0, a = y * coef[i];
      double f = -rho;
      for (int64_t j = 0; j < D.n; ++j)
        if (coef[j] != 0) f += coef[j] * kern(&D.x[j * D.d], &D.x[i * D.d], D.d, gamma);
      if (a <= 1e-7 / r) EXPECT_GE(y * f, 1 - slack) << i;
      else if (a >= (1 - 1e-5) / r) EXPECT_LE(y * f, 1 + slack) << i;
      else EXPECT_NEAR(y * f, 1.0, slack) << i;
    }
  }
}

// nu_svr: |coef| <= C, sum coef = 0, sum |coef| <= C nu l; predict = K coef + intercept.
TEST(Svm, NuSvrConstraints) {
  Data D = make_data(100, 3, 0, 53);
  const double C = 2.0, nu = 0.4, gamma = 0.5;
  auto est = ml::make_estimator("nu_svr", {{"C", "2"}, {"nu", "0.4"}, {"gamma", "0.5"}});
  est->fit(D.X(), D.Y());
  Model m = model_of(*est);
  double sum = 0, abs_sum = 0;
  for (float c : m.dual) {
    EXPECT_LE(std::fabs(c), C * (1 + 1e-6));
    sum += c, abs_sum += std::fabs(c);
  }
  EXPECT_NEAR(sum, 0.0, 1e-5 * D.n);
  EXPECT_LE(abs_sum, C * nu * D.n * (1 + 1e-6));
  std::vector<float> pred = est->predict(D.X()).to_vector<float>();
  for (int64_t i = 0; i < D.n; ++i) {
    double f = m.intercept[0];
    for (size_t s = 0; s < m.support.size(); ++s) f += m.dual[s] * kern(&m.sv[s * D.d], &D.x[i * D.d], D.d, gamma);
    EXPECT_NEAR(pred[i], f, 1e-4 * (1 + std::fabs(f)));
  }
}

// probability=true: rows in [0, 1] summing to 1; on well separated classes the argmax is predict's
// class on almost every row; the pairwise sigmoid parameters are stored and round-trip.
TEST(Svm, ProbabilityRows) {
  for (const char* name : {"svc", "nu_svc"})
    for (int64_t c : {2, 3}) {
      Data D = make_data(150, 4, c, 54 + c);
      auto est = ml::make_estimator(name, {{"probability", "true"}});
      est->fit(D.X(), D.Y());
      std::vector<float> p = est->predict_proba(D.X()).to_vector<float>();
      std::vector<float> pred = est->predict(D.X()).to_vector<float>();
      int64_t agree = 0;
      for (int64_t i = 0; i < D.n; ++i) {
        double s = 0;
        int64_t best = 0;
        for (int64_t k = 0; k < c; ++k) {
          EXPECT_GE(p[i * c + k], 0.0f);
          EXPECT_LE(p[i * c + k], 1.0f);
          s += p[i * c + k];
          if (p[i * c + k] > p[i * c + best]) best = k;
        }
        EXPECT_NEAR(s, 1.0, 1e-5) << name << " row " << i;
        agree += static_cast<float>(best) == pred[i];
      }
      EXPECT_GE(agree, D.n * 9 / 10) << name << " c=" << c;
      auto back = ml::estimator_from_json_text(est->to_json_text());
      EXPECT_EQ(back->predict_proba(D.X()).to_vector<float>(), p);
    }
}

TEST(Svm, NewFormsSameBytesAtThreads123) {
  Data three = make_data(160, 5, 3, 61), two = make_data(140, 5, 2, 62), reg = make_data(150, 5, 0, 63);
  Data test3 = make_data(40, 5, 3, 64), testr = make_data(40, 5, 0, 65);
  for (const char* k : {"rbf", "linear", "poly", "sigmoid"}) {
    ml_common::expect_same_bytes_at_threads_123("nu_svc", {{"kernel", k}}, three.X(), three.Y(), test3.X());
    ml_common::expect_same_bytes_at_threads_123("nu_svr", {{"kernel", k}}, reg.X(), reg.Y(), testr.X());
    ml_common::expect_same_bytes_at_threads_123("one_class_svm", {{"kernel", k}}, reg.X(), Tensor(), testr.X());
  }
  ml_common::expect_same_bytes_at_threads_123("svc", {{"probability", "true"}}, three.X(), three.Y(), test3.X());
  ml_common::expect_same_bytes_at_threads_123("svc", {{"probability", "true"}}, two.X(), two.Y(), test3.X());
  ml_common::expect_same_bytes_at_threads_123("nu_svc", {{"probability", "true"}}, three.X(), three.Y(), test3.X());
  ml_common::expect_input_change_moves_the_model("nu_svc", {}, three, 0.37f);
  ml_common::expect_input_change_moves_the_model("nu_svr", {}, reg, 0.37f);
  ml_common::expect_input_change_moves_the_model("one_class_svm", {}, reg, 0.37f);
  ml_common::expect_input_change_moves_the_model("svc", {{"probability", "true"}}, three, 0.37f);
}

TEST(Svm, MaxIterWarns) {
  Data D = make_data(100, 4, 2, 31);
  ml::WarningCollector w;
  auto est = ml::make_estimator("svc", {{"max_iter", "2"}});
  est->fit(D.X(), D.Y());
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_NE(w.messages()[0].find("max_iter=2"), std::string::npos) << w.messages()[0];
}

TEST(Svm, NamedErrors) {
  auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("one_class_svm", {{"nu", "0"}}); }), "nu=0"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("nu_svr", {{"nu", "1.5"}}); }), "nu=1.5"));
  EXPECT_TRUE(has(error_of([] {
                    // classes of 2 and 8 rows: nu (n_a + n_b) / 2 = 5 > 2
                    std::vector<float> y{0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
                    ml::make_estimator("nu_svc", {{"nu", "1"}})->fit(Tensor::zeros({10, 2}), Tensor::from_vector(y, {10}));
                  }),
                  "specified nu is infeasible"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("svc", {{"C", "0"}}); }), "C=0"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("svr", {{"gamma", "-1"}}); }), "gamma=-1"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("svr", {{"max_iter", "0"}}); }), "max_iter=0"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("svc", {{"kernel", "laplacian"}}); }), "kernel"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("svr", {{"epsilon", "-0.1"}}); }), "epsilon"));
  const int64_t big = (int64_t{1} << 14) + 1;
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("svr")->fit(Tensor::zeros({big, 1}), Tensor::zeros({big}));
                  }),
                  "limit is 16384 rows"));
  EXPECT_TRUE(has(error_of([] {
                    ml::make_estimator("svc")->fit(Tensor::zeros({4, 2}), Tensor::zeros({4}));
                  }),
                  "single class"));
  Data D = make_data(30, 3, 2, 41);
  auto est = ml::make_estimator("svc");
  EXPECT_TRUE(has(error_of([&] { est->predict(D.X()); }), "before fit"));
  est->fit(D.X(), D.Y());
  EXPECT_TRUE(has(error_of([&] { est->predict(Tensor::zeros({2, 4})); }), "features"));
  EXPECT_TRUE(has(error_of([&] { est->predict_proba(D.X()); }), "probability=true"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("svr")->decision_function(Tensor::zeros({2, 4})); }),
                  "not supported"));
}

}  // namespace
}  // namespace bl
