// test_sample_weight.cpp: fit_weighted for the estimators that take sample weights (linear_regression,
// ridge, lasso, elastic_net, logistic_regression, the naive Bayes family): integer weights give the
// fit of the repeated rows (float64 reference for the Gram solvers, the repeated-row fit for the iterative ones), a zero
// weight drops its row, all-ones weights give the unweighted bits, the bytes do not depend on the
// thread count, a changed weight moves the model (sabotage arm), and bad weights are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "ml_common/family_checks.h"
#include "ml_linear/ml_test_util.h"

namespace bl {
namespace {

using ml_test::error_of;

struct WeightedData {
  std::vector<float> x, y, w;  // w: integers 0..3
  int64_t n = 0, d = 0;
  Tensor X() const { return Tensor::from_vector(x, {n, d}); }
  Tensor Y() const { return Tensor::from_vector(y, {n}); }
  Tensor W() const { return Tensor::from_vector(w, {n}); }
  // Row i written w_i times (a weight of 0 drops the row).
  WeightedData repeated() const {
    WeightedData r;
    r.d = d;
    for (int64_t i = 0; i < n; ++i)
      for (int k = 0; k < static_cast<int>(w[i]); ++k) {
        r.x.insert(r.x.end(), x.begin() + i * d, x.begin() + (i + 1) * d);
        r.y.push_back(y[i]);
        ++r.n;
      }
    return r;
  }
};

// y = X beta + 0.5 + noise (regression) or its sign (classes 0 / 1 when classes is true).
WeightedData make_data(int64_t n, int64_t d, bool classes) {
  WeightedData s;
  s.n = n;
  s.d = d;
  std::vector<float> x = ml_test::normal_data(n, d, 41).to_vector<float>();
  s.x = x;
  for (int64_t i = 0; i < n; ++i) {
    double t = 0.5;
    for (int64_t j = 0; j < d; ++j) t += (0.3 * static_cast<double>(j + 1) - 1.0) * x[i * d + j];
    t += 0.4 * static_cast<double>(normal_element(43, 7, static_cast<uint64_t>(i)));
    s.y.push_back(classes ? (t > 0.0 ? 1.0f : 0.0f) : static_cast<float>(t));
    s.w.push_back(static_cast<float>((i * 7 + 3) % 4));
  }
  return s;
}

// The fitted numbers of a model file: coef and intercept (linear), else the naive Bayes statistics.
std::vector<double> coef_of(const ml::Estimator& est) {
  nlohmann::json j = nlohmann::json::parse(est.to_json_text());
  std::vector<double> out;
  const bool linear = j["state"].contains("coef");
  for (const char* key : linear ? std::vector<const char*>{"coef", "intercept"}
                                : std::vector<const char*>{"class_count", "class_log_prior", "theta", "var",
                                                           "feature_count", "weight", "bias"}) {
    if (!j["state"].contains(key)) continue;
    std::vector<float> v = ml::f32_from_hex(j["state"][key].get<std::string>(), key);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Weighted ridge in float64: minimize sum_i w_i (y_i - x_i b - c)^2 + alpha |b|^2 (alpha 0: least
// squares), through the weighted-centered normal equations and Gaussian elimination.
std::vector<double> ridge_f64(const WeightedData& s, double alpha) {
  const int64_t n = s.n, d = s.d;
  double sw = 0, ym = 0;
  std::vector<double> xm(d, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    sw += s.w[i];
    ym += s.w[i] * s.y[i];
    for (int64_t j = 0; j < d; ++j) xm[j] += s.w[i] * s.x[i * d + j];
  }
  ym /= sw;
  for (auto& v : xm) v /= sw;
  std::vector<double> A(d * (d + 1), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const double xj = s.x[i * d + j] - xm[j];
      for (int64_t k = 0; k < d; ++k) A[j * (d + 1) + k] += s.w[i] * xj * (s.x[i * d + k] - xm[k]);
      A[j * (d + 1) + d] += s.w[i] * xj * (s.y[i] - ym);
    }
  for (int64_t j = 0; j < d; ++j) A[j * (d + 1) + j] += alpha;
  for (int64_t c = 0; c < d; ++c)
    for (int64_t r = c + 1; r < d; ++r) {
      const double f = A[r * (d + 1) + c] / A[c * (d + 1) + c];
      for (int64_t k = c; k <= d; ++k) A[r * (d + 1) + k] -= f * A[c * (d + 1) + k];
    }
  std::vector<double> b(d);
  for (int64_t r = d - 1; r >= 0; --r) {
    double t = A[r * (d + 1) + d];
    for (int64_t k = r + 1; k < d; ++k) t -= A[r * (d + 1) + k] * b[k];
    b[r] = t / A[r * (d + 1) + r];
  }
  double c = ym;
  for (int64_t j = 0; j < d; ++j) c -= xm[j] * b[j];
  b.push_back(c);
  return b;
}

bool is_classifier(const std::string& name) {
  return name == "logistic_regression" || name.find("_nb") != std::string::npos ||
         name.find("classifier") != std::string::npos;
}

// CART with integer weights grows the tree of the repeated rows: the same splits and leaf values,
// so the same predictions bit for bit (the model files differ only where a NaN would go, which
// follows the child with more rows).
TEST(SampleWeight, TreesWithIntegerWeightsPredictAsTheRepeatedRows) {
  const WeightedData reg = make_data(300, 4, false), cls = make_data(300, 4, true);
  for (const char* name : {"decision_tree_classifier", "decision_tree_regressor", "extra_tree_classifier"}) {
    const WeightedData& s = is_classifier(name) ? cls : reg;
    const WeightedData rep = s.repeated();
    const ml::Params params = {{"max_depth", "6"}, {"random_state", "3"}};
    auto weighted = ml::make_estimator(name, params), repeated = ml::make_estimator(name, params);
    weighted->fit_weighted(s.X(), s.Y(), s.W());
    repeated->fit(rep.X(), rep.Y());
    const Tensor q = ml_test::normal_data(500, 4, 77);
    const bool proba = is_classifier(name);
    EXPECT_EQ((proba ? weighted->predict_proba(q) : weighted->predict(q)).digest(),
              (proba ? repeated->predict_proba(q) : repeated->predict(q)).digest())
        << name;
  }
  // Real-valued weights in a forest: threads 1/2/3 give the same bytes.
  std::vector<float> w = cls.w;
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f + 0.37f * static_cast<float>(i % 7);
  const Tensor W = Tensor::from_vector(w, {cls.n});
  const int saved = num_threads();
  std::string first;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto f = ml::make_estimator("random_forest_classifier", {{"n_estimators", "8"}, {"max_depth", "5"}});
    f->fit_weighted(cls.X(), cls.Y(), W);
    const std::string text = f->to_json_text();
    if (t == 1) first = text;
    else EXPECT_EQ(text, first) << t << " threads";
  }
  set_num_threads(saved);
}

// k-means with weights: the centers are the weighted means of their clusters, the inertia is the
// weighted sum of squared distances, rows of weight 0 move nothing, threads 1/2/3 give the same bytes.
TEST(SampleWeight, KmeansCentersAreWeightedMeans) {
  const int64_t n = 600, d = 3;
  std::vector<float> x(static_cast<size_t>(n * d)), w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j)
      x[i * d + j] = 0.3f * normal_element(9, 7, static_cast<uint64_t>(i * d + j)) + (j == i % 3 ? 6.0f : 0.0f);
    w[i] = static_cast<float>((i * 5 + 1) % 4);  // 0..3
  }
  Tensor X = Tensor::from_vector(x, {n, d}), W = Tensor::from_vector(w, {n});
  const int saved = num_threads();
  std::string first;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto est = ml::make_estimator("kmeans", {{"n_clusters", "3"}});
    est->fit_weighted(X, Tensor(), W);
    if (t == 1) first = est->to_json_text();
    else EXPECT_EQ(est->to_json_text(), first) << t << " threads";
  }
  set_num_threads(saved);
  auto est = ml::make_estimator("kmeans", {{"n_clusters", "3"}});
  est->fit_weighted(X, Tensor(), W);
  std::vector<int64_t> lab = est->predict(X).to_vector<int64_t>();
  nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  std::vector<float> centers = ml::f32_from_hex(j["state"]["cluster_centers"].get<std::string>(), "centers");
  double inertia = 0.0;
  for (int64_t c = 0; c < 3; ++c) {
    double sw = 0.0, s[3] = {0, 0, 0};
    for (int64_t i = 0; i < n; ++i)
      if (lab[i] == c) {
        sw += w[i];
        for (int64_t k = 0; k < d; ++k) s[k] += static_cast<double>(w[i]) * x[i * d + k];
      }
    for (int64_t k = 0; k < d; ++k) EXPECT_NEAR(centers[c * d + k], s[k] / sw, 1e-4) << "center " << c;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      const double dv = x[i * d + k] - centers[lab[i] * d + k];
      inertia += static_cast<double>(w[i]) * dv * dv;
    }
  EXPECT_NEAR(ml::f32_from_hex(j["state"]["inertia"].get<std::string>(), "inertia")[0], inertia, 1e-3 * inertia);
  auto pca = ml::make_estimator("pca");  // no weights (as scikit-learn's PCA)
  EXPECT_THROW(pca->fit_weighted(X, Tensor(), W), Error);
}

// Boosting with weights: a weight of 0 on a third of the rows whose labels are scrambled recovers the
// clean fit's accuracy, which the unweighted fit on the same rows loses; the initial score is the
// weighted mean.
TEST(SampleWeight, BoostingIgnoresZeroWeightRowsAndTakesTheWeightedMean) {
  WeightedData s = make_data(1500, 5, true);
  for (int64_t i = 0; i < s.n; ++i) {
    s.w[i] = i % 3 == 0 ? 0.0f : 1.0f;
    if (i % 3 == 0) s.y[i] = 1.0f - s.y[i];  // flipped labels, weight 0
  }
  const WeightedData clean = make_data(1500, 5, true);
  auto weighted = ml::make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "30"}});
  auto plain = ml::make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "30"}});
  weighted->fit_weighted(s.X(), s.Y(), s.W());
  plain->fit(s.X(), s.Y());
  const double acc_w = weighted->score(clean.X(), clean.Y()), acc_p = plain->score(clean.X(), clean.Y());
  EXPECT_GT(acc_w, 0.93);
  EXPECT_GT(acc_w, acc_p + 0.1) << "weighted " << acc_w << " plain " << acc_p;
  // One round with learning_rate 1e-30: predictions are the initial score, the weighted mean of y.
  WeightedData r = make_data(200, 3, false);
  auto base = ml::make_estimator("hist_gradient_boosting_regressor", {{"max_iter", "1"}, {"learning_rate", "1e-30"}});
  base->fit_weighted(r.X(), r.Y(), r.W());
  double sw = 0.0, swy = 0.0;
  for (int64_t i = 0; i < r.n; ++i) {
    sw += r.w[i];
    swy += static_cast<double>(r.w[i]) * r.y[i];
  }
  EXPECT_NEAR(base->predict(r.X()).to_vector<float>()[0], swy / sw, 1e-5);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0.0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], tol * std::max(1.0, scale)) << what << " entry " << k;
}

TEST(SampleWeight, RidgeAndLeastSquaresEqualTheFloat64WeightedSolution) {
  const WeightedData s = make_data(301, 5, false);
  for (double alpha : {0.0, 3.0}) {
    auto est = ml::make_estimator(alpha == 0.0 ? "linear_regression" : "ridge",
                                  alpha == 0.0 ? ml::Params{} : ml::Params{{"alpha", "3"}});
    est->fit_weighted(s.X(), s.Y(), s.W());
    expect_close(coef_of(*est), ridge_f64(s, alpha), 2e-5, alpha == 0.0 ? "linear_regression" : "ridge");
  }
}

TEST(SampleWeight, IntegerWeightsFitLikeRepeatedRows) {
  const WeightedData reg = make_data(257, 5, false), cls = make_data(257, 5, true);
  const struct {
    const char* name;
    ml::Params params;
    const WeightedData* data;
    double tol;
  } cases[] = {
      {"lasso", {{"alpha", "0.05"}, {"tol", "1e-7"}, {"max_iter", "5000"}}, &reg, 2e-4},
      {"elastic_net", {{"alpha", "0.05"}, {"l1_ratio", "0.3"}, {"tol", "1e-7"}, {"max_iter", "5000"}}, &reg, 2e-4},
      {"logistic_regression", {{"C", "0.7"}, {"tol", "1e-6"}, {"max_iter", "500"}}, &cls, 2e-3},
      {"logistic_regression", {{"penalty", "none"}, {"tol", "1e-5"}, {"max_iter", "3000"}}, &cls, 5e-3},
      {"gaussian_nb", {}, &cls, 1e-5},
      {"bernoulli_nb", {{"binarize", "0"}}, &cls, 1e-5},
  };
  for (const auto& c : cases) {
    const WeightedData rep = c.data->repeated();
    auto weighted = ml::make_estimator(c.name, c.params), repeated = ml::make_estimator(c.name, c.params);
    weighted->fit_weighted(c.data->X(), c.data->Y(), c.data->W());
    repeated->fit(rep.X(), rep.Y());
    expect_close(coef_of(*weighted), coef_of(*repeated), c.tol, c.name);
  }
}

TEST(SampleWeight, AllOnesGiveTheUnweightedBits) {
  const WeightedData reg = make_data(129, 4, false), cls = make_data(129, 4, true);
  const Tensor ones = Tensor::from_vector(std::vector<float>(129, 1.0f), {129});
  for (const char* name : {"linear_regression", "ridge", "lasso", "elastic_net", "logistic_regression", "gaussian_nb",
                           "bernoulli_nb", "hist_gradient_boosting_classifier", "hist_gradient_boosting_regressor",
                           "decision_tree_classifier", "random_forest_regressor"}) {
    const WeightedData& s = is_classifier(name) ? cls : reg;
    auto a = ml::make_estimator(name), b = ml::make_estimator(name);
    a->fit(s.X(), s.Y());
    b->fit_weighted(s.X(), s.Y(), ones);
    EXPECT_EQ(a->to_json_text(), b->to_json_text()) << name;
    auto c = ml::make_estimator(name);
    c->fit_weighted(s.X(), s.Y(), Tensor());  // undefined: unweighted
    EXPECT_EQ(a->to_json_text(), c->to_json_text()) << name;
  }
}

TEST(SampleWeight, SameBytesAtThreads123AndAChangedWeightMovesTheModel) {
  const WeightedData reg = make_data(2003, 7, false), cls = make_data(2003, 7, true);
  const int saved = num_threads();
  for (const char* name : {"linear_regression", "ridge", "lasso", "elastic_net", "logistic_regression", "gaussian_nb",
                           "bernoulli_nb", "hist_gradient_boosting_classifier", "hist_gradient_boosting_regressor"}) {
    const WeightedData& s = is_classifier(name) ? cls : reg;
    std::string first;
    for (int t : {1, 2, 3}) {
      set_num_threads(t);
      auto est = ml::make_estimator(name);
      est->fit_weighted(s.X(), s.Y(), s.W());
      const std::string text = est->to_json_text() + est->predict(s.X()).digest();
      if (t == 1) first = text;
      else EXPECT_EQ(text, first) << name << " at " << t << " threads";
    }
    set_num_threads(saved);
    WeightedData moved = s;
    moved.w[5] += 1.0f;
    auto a = ml::make_estimator(name);
    a->fit_weighted(moved.X(), moved.Y(), moved.W());
    EXPECT_NE(a->to_json_text() + a->predict(s.X()).digest(), first) << name << ": weight 5 changed, model did not";
  }
}

TEST(SampleWeight, BadWeightsAreRefusedWithClearErrors) {
  const WeightedData s = make_data(20, 3, false);
  auto est = ml::make_estimator("ridge");
  auto msg = [&](std::vector<float> w, std::vector<int64_t> shape) {
    return error_of([&] { est->fit_weighted(s.X(), s.Y(), Tensor::from_vector(w, shape)); });
  };
  std::vector<float> w = s.w;
  w[3] = -1.0f;
  EXPECT_NE(msg(w, {20}).find("ridge: sample_weight holds -1 at row 3"), std::string::npos) << msg(w, {20});
  w[3] = std::nanf("");
  EXPECT_NE(msg(w, {20}).find("must be finite and >= 0"), std::string::npos);
  EXPECT_NE(msg(std::vector<float>(19, 1.0f), {19}).find("sample_weight has 19 entries but X has 20 rows"),
            std::string::npos);
  EXPECT_NE(msg(std::vector<float>(20, 0.0f), {20}).find("sample_weight is zero for every row"), std::string::npos);
  EXPECT_NE(msg(std::vector<float>(20, 1.0f), {4, 5}).find("sample_weight must be 1-d"), std::string::npos);
  auto pca = ml::make_estimator("pca");
  EXPECT_NE(error_of([&] { pca->fit_weighted(s.X(), Tensor(), s.W()); }).find("pca: sample_weight is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace bl
