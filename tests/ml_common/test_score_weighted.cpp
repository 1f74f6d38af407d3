// Estimator::score_weighted over the registry: all-ones weights give score()'s bits wherever the
// weighted form is given (every classifier among them), the others refuse naming the estimator;
// weighted accuracy and R^2 against a binary64 oracle and against rows repeated by integer weights;
// the weights validated as fit_weighted validates them (the same messages).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ml_common/estimator_checks.h"

namespace bl::ml_common {
namespace {

Tensor ones(int64_t n) { return Tensor::from_vector(std::vector<float>(static_cast<size_t>(n), 1.0f), {n}); }

TEST(ScoreWeighted, RegistryAllOnesGiveTheUnweightedBitsOrANamedRefusal) {
  int weighted = 0, refused = 0;
  for (const std::string& name : ml::estimator_names()) {
    const CheckSpec s = check_spec(name);
    if (!s.fixed_X.empty()) continue;  // imported models: no training data here
    Dataset ds = spec_dataset(s, 48, 1);
    std::unique_ptr<ml::Estimator> est = fit_by_spec(name, s, ds);
    const Tensor y = ds.y.defined() ? ds.y : Tensor::from_vector(std::vector<float>(48, 0.0f), {48});
    double plain = 0.0;
    const std::string plain_error = error_of([&] { plain = est->score(ds.X, y); });
    double with_ones = 0.0;
    const std::string weighted_error = error_of([&] { with_ones = est->score_weighted(ds.X, y, ones(ds.X.dim(0))); });
    if (plain_error != "(no error)") {
      EXPECT_NE(weighted_error, "(no error)") << name << ": score refuses but score_weighted does not";
      continue;
    }
    if (weighted_error == "(no error)") {
      EXPECT_EQ(std::memcmp(&plain, &with_ones, sizeof(double)), 0)
          << name << ": all-ones weights give " << with_ones << ", score " << plain;
      ++weighted;
    } else {
      EXPECT_NE(weighted_error.find(name + ": score with sample_weight is not supported"), std::string::npos)
          << name << ": " << weighted_error;
      EXPECT_FALSE(ml::is_classifier_name(name)) << name << ": a classifier's weighted accuracy is refused";
      ++refused;
    }
  }
  EXPECT_GT(weighted, 50);
  EXPECT_GT(refused, 5);
}

TEST(ScoreWeighted, AccuracyAndR2AgainstFloat64Oracle) {
  const std::vector<float> w = {0.5f, 2.0f, 0.0f, 1.25f, 3.0f, 1.0f, 0.75f, 2.5f};
  // Classifier: logistic regression on three classes.
  {
    Dataset train = make_dataset(Task::classification, 60, 4, 2), test = make_dataset(Task::classification, 8, 4, 3);
    auto est = ml::make_estimator("logistic_regression");
    est->fit(train.X, train.y);
    const std::vector<float> p = est->predict(test.X).to_vector<float>(), y = test.y.to_vector<float>();
    double hit = 0.0, total = 0.0;
    for (size_t i = 0; i < 8; ++i) {
      hit += (p[i] == y[i]) * static_cast<double>(w[i]);
      total += w[i];
    }
    EXPECT_DOUBLE_EQ(est->score_weighted(test.X, test.y, Tensor::from_vector(w, {8})), hit / total);
  }
  // Regressor: ridge, R^2 with the weighted mean.
  {
    Dataset train = make_dataset(Task::regression, 60, 4, 4), test = make_dataset(Task::regression, 8, 4, 5);
    auto est = ml::make_estimator("ridge", {{"alpha", "3"}});
    est->fit(train.X, train.y);
    const std::vector<float> p = est->predict(test.X).to_vector<float>(), y = test.y.to_vector<float>();
    double mean = 0.0, total = 0.0;
    for (size_t i = 0; i < 8; ++i) {
      mean += static_cast<double>(w[i]) * y[i];
      total += w[i];
    }
    mean /= total;
    double res = 0.0, tot = 0.0;
    for (size_t i = 0; i < 8; ++i) {
      res += w[i] * (static_cast<double>(y[i]) - p[i]) * (static_cast<double>(y[i]) - p[i]);
      tot += w[i] * (static_cast<double>(y[i]) - mean) * (static_cast<double>(y[i]) - mean);
    }
    EXPECT_NEAR(est->score_weighted(test.X, test.y, Tensor::from_vector(w, {8})), 1.0 - res / tot, 1e-14);
  }
}

// Integer weights count each row that many times: accuracy equal bits (the same integers divided),
// R^2 to rounding (sums in another order).
TEST(ScoreWeighted, IntegerWeightsEqualRepeatedRows) {
  for (const char* name : {"logistic_regression", "gaussian_nb", "kneighbors_classifier", "decision_tree_classifier",
                           "ridge", "kneighbors_regressor", "svr", "decision_tree_regressor", "mlp_regressor"}) {
    const CheckSpec s = check_spec(name);
    Dataset train = spec_dataset(s, 60, 6), test = spec_dataset(s, 30, 7);
    auto est = fit_by_spec(name, s, train);
    const int64_t d = test.X.dim(1);
    const std::vector<float> x = test.X.to_vector<float>(), y = test.y.to_vector<float>();
    std::vector<float> w(30), xr, yr;
    for (int64_t i = 0; i < 30; ++i) {
      w[i] = static_cast<float>((i * 5) % 4);
      for (int c = 0; c < static_cast<int>(w[i]); ++c) {
        xr.insert(xr.end(), x.begin() + i * d, x.begin() + (i + 1) * d);
        yr.push_back(y[i]);
      }
    }
    const int64_t nr = static_cast<int64_t>(yr.size());
    const double weighted = est->score_weighted(test.X, test.y, Tensor::from_vector(w, {30}));
    const double repeated = est->score(Tensor::from_vector(xr, {nr, d}), Tensor::from_vector(yr, {nr}));
    if (ml::is_classifier_name(name)) EXPECT_EQ(weighted, repeated) << name;
    else EXPECT_NEAR(weighted, repeated, 1e-12) << name;
  }
}

TEST(ScoreWeighted, BadWeightsAndRefusalsAreNamedErrors) {
  Dataset ds = make_dataset(Task::regression, 20, 3, 8);
  auto est = ml::make_estimator("ridge");
  est->fit(ds.X, ds.y);
  auto msg = [&](const Tensor& w) { return error_of([&] { est->score_weighted(ds.X, ds.y, w); }); };
  auto fit_msg = [&](const Tensor& w) { return error_of([&] { ml::make_estimator("ridge")->fit_weighted(ds.X, ds.y, w); }); };
  std::vector<float> bad(20, 1.0f);
  bad[3] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Tensor> cases = {
      Tensor::from_vector(std::vector<float>(20, 1.0f), {4, 5}),
      Tensor::from_vector(std::vector<float>(19, 1.0f), {19}),
      Tensor::from_vector(std::vector<int32_t>(20, 1), {20}),
      Tensor::from_vector(bad, {20}),
      Tensor::from_vector(std::vector<float>(20, 0.0f), {20}),
  };
  const char* expected[] = {"ridge: sample_weight must be 1-d", "ridge: sample_weight has 19 entries but X has 20 rows",
                            "ridge: sample_weight must be f32", "ridge: sample_weight holds nan at row 3 (counted from 0)",
                            "ridge: sample_weight is zero for every row"};
  for (size_t c = 0; c < cases.size(); ++c) {
    EXPECT_NE(msg(cases[c]).find(expected[c]), std::string::npos) << msg(cases[c]);
    EXPECT_EQ(msg(cases[c]), fit_msg(cases[c])) << "score_weighted validates as fit_weighted";
  }
  // Scores that are not accuracy or R^2: refused by name.
  Dataset pos = make_dataset(Task::regression, 30, 3, 9);
  for (const char* name : {"kmeans", "poisson_regressor", "gaussian_mixture"}) {
    const CheckSpec s = check_spec(name);
    auto other = fit_by_spec(name, s, pos);
    EXPECT_NE(error_of([&] { other->score_weighted(pos.X, pos.y, ones(30)); })
                  .find(std::string(name) + ": score with sample_weight is not supported by this estimator"),
              std::string::npos)
        << name;
  }
}

}  // namespace
}  // namespace bl::ml_common
