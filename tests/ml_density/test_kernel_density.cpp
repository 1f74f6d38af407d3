// test_kernel_density.cpp: kernel_density's log densities against a float64 evaluation of
// scikit-learn's formulas (every kernel, a fixed bandwidth and both rules, within 1e-5 relative),
// -inf outside a compact kernel's support, score = the sum of score_samples, identical bytes at
// thread counts 1, 2 and 3 (and the sabotage arm), and each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;

Data make_data(int64_t n, int64_t d, uint64_t seed, float shift) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    out.y.push_back(0.0f);
    for (int64_t j = 0; j < d; ++j) out.x.push_back(rng.uniform_pm1() + shift * static_cast<float>(i % 3));
  }
  return out;
}

// scikit-learn's log density (float64, libm).
std::vector<double> reference(const Data& train, const Data& q, const std::string& kernel, double h) {
  const int64_t d = train.d, n = train.n;
  const double pi = std::acos(-1.0);
  auto logVn = [&](double m) { return 0.5 * m * std::log(pi) - std::lgamma(0.5 * m + 1.0); };
  auto logSn = [&](double m) { return std::log(2.0 * pi) + logVn(m - 1.0); };
  double f = 0.0;
  if (kernel == "gaussian") f = 0.5 * d * std::log(2.0 * pi);
  if (kernel == "tophat") f = logVn(d);
  if (kernel == "epanechnikov") f = logVn(d) + std::log(2.0 / (d + 2.0));
  if (kernel == "exponential") f = logSn(d - 1.0) + std::lgamma(static_cast<double>(d));
  if (kernel == "linear") f = logVn(d) - std::log(d + 1.0);
  if (kernel == "cosine") {
    double s = 0.0, t = 2.0 / pi;
    for (int64_t k = 1; k <= d; k += 2) {
      s += t;
      t *= -static_cast<double>((d - k) * (d - k - 1)) * (2.0 / pi) * (2.0 / pi);
    }
    f = std::log(s) + logSn(d - 1.0);
  }
  const double lnorm = -f - d * std::log(h) - std::log(static_cast<double>(n));
  std::vector<double> out;
  for (int64_t i = 0; i < q.n; ++i) {
    double total = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      double r2 = 0.0;
      for (int64_t c = 0; c < d; ++c) {
        double v = static_cast<double>(q.x[i * d + c]) - static_cast<double>(train.x[j * d + c]);
        r2 += v * v;
      }
      const double z = std::sqrt(r2) / h;
      double kv = 0.0;
      if (kernel == "gaussian") kv = std::exp(-0.5 * z * z);
      if (kernel == "exponential") kv = std::exp(-z);
      if (z < 1.0) {
        if (kernel == "tophat") kv = 1.0;
        if (kernel == "epanechnikov") kv = 1.0 - z * z;
        if (kernel == "linear") kv = 1.0 - z;
        if (kernel == "cosine") kv = std::cos(0.5 * pi * z);
      }
      total += kv;
    }
    out.push_back(std::log(total) + lnorm);
  }
  return out;
}

TEST(KernelDensity, LogDensityMatchesFloat64EveryKernelAndBandwidth) {
  const Data train = make_data(90, 3, 11, 4.0f), query = make_data(40, 3, 12, 4.0f);
  for (const char* kernel : {"gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"}) {
    for (const char* bw : {"0.7", "scott", "silverman"}) {
      auto est = ml::make_estimator("kernel_density", {{"kernel", kernel}, {"bandwidth", bw}});
      est->fit(train.X());
      nlohmann::json st;
      est->save_state(st);
      const double h = static_cast<double>(ml::f32_from_hex(st["bandwidth"].get<std::string>(), "bandwidth")[0]);
      const double d = 3.0, n = 90.0;
      const double h_ref = std::string(bw) == "scott" ? std::pow(n, -1.0 / (d + 4.0))
                           : std::string(bw) == "silverman" ? std::pow(n * (d + 2.0) / 4.0, -1.0 / (d + 4.0))
                                                            : 0.7;
      EXPECT_NEAR(h, h_ref, 2e-7 * h_ref) << bw;
      std::vector<float> got = est->score_samples(query.X()).to_vector<float>();
      std::vector<double> want = reference(train, query, kernel, h);
      double total = 0.0;
      int finite = 0;
      for (int64_t i = 0; i < query.n; ++i) {
        if (std::isinf(want[i])) {
          EXPECT_TRUE(std::isinf(got[i]) && got[i] < 0) << kernel << " " << bw << " row " << i;
          continue;
        }
        ++finite;
        EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << kernel << " " << bw << " row " << i;
        total += static_cast<double>(got[i]);
      }
      EXPECT_GT(finite, 20) << kernel << " " << bw;
      if (finite == query.n) EXPECT_DOUBLE_EQ(est->score(query.X(), Tensor()), total) << kernel;
    }
  }
}

TEST(KernelDensity, OutsideTheSupportIsMinusInfinity) {
  Data train = make_data(10, 2, 3, 0.0f), far = make_data(4, 2, 4, 0.0f);
  for (float& v : far.x) v += 100.0f;
  auto est = ml::make_estimator("kernel_density", {{"kernel", "tophat"}});
  est->fit(train.X());
  for (float v : est->score_samples(far.X()).to_vector<float>()) EXPECT_EQ(v, -std::numeric_limits<float>::infinity());
}

TEST(KernelDensity, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data train = make_data(700, 9, 21, 2.0f), query = make_data(300, 9, 22, 2.0f);
  for (const char* kernel : {"gaussian", "epanechnikov", "cosine"}) {
    ml_common::expect_same_bytes_at_threads_123("kernel_density", {{"kernel", kernel}, {"bandwidth", "scott"}},
                                                train.X(), Tensor(), query.X());
    ml_common::expect_input_change_moves_the_model("kernel_density", {{"kernel", kernel}}, train, 0.25f);
  }
}

TEST(KernelDensity, RefusalsAreNamed) {
  EXPECT_NE(error_of([] { ml::make_estimator("kernel_density", {{"bandwidth", "0"}}); }).find("bandwidth"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("kernel_density", {{"bandwidth", "wide"}}); }).find("bandwidth"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("kernel_density", {{"metric", "manhattan"}}); }).find("metric"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("kernel_density", {{"kernel", "box"}}); }).find("kernel"),
            std::string::npos);
  const Data train = make_data(10, 3, 1, 0.0f), other = make_data(5, 2, 2, 0.0f);
  auto est = ml::make_estimator("kernel_density");
  EXPECT_NE(error_of([&] { est->score_samples(train.X()); }).find("before fit"), std::string::npos);
  est->fit(train.X());
  EXPECT_NE(error_of([&] { est->score_samples(other.X()); }).find("kernel_density"), std::string::npos);
  EXPECT_NE(error_of([&] { est->predict(train.X()); }).find("not supported"), std::string::npos);
}

}  // namespace
}  // namespace bl
