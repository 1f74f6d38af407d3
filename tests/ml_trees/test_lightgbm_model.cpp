// Import of LightGBM text models: our raw scores, predictions and SHAP values against LightGBM's
// own, stored by scripts/golden/lightgbm_models.py in tests/data/ml/lightgbm/ (LightGBM 4.7.0).
//
// Raw scores: LightGBM adds the leaf values in binary64 in tree order starting from 0.0, as
// lightgbm_raw does, so every margin must be the same binary64 bits. The sabotage arm adds the same
// leaf values in reverse tree order and must change some margin bits, so the check is not vacuous.
// Transformed predictions use exp64 instead of the C library's exp: within 4 binary64 ulp.
// SHAP values (TreeSHAP, tree_shap.h) against LightGBM's pred_contrib: within 1e-9 of the row's
// largest |value|, and each row's values add up to its margin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/boosting/lightgbm_model.h"
#include "ml/tree/tree_shap.h"
#include "ml_trees/lightgbm_xgboost_golden.h"
#include "ml_trees/ml_trees_util.h"

namespace bl::ml::testing {
namespace {

const std::string kDir = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/ml/lightgbm/";

struct Case : GoldenCase {
  std::vector<double> margin, pred, shap;  // LightGBM's raw scores, predictions, pred_contrib
};

Case load_case(const std::string& name) {
  Case c;
  const nlohmann::json j = read_golden_case(kDir, name, &c);
  c.margin = f64_hex(j["margin"].get<std::string>());
  c.pred = f64_hex(j["pred"].get<std::string>());
  c.shap = f64_hex(j["shap"].get<std::string>());
  return c;
}

double ulp(double v) { return std::nextafter(std::fabs(v), INFINITY) - std::fabs(v); }

class LightgbmImportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LightgbmImportTest, MarginsAreLightgbmsBits) {
  Case c = load_case(GetParam());
  LightgbmImport imp = import_lightgbm_text(read_file_text(c.model), c.model);
  std::vector<double> raw = lightgbm_raw(imp, c.X.data(), c.n, c.d);
  ASSERT_EQ(raw.size(), c.margin.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    ASSERT_EQ(std::memcmp(&raw[i], &c.margin[i], sizeof(double)), 0)
        << GetParam() << " margin " << i << ": " << raw[i] << " vs LightGBM " << c.margin[i];
  }
  // Transformed predictions (LightGBM's predict): binary64 with exp64.
  std::vector<double> pred = raw;
  lightgbm_transform(imp, pred, c.n);
  ASSERT_EQ(pred.size(), c.pred.size());
  int64_t exact = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    EXPECT_LE(std::fabs(pred[i] - c.pred[i]), 4.0 * ulp(c.pred[i])) << GetParam() << " prediction " << i;
    exact += pred[i] == c.pred[i];
  }
  std::cout << "  " << GetParam() << ": " << raw.size() << " margins bit-equal; " << exact << " / " << pred.size()
            << " predictions bit-equal to LightGBM's (binary64)\n";
}

TEST_P(LightgbmImportTest, EstimatorOutputsAndRoundTrip) {
  Case c = load_case(GetParam());
  auto est = make_estimator("lightgbm_model", {{"model_file", c.model}});
  Tensor X = Tensor::from_vector(c.X, {c.n, c.d});
  est->fit(X);
  const std::vector<float> margin = est->transform(X).to_vector<float>();
  for (size_t i = 0; i < margin.size(); ++i) {
    EXPECT_EQ(margin[i], static_cast<float>(c.margin[i])) << GetParam() << " f32 margin " << i;
  }
  const int64_t k = static_cast<int64_t>(c.margin.size()) / c.n;
  if (c.objective == "binary" || c.objective == "multiclass") {
    const std::vector<float> p = est->predict_proba(X).to_vector<float>();
    for (int64_t i = 0; i < c.n; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        const float want = static_cast<float>(c.pred[i * k + j]);
        const float got = k == 1 ? p[i * 2 + 1] : p[i * k + j];
        EXPECT_LE(std::fabs(got - want), std::nextafter(std::fabs(want), INFINITY) - std::fabs(want))
            << GetParam() << " probability " << i;
      }
    }
  } else {
    const std::vector<float> p = est->predict(X).to_vector<float>();
    for (int64_t i = 0; i < c.n; ++i) {
      const float want = static_cast<float>(c.pred[i]);
      EXPECT_LE(std::fabs(p[i] - want), std::nextafter(std::fabs(want), INFINITY) - std::fabs(want))
          << GetParam() << " prediction " << i;
    }
  }
  expect_round_trip(*est, X);
  expect_weighted_score(*est, X, c.objective == "binary" || c.objective == "multiclass");
}

TEST_P(LightgbmImportTest, ShapMatchesPredContribAndAddsUp) {
  Case c = load_case(GetParam());
  auto est = make_estimator("lightgbm_model", {{"model_file", c.model}});
  Tensor X = Tensor::from_vector(c.X, {c.n, c.d});
  est->fit(X);
  int64_t cols = 0;
  const std::vector<double> shap = estimator_shap_values(*est, X, &cols);
  const int64_t k = static_cast<int64_t>(c.margin.size()) / c.n;
  ASSERT_EQ(cols, k * (c.d + 1));
  ASSERT_EQ(shap.size(), c.shap.size());
  double worst = 0.0;
  for (int64_t i = 0; i < c.n; ++i) {
    double scale = 1e-300;
    for (int64_t j = 0; j < cols; ++j) scale = std::max(scale, std::fabs(c.shap[i * cols + j]));
    for (int64_t j = 0; j < cols; ++j) {
      const double e = std::fabs(shap[i * cols + j] - c.shap[i * cols + j]) / scale;
      worst = std::max(worst, e);
      EXPECT_LE(e, 1e-9) << GetParam() << " row " << i << " column " << j;
    }
    for (int64_t g = 0; g < k; ++g) {
      double sum = 0.0;
      for (int64_t j = 0; j <= c.d; ++j) sum += shap[i * cols + g * (c.d + 1) + j];
      const double m = c.margin[i * k + g];
      EXPECT_LE(std::fabs(sum - m), 1e-12 * (std::fabs(m) + scale)) << GetParam() << " additivity row " << i;
    }
  }
  std::cout << "  " << GetParam() << ": largest SHAP difference to LightGBM's pred_contrib " << worst
            << " (relative to the row's largest value)\n";
}

INSTANTIATE_TEST_SUITE_P(Models, LightgbmImportTest,
                         ::testing::Values("regression", "zero_as_missing", "binary", "multiclass", "poisson",
                                           "categorical", "random_forest"));

// Sabotage arm: the same leaf values added in reverse tree order give other binary64 bits for some
// margin, so the bit-equality check above depends on the order it claims.
TEST(LightgbmImportSabotage, ReverseTreeOrderChangesMargins) {
  Case c = load_case("regression");
  LightgbmImport imp = import_lightgbm_text(read_file_text(c.model), c.model);
  std::vector<double> row(static_cast<size_t>(c.d));
  int64_t differ = 0;
  for (int64_t i = 0; i < c.n; ++i) {
    lightgbm_row(&c.X[i * c.d], c.d, row.data());
    double s = 0.0;
    for (size_t t = imp.trees.size(); t-- > 0;) s += imp.trees[t].leaf_value[imp.trees[t].leaf_of(row.data())];
    differ += s != c.margin[i];
  }
  EXPECT_GT(differ, 0) << "reverse-order sums equal LightGBM's margins everywhere: the check proves no order";
}

TEST(LightgbmImport, SameBytesAtThreads123) {
  Case c = load_case("multiclass");
  Tensor X = Tensor::from_vector(c.X, {c.n, c.d});
  const int saved = num_threads();
  std::string first;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto est = make_estimator("lightgbm_model", {{"model_file", c.model}});
    est->fit(X);
    int64_t cols = 0;
    std::vector<double> shap = estimator_shap_values(*est, X, &cols);
    std::string bytes = tensor_sha(est->transform(X)) + tensor_sha(est->predict_proba(X)) +
                        std::string(reinterpret_cast<const char*>(shap.data()), shap.size() * sizeof(double));
    if (t == 1) first = bytes;
    else EXPECT_EQ(bytes, first) << "threads=" << t;
  }
  set_num_threads(saved);
}

// Hostile model files: each is refused with a bl::Error naming the problem.
TEST(LightgbmImportErrors, NameTheProblem) {
  const std::string good = read_file_text(kDir + "binary.txt");
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      import_lightgbm_text(text, "bad.txt");
      ADD_FAILURE() << "accepted a model that should fail with " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  expect_error(good.substr(0, good.size() / 2), "truncated");
  expect_error("", "not a LightGBM text model");
  expect_error("{\"learner\": 1}", "not a LightGBM text model");
  // One edit of the good file each: {what to find, what it becomes, the words the error must hold}.
  const struct {
    const char *from, *to, *needle;
  } edits[] = {
      {"objective=binary sigmoid:1", "objective=cross_entropy_lambda", "not supported"},
      {"version=v4", "version=v9", "version"},
      {"max_feature_idx=5", "max_feature_idx=-1", "max_feature_idx"},
      {"num_tree_per_iteration=1", "num_tree_per_iteration=3", "num_tree_per_iteration"},
      {"Tree=1\n", "Tree=7\n", "expected Tree=1"},
      {"num_leaves=7", "num_leaves=2147483647", "holds"},
      {"num_leaves=7", "num_leaves=99999999999999999999", "not an integer"},
      {"left_child=", "left_child=0 ", "holds"},  // one value too many
      {"split_feature=", "split_feature=9", "out of range"},
      {"leaf_value=", "leaf_value=abc", "not a number"},
      {"leaf_value=", "leaf_value=nan ", "leaf_value"},
      {"tree_sizes=", "tree_sizes=1 ", "tree_sizes"},
      {"end of trees", "end of forests", "truncated"},
      {"\n\nTree=1\n", "\n\njunk line\nTree=1\n", "neither a Tree= block"},
      {"is_linear=0", "is_linear=1", "linear trees"},
      {"num_cat=0\n", "num_cat=0\nnum_cat=0\n", "appears twice"},
  };
  for (const auto& e : edits) expect_error(replace(e.from, e.to), e.needle);
  // Tree 0 of binary.txt: left_child=2 4 -1 ... : a child pointing back at the root (a cycle), out of
  // range, a leaf reached twice, a missing type 3, a categorical split without category sets.
  const size_t lc = good.find("left_child=");
  const std::string line = good.substr(lc, good.find('\n', lc) - lc);
  std::string words = line.substr(std::string("left_child=").size());
  const std::string rest = words.substr(words.find(' '));
  expect_error(replace(line, "left_child=0" + rest), "does not come after it");
  expect_error(replace(line, "left_child=99" + rest), "out of range");
  expect_error(replace(line, "left_child=-1" + rest), "two parents");
  const size_t dt = good.find("decision_type=");
  const std::string dline = good.substr(dt, good.find('\n', dt) - dt);
  const std::string drest = dline.substr(dline.find(' '));
  expect_error(replace(dline, "decision_type=12" + drest), "missing type");
  expect_error(replace(dline, "decision_type=9" + drest), "category-set index");
  // The estimator: no model file, a missing file, X of the wrong width.
  EXPECT_THROW(make_estimator("lightgbm_model")->fit(Tensor()), Error);
  EXPECT_THROW(make_estimator("lightgbm_model", {{"model_file", kDir + "missing.txt"}})->fit(Tensor()), Error);
  auto est = make_estimator("lightgbm_model", {{"model_file", kDir + "binary.txt"}});
  EXPECT_THROW(est->fit(Tensor::from_vector(std::vector<float>(4, 0.0f), {1, 4})), Error);
  EXPECT_THROW(make_estimator("lightgbm_model", {{"nope", "1"}}), Error);
}

// A file without counts imports and predicts, and SHAP is refused naming the counts.
TEST(LightgbmImportErrors, ShapNeedsCounts) {
  std::string text = read_file_text(kDir + "regression.txt");
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(pos, end - pos);
    if (l.rfind("leaf_count=", 0) != 0 && l.rfind("internal_count=", 0) != 0) out += l + "\n";
    pos = end + 1;
  }
  const std::string path = ::testing::TempDir() + "/lgb_no_counts.txt";
  write_file_atomic(path, out);
  auto est = make_estimator("lightgbm_model", {{"model_file", path}});
  Tensor X = Tensor::from_vector(std::vector<float>(12, 0.5f), {2, 6});
  est->fit(X);
  EXPECT_NO_THROW(est->predict(X));
  int64_t cols = 0;
  try {
    estimator_shap_values(*est, X, &cols);
    ADD_FAILURE() << "SHAP without counts accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("leaf_count"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bl::ml::testing
