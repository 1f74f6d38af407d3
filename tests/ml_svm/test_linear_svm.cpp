// test_linear_svm.cpp: linear_svc and linear_svr: optimality of the fitted coefficients in float64
// (the primal gradient is 0 for the squared losses; for hinge and epsilon_insensitive no coordinate
// move lowers the primal objective), the intercept as a regularized column of intercept_scaling,
// one-vs-rest against the binary problems, the visiting order (random_state changes the bits, not
// the solution), identical model files and outputs at threads 1/2/3 with the sabotage arm, save /
// load, the max_iter warning and named errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/linear.h"
#include "bitlearn/ml/progress.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;
using ml_common::HostData;

HostData regression_data(int64_t n, int64_t d, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  HostData out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.3;
    for (int64_t j = 0; j < d; ++j) {
      const float v = rng.uniform_pm1();
      out.x.push_back(v);
      s += (j % 2 ? -1.0 : 1.0) * (j + 1) * 0.5 * v;
    }
    out.y.push_back(static_cast<float>(s + 0.2 * rng.uniform_pm1()));
  }
  return out;
}

struct Fitted {
  std::vector<double> w;  // coef, then intercept / intercept_scaling (the regularized column)
  double scaling = 1.0;
};

Fitted fitted_of(const ml::Estimator& est, int64_t d, int64_t output, double scaling) {
  const ml::LinearView v = ml::linear_view(est);
  Fitted f;
  f.scaling = scaling;
  for (int64_t k = 0; k < d; ++k) f.w.push_back(v.coef[output * d + k]);
  f.w.push_back(v.intercept[output] / scaling);
  return f;
}

// The primal objective 0.5 |w|^2 + C sum loss_i with the intercept column (value `scaling`).
double primal(const Fitted& f, const HostData& D, const std::vector<double>& y, const std::string& loss, double C,
              double eps) {
  double obj = 0;
  for (double v : f.w) obj += 0.5 * v * v;
  for (int64_t i = 0; i < D.n; ++i) {
    double m = f.w[D.d] * f.scaling;
    for (int64_t j = 0; j < D.d; ++j) m += f.w[j] * D.x[i * D.d + j];
    double l = 0;
    if (loss == "hinge") l = std::max(0.0, 1 - y[i] * m);
    if (loss == "squared_hinge") l = std::pow(std::max(0.0, 1 - y[i] * m), 2);
    if (loss == "epsilon_insensitive") l = std::max(0.0, std::fabs(y[i] - m) - eps);
    if (loss == "squared_epsilon_insensitive") l = std::pow(std::max(0.0, std::fabs(y[i] - m) - eps), 2);
    obj += C * l;
  }
  return obj;
}

// Every single-coordinate move of +-step (relative) leaves the objective no lower (up to rel_tol).
void expect_coordinatewise_minimum(const Fitted& f, const HostData& D, const std::vector<double>& y,
                                   const std::string& loss, double C, double eps, double rel_tol) {
  const double base = primal(f, D, y, loss, C, eps);
  for (size_t j = 0; j < f.w.size(); ++j)
    for (double s : {-1.0, 1.0}) {
      Fitted g = f;
      g.w[j] += s * 1e-3 * (1 + std::fabs(f.w[j]));
      EXPECT_GE(primal(g, D, y, loss, C, eps), base * (1 - rel_tol)) << loss << " coordinate " << j;
    }
}

std::vector<double> signs(const HostData& D, float positive) {
  std::vector<double> y;
  for (float v : D.y) y.push_back(v == positive ? 1.0 : -1.0);
  return y;
}

TEST(LinearSvm, SvcSquaredHingeGradientIsZero) {
  const HostData D = ml_common::uniform_blobs(120, 4, 2, 0.8f, 21);
  for (double scaling : {1.0, 3.0}) {
    const double C = 0.5;
    auto est = ml::make_estimator("linear_svc", {{"C", "0.5"}, {"tol", "1e-9"}, {"max_iter", "100000"},
                                                 {"intercept_scaling", scaling == 1.0 ? "1" : "3"}});
    est->fit(D.X(), D.Y());
    const Fitted f = fitted_of(*est, D.d, 0, scaling);
    const std::vector<double> y = signs(D, 1.0f);
    std::vector<double> g = f.w;
    for (int64_t i = 0; i < D.n; ++i) {
      double m = f.w[D.d] * scaling;
      for (int64_t j = 0; j < D.d; ++j) m += f.w[j] * D.x[i * D.d + j];
      const double r = std::max(0.0, 1 - y[i] * m);
      for (int64_t j = 0; j < D.d; ++j) g[j] -= 2 * C * r * y[i] * D.x[i * D.d + j];
      g[D.d] -= 2 * C * r * y[i] * scaling;
    }
    double wmax = 0;
    for (double v : f.w) wmax = std::max(wmax, std::fabs(v));
    for (size_t j = 0; j < g.size(); ++j) EXPECT_NEAR(g[j], 0.0, 1e-5 * std::max(1.0, wmax)) << j;
  }
}

TEST(LinearSvm, SvcHingeIsACoordinatewiseMinimum) {
  const HostData D = ml_common::uniform_blobs(100, 3, 2, 0.6f, 22);
  auto est = ml::make_estimator("linear_svc", {{"loss", "hinge"}, {"C", "2"}, {"tol", "1e-9"}, {"max_iter", "100000"}});
  est->fit(D.X(), D.Y());
  expect_coordinatewise_minimum(fitted_of(*est, D.d, 0, 1.0), D, signs(D, 1.0f), "hinge", 2.0, 0, 1e-7);
}

TEST(LinearSvm, SvrOptimality) {
  const HostData D = regression_data(150, 5, 23);
  const std::vector<double> y(D.y.begin(), D.y.end());
  for (const std::string loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}) {
    auto est = ml::make_estimator("linear_svr", {{"loss", loss}, {"epsilon", "0.1"}, {"C", "0.7"}, {"tol", "1e-10"},
                                                 {"max_iter", "100000"}});
    est->fit(D.X(), D.Y());
    const Fitted f = fitted_of(*est, D.d, 0, 1.0);
    expect_coordinatewise_minimum(f, D, y, loss, 0.7, 0.1, 1e-7);
    if (loss == "epsilon_insensitive") continue;
    std::vector<double> g = f.w;
    for (int64_t i = 0; i < D.n; ++i) {
      double m = f.w[D.d];
      for (int64_t j = 0; j < D.d; ++j) m += f.w[j] * D.x[i * D.d + j];
      const double r = y[i] - m, e = std::max(0.0, std::fabs(r) - 0.1) * (r > 0 ? 1 : -1);
      for (int64_t j = 0; j < D.d; ++j) g[j] -= 2 * 0.7 * e * D.x[i * D.d + j];
      g[D.d] -= 2 * 0.7 * e;
    }
    for (size_t j = 0; j < g.size(); ++j) EXPECT_NEAR(g[j], 0.0, 1e-4) << j;
  }
}

TEST(LinearSvm, OneVsRestIsTheBinaryProblems) {
  const HostData D = ml_common::uniform_blobs(90, 3, 3, 1.2f, 24);
  const ml::Params p{{"tol", "1e-9"}, {"max_iter", "100000"}};
  auto est = ml::make_estimator("linear_svc", p);
  est->fit(D.X(), D.Y());
  const std::vector<float> dec = est->decision_function(D.X()).to_vector<float>();
  for (int64_t c = 0; c < 3; ++c) {
    HostData b = D;
    for (float& v : b.y) v = v == static_cast<float>(c) ? 1.0f : 0.0f;
    auto bin = ml::make_estimator("linear_svc", p);
    bin->fit(b.X(), b.Y());
    const std::vector<float> db = bin->decision_function(D.X()).to_vector<float>();
    for (int64_t i = 0; i < D.n; ++i) EXPECT_NEAR(dec[i * 3 + c], db[i], 1e-4) << c << " " << i;
  }
  const std::vector<float> pred = est->predict(D.X()).to_vector<float>();
  for (int64_t i = 0; i < D.n; ++i) {
    int64_t best = 0;
    for (int64_t c = 1; c < 3; ++c)
      if (dec[i * 3 + c] > dec[i * 3 + best]) best = c;
    EXPECT_EQ(pred[i], static_cast<float>(best));
  }
}

TEST(LinearSvm, RandomStateMovesTheBitsNotTheSolution) {
  const HostData D = ml_common::uniform_blobs(80, 3, 2, 0.7f, 25);
  auto a = ml::make_estimator("linear_svc", {{"tol", "1e-3"}, {"random_state", "0"}});
  auto b = ml::make_estimator("linear_svc", {{"tol", "1e-3"}, {"random_state", "1"}});
  a->fit(D.X(), D.Y());
  b->fit(D.X(), D.Y());
  EXPECT_NE(a->to_json_text(), b->to_json_text());  // sabotage: the visiting order is used
  const Fitted fa = fitted_of(*a, D.d, 0, 1.0), fb = fitted_of(*b, D.d, 0, 1.0);
  for (size_t j = 0; j < fa.w.size(); ++j) EXPECT_NEAR(fa.w[j], fb.w[j], 2e-2 * (1 + std::fabs(fa.w[j])));
}

TEST(LinearSvm, SameBytesAtThreads123AndAfterReload) {
  const HostData C3 = ml_common::uniform_blobs(60, 4, 3, 1.0f, 26), T3 = ml_common::uniform_blobs(15, 4, 3, 1.0f, 27);
  const HostData R = regression_data(60, 4, 28), TR = regression_data(15, 4, 29);
  struct Case {
    std::string name;
    ml::Params p;
    const HostData* tr;
    const HostData* te;
  };
  for (const Case& c : {Case{"linear_svc", {}, &C3, &T3}, Case{"linear_svc", {{"loss", "hinge"}}, &C3, &T3},
                        Case{"linear_svr", {{"epsilon", "0.05"}}, &R, &TR},
                        Case{"linear_svr", {{"loss", "squared_epsilon_insensitive"}}, &R, &TR}}) {
    ml_common::expect_same_bytes_at_threads_123(c.name, c.p, c.tr->X(), c.tr->Y(), c.te->X());
    ml_common::expect_input_change_moves_the_model(c.name, c.p, *c.tr, 0.25f);
    auto est = ml::make_estimator(c.name, c.p);
    est->fit(c.tr->X(), c.tr->Y());
    auto back = ml::estimator_from_json_text(est->to_json_text());
    EXPECT_EQ(back->to_json_text(), est->to_json_text());
    EXPECT_EQ(ml_common::outputs_of(*back, c.te->X()), ml_common::outputs_of(*est, c.te->X()));
  }
}

TEST(LinearSvm, MaxIterWarns) {
  const HostData D = ml_common::uniform_blobs(60, 3, 2, 0.5f, 30);
  for (const std::string name : {"linear_svc", "linear_svr"}) {
    ml::WarningCollector w;
    ml::make_estimator(name, {{"max_iter", "1"}, {"tol", "1e-12"}})->fit(D.X(), D.Y());
    ASSERT_FALSE(w.messages().empty()) << name;
    EXPECT_NE(w.messages()[0].find("max_iter=1"), std::string::npos) << w.messages()[0];
  }
}

TEST(LinearSvm, NamedErrors) {
  const HostData D = ml_common::uniform_blobs(20, 3, 2, 1.0f, 31);
  auto has = [](const std::string& e, const std::string& w) { return e.find(w) != std::string::npos; };
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("linear_svc", {{"penalty", "l1"}})->fit(D.X(), D.Y()); }),
                  "penalty=l1"));
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("linear_svc", {{"multi_class", "crammer_singer"}})->fit(D.X(), D.Y());
                  }),
                  "crammer_singer"));
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("linear_svc", {{"loss", "hinge"}, {"dual", "false"}})->fit(D.X(), D.Y());
                  }),
                  "dual=false"));
  EXPECT_TRUE(has(error_of([&] {
                    ml::make_estimator("linear_svr", {{"dual", "false"}})->fit(D.X(), D.Y());
                  }),
                  "dual=false"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("linear_svc", {{"C", "0"}}); }), "C=0"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("linear_svr", {{"epsilon", "-1"}}); }), "epsilon"));
  EXPECT_TRUE(has(error_of([] { ml::make_estimator("linear_svc", {{"loss", "log"}}); }), "loss"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("linear_svc", {})->predict(D.X()); }), "before fit"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("linear_svr", {})->predict(D.X()); }), "before fit"));
}

}  // namespace
}  // namespace bl
