// test_gp_regressor.cpp: gaussian_process_regressor: the kernel expression parser (values, bounds,
// printing round trip, named errors), kernel values and gradients against float64 formulas, the log
// marginal likelihood against a float64 evaluation and its gradient against float64 finite
// differences, predictions (mean and std) against float64, the optimizer raising the likelihood,
// identical model files and outputs at threads 1/2/3 with the sabotage arm, and save / load.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml/gaussian_process/gp_kernel_expr.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml::gp::KernelExpr;
using ml_common::error_of;
using ml_common::HostData;

HostData make_data(int64_t n, int64_t d, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  HostData out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) {
      const float v = 2.0f * rng.uniform_pm1();
      out.x.push_back(v);
      s += (j + 1) * v;
    }
    out.y.push_back(static_cast<float>(std::sin(s) + 0.05 * rng.uniform_pm1()));
  }
  return out;
}

// float64 kernel value of the expressions used below, written out by hand (the library's exp / log
// are binary64 polynomials: a few ulps).
double k64(const std::string& which, const float* a, const float* b, int64_t d, bool same_row) {
  double d2 = 0, dot = 0;
  for (int64_t f = 0; f < d; ++f) {
    d2 += (double(a[f]) - b[f]) * (double(a[f]) - b[f]);
    dot += double(a[f]) * b[f];
  }
  const double r = std::sqrt(d2);
  if (which == "rbf") return 2.0 * std::exp(-0.5 * d2 / (0.7 * 0.7));
  if (which == "m05") return std::exp(-r / 1.3);
  if (which == "m15") return (1 + std::sqrt(3.0) * r / 1.3) * std::exp(-std::sqrt(3.0) * r / 1.3);
  if (which == "m25") {
    const double t = std::sqrt(5.0) * r / 1.3;
    return (1 + t + t * t / 3) * std::exp(-t);
  }
  if (which == "rq") return std::pow(1 + d2 / (2 * 1.5 * 0.8 * 0.8), -1.5);
  if (which == "dot") return (0.5 * 0.5 + dot) * 1.0 + (same_row ? 0.1 : 0.0);
  return 0;
}

const char* expr_of(const std::string& which) {
  if (which == "rbf") return "2.0 * RBF(0.7)";
  if (which == "m05") return "Matern(1.3, nu=0.5)";
  if (which == "m15") return "Matern(length_scale=1.3, nu=1.5)";
  if (which == "m25") return "Matern(1.3, (1e-3, 1e3), 2.5)";
  if (which == "rq") return "RationalQuadratic(length_scale=0.8, alpha=1.5)";
  return "DotProduct(0.5) + WhiteKernel(0.1)";
}

TEST(GaussianProcess, ParserReadsValuesBoundsAndPrintsBack) {
  KernelExpr k = ml::gp::parse_kernel("C(2.0, \"fixed\") * (RBF(length_scale=0.5, length_scale_bounds=(1e-2, 1e2)) + "
                                      "WhiteKernel(noise_level=1e-3)) + 0.5**2");
  std::vector<ml::gp::Hyper*> free = ml::gp::free_hypers(k);
  ASSERT_EQ(free.size(), 3u);
  EXPECT_EQ(free[0]->name, "length_scale");
  EXPECT_EQ(free[0]->lo, 1e-2);
  EXPECT_EQ(free[1]->name, "noise_level");
  EXPECT_EQ(free[2]->value, 0.25);
  const std::string text = ml::gp::kernel_text(k);
  EXPECT_EQ(ml::gp::kernel_text(ml::gp::parse_kernel(text)), text);
  EXPECT_NE(text.find("constant_value_bounds=\"fixed\""), std::string::npos) << text;
  EXPECT_EQ(ml::gp::kernel_text(ml::gp::parse_kernel("none")), "ConstantKernel(constant_value=1) * RBF(length_scale=1)");
}

TEST(GaussianProcess, ParserNamesBadExpressions) {
  auto err = [](const std::string& t) {
    try {
      ml::gp::parse_kernel(t);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("RBF(1.0").find("expected ',' or ')'"), std::string::npos) << err("RBF(1.0");
  EXPECT_NE(err("Foo(1)").find("RBF, Matern"), std::string::npos);
  EXPECT_NE(err("Matern(1.0, nu=0.7)").find("nu in {0.5, 1.5, 2.5}"), std::string::npos);
  EXPECT_NE(err("RBF(-1)").find("length_scale > 0"), std::string::npos);
  EXPECT_NE(err("RBF(1) +").find("at position"), std::string::npos);
  EXPECT_NE(err("RBF(1) RBF(2)").find("'+', '*' or the end"), std::string::npos);
  EXPECT_NE(err("RBF(1, length_scale_bounds=(5, 1))").find("0 < lo <= hi"), std::string::npos);
  EXPECT_NE(err("RBF(foo=1)").find("an argument of RBF"), std::string::npos);
  EXPECT_NE(err("2**3").find("c**2"), std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("gaussian_process_regressor", {{"kernel", "RBF("}}); }).find("kernel="),
            std::string::npos);
}

TEST(GaussianProcess, KernelValuesAndGradientsMatchFloat64) {
  const HostData data = make_data(12, 3, 3);
  for (const std::string which : {"rbf", "m05", "m15", "m25", "rq", "dot"}) {
    KernelExpr k = ml::gp::parse_kernel(expr_of(which));
    const ml::gp::PairData pd = ml::gp::pair_data(data.x.data(), data.n, data.x.data(), data.n, data.d, true, true);
    std::vector<double> K;
    std::vector<std::vector<double>> G;
    ml::gp::evaluate(k, pd, K, &G);
    for (int64_t i = 0; i < data.n; ++i)
      for (int64_t j = 0; j < data.n; ++j) {
        const double want = k64(which, &data.x[i * data.d], &data.x[j * data.d], data.d, i == j);
        EXPECT_NEAR(K[i * data.n + j], want, 1e-13 * std::fabs(want) + 1e-15) << which << " " << i << "," << j;
      }
    // dK / d log(theta) against central differences of the float64 evaluation in log space.
    std::vector<ml::gp::Hyper*> hs = ml::gp::free_hypers(k);
    ASSERT_EQ(G.size(), hs.size());
    for (size_t p = 0; p < hs.size(); ++p) {
      const double v0 = hs[p]->value, h = 1e-4;
      std::vector<double> Kp, Km;
      hs[p]->value = v0 * std::exp(h);
      ml::gp::evaluate(k, pd, Kp, nullptr);
      hs[p]->value = v0 * std::exp(-h);
      ml::gp::evaluate(k, pd, Km, nullptr);
      hs[p]->value = v0;
      for (size_t e = 0; e < K.size(); ++e)
        EXPECT_NEAR(G[p][e], (Kp[e] - Km[e]) / (2 * h), 1e-6 * (1 + std::fabs(G[p][e]))) << which << " p=" << p;
    }
  }
}

// Float64 reference of the whole fit: K + alpha I, Cholesky, a, lml, mean and std at test rows.
struct Ref {
  double lml;
  std::vector<double> mean, std;
};
Ref reference(const HostData& tr, const HostData& te, double alpha) {
  const int64_t n = tr.n, d = tr.d;
  std::vector<double> A(n * n), L(n * n, 0.0), a(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) A[i * n + j] = k64("rbf", &tr.x[i * d], &tr.x[j * d], d, i == j) + (i == j ? alpha : 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = A[i * n + j];
      for (int64_t q = 0; q < j; ++q) s -= L[i * n + q] * L[j * n + q];
      L[i * n + j] = i == j ? std::sqrt(s) : s / L[j * n + j];
    }
  auto fwd = [&](std::vector<double>& x) {
    for (int64_t i = 0; i < n; ++i) {
      double s = x[i];
      for (int64_t q = 0; q < i; ++q) s -= L[i * n + q] * x[q];
      x[i] = s / L[i * n + i];
    }
  };
  for (int64_t i = 0; i < n; ++i) a[i] = tr.y[i];
  fwd(a);
  for (int64_t i = n - 1; i >= 0; --i) {
    double s = a[i];
    for (int64_t q = i + 1; q < n; ++q) s -= L[q * n + i] * a[q];
    a[i] = s / L[i * n + i];
  }
  Ref r;
  r.lml = -0.5 * n * std::log(2 * M_PI);
  for (int64_t i = 0; i < n; ++i) r.lml += -0.5 * tr.y[i] * a[i] - std::log(L[i * n + i]);
  for (int64_t t = 0; t < te.n; ++t) {
    std::vector<double> k(n);
    double m = 0;
    for (int64_t i = 0; i < n; ++i) {
      k[i] = k64("rbf", &te.x[t * d], &tr.x[i * d], d, false);
      m += k[i] * a[i];
    }
    fwd(k);
    double q = 0;
    for (double v : k) q += v * v;
    r.mean.push_back(m);
    r.std.push_back(std::sqrt(std::max(0.0, 2.0 - q)));
  }
  return r;
}

ml::Params fixed_params() { return {{"kernel", "2.0 * RBF(0.7)"}, {"alpha", "0.01"}, {"optimizer", "none"}}; }

TEST(GaussianProcess, FitPredictAndLikelihoodMatchFloat64) {
  const HostData tr = make_data(60, 2, 5), te = make_data(25, 2, 6);
  auto est = ml::make_estimator("gaussian_process_regressor", fixed_params());
  est->fit(tr.X(), tr.Y());
  const Ref r = reference(tr, te, 0.01);
  const std::vector<float> mean = est->predict(te.X()).to_vector<float>();
  const std::vector<float> sd = ml::gaussian_process_predict_std(*est, te.X()).to_vector<float>();
  for (int64_t t = 0; t < te.n; ++t) {
    EXPECT_NEAR(mean[t], r.mean[t], 1e-5 * (1 + std::fabs(r.mean[t]))) << t;
    EXPECT_NEAR(sd[t], r.std[t], 1e-5) << t;
  }
}

TEST(GaussianProcess, LikelihoodGradientMatchesFiniteDifferences) {
  const HostData tr = make_data(30, 2, 7);
  auto lml_at = [&](const std::string& kernel) {
    auto est = ml::make_estimator("gaussian_process_regressor",
                                  {{"kernel", kernel}, {"alpha", "0.01"}, {"optimizer", "none"}});
    est->fit(tr.X(), tr.Y());
    const nlohmann::json j = nlohmann::json::parse(est->to_json_text());
    const nlohmann::json& st = j.contains("state") ? j["state"] : j;
    const std::vector<int64_t> bits = ml::i64_from_hex(st["log_marginal_likelihood"].get<std::string>(), "lml");
    double v;
    std::memcpy(&v, &bits[0], sizeof v);
    return v;
  };
  // lml itself against float64 (the rbf reference above).
  const Ref r = reference(tr, tr, 0.01);
  EXPECT_NEAR(lml_at("2.0 * RBF(0.7)"), r.lml, 1e-6 * std::fabs(r.lml));
  // The optimizer (which follows the analytic gradient) must not end below the start and must
  // reach a stationary point: finite differences of lml in log space there are near 0.
  auto opt = ml::make_estimator("gaussian_process_regressor",
                                {{"kernel", "1.0 * RBF(1.0) + WhiteKernel(0.1)"}, {"alpha", "0.01"}});
  opt->fit(tr.X(), tr.Y());
  const nlohmann::json j = nlohmann::json::parse(opt->to_json_text());
  const nlohmann::json& st = j.contains("state") ? j["state"] : j;
  KernelExpr k = ml::gp::parse_kernel(st["kernel"].get<std::string>());
  std::vector<ml::gp::Hyper*> hs = ml::gp::free_hypers(k);
  ASSERT_EQ(hs.size(), 3u);
  const double best = lml_at(ml::gp::kernel_text(k));
  EXPECT_GT(best, lml_at("1.0 * RBF(1.0) + WhiteKernel(0.1)"));
  for (ml::gp::Hyper* h : hs) {
    const double v0 = h->value, step = 1e-3;
    h->value = v0 * std::exp(step);
    const double up = lml_at(ml::gp::kernel_text(k));
    h->value = v0 * std::exp(-step);
    const double down = lml_at(ml::gp::kernel_text(k));
    h->value = v0;
    EXPECT_NEAR((up - down) / (2 * step), 0.0, 2e-2 * (1 + std::fabs(best))) << h->name;
  }
}

TEST(GaussianProcess, SameBytesAtThreads123AndAfterReload) {
  const HostData tr = make_data(40, 3, 9), te = make_data(15, 3, 10);
  for (const ml::Params& p :
       {fixed_params(),
        ml::Params{{"kernel", "1.0 * Matern(1.0, nu=2.5) + WhiteKernel(0.1)"}, {"n_restarts_optimizer", "1"},
                   {"normalize_y", "true"}}}) {
    ml_common::expect_same_bytes_at_threads_123("gaussian_process_regressor", p, tr.X(), tr.Y(), te.X());
    ml_common::expect_input_change_moves_the_model("gaussian_process_regressor", p, tr, 0.25f);
    auto est = ml::make_estimator("gaussian_process_regressor", p);
    est->fit(tr.X(), tr.Y());
    auto back = ml::estimator_from_json_text(est->to_json_text());
    EXPECT_EQ(back->to_json_text(), est->to_json_text());
    EXPECT_EQ(ml_common::outputs_of(*back, te.X()), ml_common::outputs_of(*est, te.X()));
    EXPECT_EQ(ml_common::bytes_of(ml::gaussian_process_predict_std(*back, te.X())),
              ml_common::bytes_of(ml::gaussian_process_predict_std(*est, te.X())));
  }
}

TEST(GaussianProcess, NamedErrors) {
  const HostData tr = make_data(10, 2, 11);
  HostData dup = tr;
  for (int64_t f = 0; f < dup.d; ++f) dup.x[dup.d + f] = dup.x[f];
  const std::string e = error_of([&] {
    ml::make_estimator("gaussian_process_regressor", {{"alpha", "0"}, {"optimizer", "none"}})->fit(dup.X(), dup.Y());
  });
  EXPECT_NE(e.find("not positive definite"), std::string::npos) << e;
  EXPECT_NE(error_of([] { ml::make_estimator("gaussian_process_regressor", {{"optimizer", "bfgs"}}); }).find("optimizer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ml::make_estimator("gaussian_process_regressor", {})->predict(tr.X()); }).find("before fit"),
            std::string::npos);
}

}  // namespace
}  // namespace bl
