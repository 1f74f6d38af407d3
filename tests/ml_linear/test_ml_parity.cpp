// test_ml_parity.cpp: accuracy parity with scikit-learn on its bundled datasets. The golden file
// tests/data/ml_linear/golden.json comes from scripts/golden/ml_linear.py (scikit-learn, float64);
// each case's test-split metric must be within the stated tolerance of scikit-learn's (or better),
// and the linear regressors' coefficients must match scikit-learn's closely.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/ml/decomposition.h"
#include "bitlearn/ml/linear.h"
#include "ml_test_util.h"

namespace bl {
namespace {

nlohmann::json golden() {
  return nlohmann::json::parse(read_file_text(ml_test::data_path("golden.json")));
}

TEST(MlParity, SklearnBundledDatasets) {
  nlohmann::json g = golden();
  for (const auto& c : g["cases"]) {
    SCOPED_TRACE(c["case"].get<std::string>());
    CsvXy tr = ml_test::load_split(c["dataset"], "train");
    CsvXy te = ml_test::load_split(c["dataset"], "test");
    ml::Params p;
    for (auto it = c["params"].begin(); it != c["params"].end(); ++it) p[it.key()] = it.value();
    auto est = ml::make_estimator(c["estimator"], p);
    est->fit(tr.X, tr.y);
    double ours = est->score(te.X, te.y);
    double ref = c["sklearn"].get<double>(), tol = c["tolerance"].get<double>();
    std::printf("  %-22s %-8s ours %.6f  sklearn %.6f\n", c["case"].get<std::string>().c_str(),
                c["metric"].get<std::string>().c_str(), ours, ref);
    EXPECT_GE(ours, ref - tol - 1e-9);
    if (c.contains("coef")) {
      ml::LinearView v = ml::linear_view(*est);
      std::vector<double> ref_coef = c["coef"].get<std::vector<double>>();
      ASSERT_EQ(v.coef.size(), ref_coef.size());
      double scale = 0;
      for (double x : ref_coef) scale = std::max(scale, std::fabs(x));
      double coef_tol = c["estimator"] == "linear_regression" || c["estimator"] == "ridge" ? 2e-3 : 2e-2;
      for (size_t j = 0; j < ref_coef.size(); ++j) EXPECT_NEAR(v.coef[j], ref_coef[j], coef_tol * scale) << j;
      EXPECT_NEAR(v.intercept[0], c["intercept"].get<double>(), coef_tol * std::max(1.0, scale));
    }
  }
}

TEST(MlParity, KMeansIrisInertia) {
  nlohmann::json g = golden();
  CsvXy tr = ml_test::load_split("iris", "train");
  auto km = ml::make_estimator("kmeans", {{"n_clusters", "3"}});
  km->fit(tr.X);
  double inertia = -km->score(tr.X, Tensor());
  double ref = g["kmeans_iris"]["inertia"].get<double>();
  std::printf("  kmeans iris inertia ours %.4f sklearn %.4f\n", inertia, ref);
  EXPECT_LE(inertia, ref * 1.01);
  auto mb = ml::make_estimator("minibatch_kmeans", {{"n_clusters", "3"}, {"batch_size", "32"}});
  mb->fit(tr.X);
  EXPECT_LE(-mb->score(tr.X, Tensor()), ref * 1.10);
}

TEST(MlParity, PcaIris) {
  nlohmann::json g = golden();
  CsvXy tr = ml_test::load_split("iris", "train");
  auto pca = ml::make_estimator("pca");
  pca->fit(tr.X);
  ml::PcaView v = ml::pca_view(*pca);
  std::vector<double> ev = g["pca_iris"]["explained_variance"].get<std::vector<double>>();
  auto comps = g["pca_iris"]["components"].get<std::vector<std::vector<double>>>();
  ASSERT_EQ(v.n_components, 4);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(v.explained_variance[k], ev[k], 1e-4 * ev[0]) << k;
    if (k < 3) {  // the last component of iris is well separated too, but keep to the leading ones
      for (int j = 0; j < 4; ++j) EXPECT_NEAR(v.components[k * 4 + j], comps[k][j], 2e-3) << k << "," << j;
    }
  }
  Tensor Z = pca->transform(tr.X);
  EXPECT_EQ(Z.shape(), (Shape{tr.X.dim(0), 4}));
}

}  // namespace
}  // namespace bl
