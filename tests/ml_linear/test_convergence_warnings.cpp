// test_convergence_warnings.cpp: every iterative linear solver warns when its iteration limit stops
// it before its tolerance (scikit-learn's ConvergenceWarning), stays silent when it converges, and
// the warning changes no bit of the fitted model.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "ml_test_util.h"

namespace bl {
namespace {

struct Solver {
  const char* name;
  const char* stage;  // the start of its warning
  bool classifier;
  ml::Params starved;  // parameters that stop it on the iteration limit
};

const Solver kSolvers[] = {
    {"logistic_regression", "logistic_regression L-BFGS", true, {{"max_iter", "2"}}},
    {"logistic_regression", "logistic_regression FISTA", true,
     {{"max_iter", "2"}, {"penalty", "l1"}}},
    {"lasso", "lasso coordinate descent", false, {{"max_iter", "1"}, {"alpha", "0.001"}, {"tol", "1e-9"}}},
    {"elastic_net", "elastic_net coordinate descent", false, {{"max_iter", "1"}, {"alpha", "0.001"}, {"tol", "1e-9"}}},
    {"bayesian_ridge", "bayesian_ridge", false, {{"max_iter", "1"}}},
    {"ard_regression", "ard_regression", false, {{"max_iter", "1"}}},
    {"huber_regressor", "huber_regressor", false, {{"max_iter", "1"}}},
    {"poisson_regressor", "poisson_regressor", false, {{"max_iter", "1"}}},
    {"quantile_regressor", "quantile_regressor interior point", false, {{"max_iter", "1"}}},
    {"sgd_regressor", "sgd_regressor", false, {{"max_iter", "1"}}},
    {"sgd_classifier", "sgd_classifier", true, {{"max_iter", "1"}}},
};

struct Data {
  Tensor X, y_reg, y_cls;
};

Data make_data() {
  Data d;
  d.X = ml_test::normal_data(200, 4, 7);
  std::vector<float> reg(200), cls(200);
  for (int64_t i = 0; i < 200; ++i) {
    const float* x = d.X.data<float>() + i * 4;
    reg[i] = std::exp(0.5f * x[0] - 0.3f * x[1] + 0.2f * x[2]);  // positive: the Poisson family needs y >= 0
    cls[i] = x[0] + x[3] > 0.0f ? 1.0f : 0.0f;
  }
  d.y_reg = Tensor::from_vector(reg, {200});
  d.y_cls = Tensor::from_vector(cls, {200});
  return d;
}

std::vector<std::string> fit_warnings(const Solver& s, const ml::Params& params, std::string* model_json) {
  static const Data data = make_data();
  auto est = ml::make_estimator(s.name, params);
  ml::WarningCollector warnings;
  est->fit(data.X, s.classifier ? data.y_cls : data.y_reg);
  if (model_json != nullptr) *model_json = est->to_json_text();
  return warnings.messages();
}

TEST(ConvergenceWarnings, IterationLimitWarnsOnce) {
  for (const Solver& s : kSolvers) {
    std::vector<std::string> w = fit_warnings(s, s.starved, nullptr);
    ASSERT_EQ(w.size(), 1u) << s.name << " (" << s.stage << ")";
    EXPECT_EQ(w[0].rfind(s.stage, 0), 0u) << w[0];
    EXPECT_NE(w[0].find("stopped at max_iter=" + s.starved.at("max_iter") + " before converging"), std::string::npos)
        << w[0];
  }
}

// Sabotage arm of the rule above: given enough iterations the same fits converge, and say nothing.
TEST(ConvergenceWarnings, ConvergedFitsAreSilent) {
  for (const Solver& s : kSolvers) {
    ml::Params defaults = s.starved;
    defaults["max_iter"] = "5000";
    defaults.erase("tol");
    EXPECT_TRUE(fit_warnings(s, defaults, nullptr).empty()) << s.name << ": " << fit_warnings(s, defaults, nullptr)[0];
  }
}

TEST(ConvergenceWarnings, WarningChangesNoBit) {
  const Solver& s = kSolvers[0];
  std::string collected, printed;
  fit_warnings(s, s.starved, &collected);
  {  // outside any collector the warning goes to stderr; the model is the same
    auto est = ml::make_estimator(s.name, s.starved);
    Data d = make_data();
    testing::internal::CaptureStderr();
    est->fit(d.X, d.y_cls);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("bitlearn: warning: logistic_regression L-BFGS stopped at max_iter=2"), std::string::npos)
        << err;
    printed = est->to_json_text();
  }
  EXPECT_EQ(collected, printed);
}

TEST(ConvergenceWarnings, CollectorsNest) {
  ml::WarningCollector outer;
  {
    ml::WarningCollector inner;
    ml::report_warning("a");
    EXPECT_EQ(inner.messages().size(), 1u);
  }
  ml::report_warning("b");
  ASSERT_EQ(outer.messages().size(), 1u);
  EXPECT_EQ(outer.messages()[0], "b");
}

}  // namespace
}  // namespace bl
