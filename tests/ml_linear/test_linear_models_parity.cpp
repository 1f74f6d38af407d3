// test_linear_models_parity.cpp: accuracy parity of the second-wave linear estimators with
// scikit-learn. tests/data/ml_linear/golden_models.json comes from scripts/golden/ml_linear_models.py
// (scikit-learn, float64, same CSV files); each case's test-split metric must be within the stated
// tolerance of scikit-learn's or better, and (except SGD, whose row order differs) the coefficients
// must be close to scikit-learn's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/ml/linear.h"
#include "ml_test_util.h"

namespace bl {
namespace {

double mean_pinball(const Tensor& y, const Tensor& pred, double q) {
  std::vector<float> a = y.to_vector<float>(), b = pred.to_vector<float>();
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double r = static_cast<double>(a[i]) - b[i];
    s += r >= 0 ? q * r : (q - 1) * r;
  }
  return s / static_cast<double>(a.size());
}

// Runs every golden case of `estimator`; coef_tol is relative to the largest reference coefficient
// (negative: coefficients not compared).
void run_cases(const std::string& estimator, double coef_tol) {
  nlohmann::json g = nlohmann::json::parse(read_file_text(ml_test::data_path("golden_models.json")));
  int ran = 0;
  for (const auto& c : g["cases"]) {
    if (c["estimator"] != estimator) continue;
    ++ran;
    const std::string name = c["case"];
    SCOPED_TRACE(name);
    CsvXy tr = ml_test::load_split(c["dataset"], "train");
    CsvXy te = ml_test::load_split(c["dataset"], "test");
    ml::Params p;
    for (auto it = c["params"].begin(); it != c["params"].end(); ++it) p[it.key()] = it.value();
    auto est = ml::make_estimator(estimator, p);
    est->fit(tr.X, tr.y);
    const std::string metric = c["metric"];
    const double ref = c["sklearn"].get<double>(), tol = c["tolerance"].get<double>();
    double ours = 0;
    if (metric == "pinball") {
      double q = p.count("quantile") ? std::stod(p["quantile"]) : 0.5;
      ours = mean_pinball(te.y, est->predict(te.X), q);
      EXPECT_LE(ours, ref * (1 + tol) + 1e-9);
    } else {
      ours = est->score(te.X, te.y);
      EXPECT_GE(ours, ref - tol - 1e-9);
    }
    std::printf("  %-28s %-8s ours %.6f  sklearn %.6f\n", name.c_str(), metric.c_str(), ours, ref);
    if (coef_tol < 0 || !c.contains("coef")) continue;
    ml::LinearView v = ml::linear_view(*est);
    std::vector<double> rc = c["coef"].get<std::vector<double>>();
    ASSERT_EQ(v.coef.size(), rc.size());
    double scale = 0;
    for (double x : rc) scale = std::max(scale, std::fabs(x));
    for (size_t j = 0; j < rc.size(); ++j) EXPECT_NEAR(v.coef[j], rc[j], coef_tol * scale) << "coef " << j;
    EXPECT_NEAR(v.intercept[0], c["intercept"].get<double>(), coef_tol * std::max(1.0, scale));
  }
  EXPECT_GT(ran, 0) << "no golden case for " << estimator;
}

TEST(LinearModelsParity, SgdClassifier) { run_cases("sgd_classifier", -1); }
TEST(LinearModelsParity, SgdRegressor) { run_cases("sgd_regressor", -1); }
TEST(LinearModelsParity, HuberRegressor) { run_cases("huber_regressor", 1e-2); }
TEST(LinearModelsParity, QuantileRegressor) { run_cases("quantile_regressor", 2e-2); }
TEST(LinearModelsParity, PoissonRegressor) { run_cases("poisson_regressor", 5e-3); }
TEST(LinearModelsParity, GammaRegressor) { run_cases("gamma_regressor", 5e-3); }
TEST(LinearModelsParity, TweedieRegressor) { run_cases("tweedie_regressor", 5e-3); }
TEST(LinearModelsParity, ArdRegression) { run_cases("ard_regression", 2e-2); }
TEST(LinearModelsParity, Lars) { run_cases("lars", 2e-3); }
TEST(LinearModelsParity, LassoLars) { run_cases("lasso_lars", 5e-3); }

}  // namespace
}  // namespace bl
