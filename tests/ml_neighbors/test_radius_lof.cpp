// test_radius_lof.cpp: radius_neighbors_classifier, radius_neighbors_regressor and
// local_outlier_factor against float64 evaluations of their definitions on random data (queries
// with a training row within 1e-4 of the radius are left out of the comparison), a training row
// exactly on the radius, duplicate points (distance weights, LOF with more copies than
// neighbors), identical model files and outputs at threads 1, 2 and 3, and named errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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

// n rows of d features uniform in [-1, 1) shifted by class (3 classes, i % 3), y the class; reg:
// y a smooth target instead.
Data make_data(int64_t n, int64_t d, uint64_t seed, bool reg = false) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  out.c = 3;
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % 3);
    float t = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      const float v = rng.uniform_pm1() + (j == 0 ? 0.5f * static_cast<float>(c) : 0.0f);
      out.x.push_back(v);
      t += v * static_cast<float>(j + 1);
    }
    out.y.push_back(reg ? t : static_cast<float>(c));
  }
  return out;
}

double dist2(const Data& a, int64_t i, const Data& b, int64_t j) {
  double s = 0;
  for (int64_t k = 0; k < a.d; ++k) {
    const double t = static_cast<double>(a.x[i * a.d + k]) - b.x[j * b.d + k];
    s += t * t;
  }
  return s;
}

// True when some training row lies within a relative 1e-4 of the radius of query i.
bool near_boundary(const Data& train, const Data& test, int64_t i, double r) {
  for (int64_t j = 0; j < train.n; ++j)
    if (std::fabs(std::sqrt(dist2(test, i, train, j)) - r) < 1e-4 * r) return true;
  return false;
}

// float64 radius votes of query i: per class (classifier) or the weighted mean (regressor).
std::vector<double> reference_votes(const Data& train, const Data& test, int64_t i, double r, bool distance,
                                    bool classes) {
  std::vector<double> w, v;
  bool exact = false;
  for (int64_t j = 0; j < train.n; ++j) {
    const double dd = dist2(test, i, train, j);
    if (dd <= r * r) {
      w.push_back(dd == 0.0 ? 0.0 : 1.0 / std::sqrt(dd));
      v.push_back(train.y[j]);
      exact = exact || dd == 0.0;
    }
  }
  for (size_t t = 0; t < w.size(); ++t) w[t] = !distance ? 1.0 : exact ? (w[t] == 0.0 ? 1.0 : 0.0) : w[t];
  std::vector<double> out(static_cast<size_t>(train.c + 2), 0.0);  // class votes, then sum(w y), sum(w)
  for (size_t t = 0; t < w.size(); ++t) {
    if (classes) out[static_cast<size_t>(v[t])] += w[t];
    out[train.c] += w[t] * v[t];
    out[train.c + 1] += w[t];
  }
  return out;
}

TEST(RadiusNeighbors, ClassifierMatchesFloat64) {
  Data train = make_data(240, 5, 11), test = make_data(60, 5, 12);
  for (double r : {1.1, 1.7}) {
    for (const char* weights : {"uniform", "distance"}) {
      auto est = ml::make_estimator("radius_neighbors_classifier",
                                    {{"radius", std::to_string(r)}, {"weights", weights}, {"outlier_label", "7"}});
      est->fit(train.X(), train.Y());
      std::vector<float> p = est->predict_proba(test.X()).to_vector<float>();
      std::vector<float> pred = est->predict(test.X()).to_vector<float>();
      int compared = 0;
      for (int64_t i = 0; i < test.n; ++i) {
        if (near_boundary(train, test, i, r)) continue;
        std::vector<double> v = reference_votes(train, test, i, r, std::string(weights) == "distance", true);
        const double total = v[train.c + 1];
        if (total == 0.0) {
          EXPECT_EQ(pred[i], 7.0f) << "outlier row " << i;
          for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(p[i * 3 + k], 0.0f);
          continue;
        }
        int64_t best = 0;
        for (int64_t k = 0; k < 3; ++k) {
          EXPECT_NEAR(p[i * 3 + k], v[k] / total, 1e-5) << "r=" << r << " " << weights << " row " << i;
          if (v[k] > v[best]) best = k;
        }
        EXPECT_EQ(pred[i], static_cast<float>(best)) << "row " << i;
        ++compared;
      }
      EXPECT_GT(compared, 40);
    }
  }
}

TEST(RadiusNeighbors, RegressorMatchesFloat64) {
  Data train = make_data(240, 4, 21, true), test = make_data(60, 4, 22, true);
  for (double r : {0.6, 1.3}) {
    for (const char* weights : {"uniform", "distance"}) {
      auto est = ml::make_estimator("radius_neighbors_regressor", {{"radius", std::to_string(r)}, {"weights", weights}});
      est->fit(train.X(), train.Y());
      std::vector<float> pred = est->predict(test.X()).to_vector<float>();
      int outliers = 0;
      for (int64_t i = 0; i < test.n; ++i) {
        if (near_boundary(train, test, i, r)) continue;
        std::vector<double> v = reference_votes(train, test, i, r, std::string(weights) == "distance", false);
        if (v[train.c + 1] == 0.0) {
          EXPECT_TRUE(std::isnan(pred[i])) << "row " << i << " has no neighbor: NaN expected, got " << pred[i];
          ++outliers;
          continue;
        }
        const double ref = v[train.c] / v[train.c + 1];
        EXPECT_NEAR(pred[i], ref, 1e-5 * std::max(1.0, std::fabs(ref))) << "r=" << r << " " << weights << " row " << i;
      }
      if (r < 1.0) EXPECT_GT(outliers, 0) << "radius " << r << " leaves no query without neighbors";
    }
  }
}

TEST(RadiusNeighbors, RowExactlyOnTheRadiusIsANeighbor) {
  // Query (1, 0); training rows (4, 0) at distance exactly 3 (D = -8 + 1 + 16 = 9, exact), (1, 1)
  // at 1 and (9, 9) far away.
  Tensor X = Tensor::from_vector(std::vector<float>{4, 0, 1, 1, 9, 9}, {3, 2});
  Tensor y = Tensor::from_vector(std::vector<float>{10, 20, 1000}, {3});
  Tensor q = Tensor::from_vector(std::vector<float>{1, 0}, {1, 2});
  auto at = [&](const char* r) {
    auto est = ml::make_estimator("radius_neighbors_regressor", {{"radius", r}});
    est->fit(X, y);
    return est->predict(q).to_vector<float>()[0];
  };
  EXPECT_EQ(at("3"), 15.0f);
  EXPECT_EQ(at("2.9999999"), 20.0f);
  EXPECT_EQ(at("0.5") != at("0.5"), true) << "no neighbor: NaN";
  // The classifier counts the boundary row too: classes 0 (boundary row) and 1, one vote each, the
  // lower class wins the tie.
  Tensor yc = Tensor::from_vector(std::vector<float>{0, 1, 1}, {3});
  auto c = ml::make_estimator("radius_neighbors_classifier", {{"radius", "3"}});
  c->fit(X, yc);
  EXPECT_EQ(c->predict_proba(q).to_vector<float>(), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(c->predict(q).to_vector<float>()[0], 0.0f);
}

TEST(RadiusNeighbors, DuplicatesAndZeroDistance) {
  // Two copies of (1, 1) and a close row: distance weights give the exact matches all the weight.
  Tensor X = Tensor::from_vector(std::vector<float>{1, 1, 1, 1.25f, 1, 1}, {3, 2});
  Tensor y = Tensor::from_vector(std::vector<float>{5, 100, 7}, {3});
  Tensor q = Tensor::from_vector(std::vector<float>{1, 1, 1, 1.125f}, {2, 2});
  auto reg = ml::make_estimator("radius_neighbors_regressor", {{"radius", "1"}, {"weights", "distance"}});
  reg->fit(X, y);
  std::vector<float> p = reg->predict(q).to_vector<float>();
  EXPECT_EQ(p[0], 6.0f);
  // (1, 1.125): distances 0.125 (twice) and 0.125: equal weights, the plain mean.
  EXPECT_NEAR(p[1], (5.0 + 100.0 + 7.0) / 3.0, 1e-5);
  Tensor yc = Tensor::from_vector(std::vector<float>{3, 4, 4}, {3});
  auto cls = ml::make_estimator("radius_neighbors_classifier", {{"radius", "1"}, {"weights", "distance"}});
  cls->fit(X, yc);
  // (1, 1): the two exact matches, classes 3 and 4, tie: the lower class.
  EXPECT_EQ(cls->predict(q).to_vector<float>(), (std::vector<float>{3, 4}));
  Tensor q2 = Tensor::from_vector(std::vector<float>{1, 1.25f}, {1, 2});
  EXPECT_EQ(cls->predict_proba(q2).to_vector<float>(), (std::vector<float>{0, 1}));
}

TEST(RadiusNeighbors, OutlierLabels) {
  Tensor X = Tensor::from_vector(std::vector<float>{0, 0, 0, 1, 5, 5}, {3, 2});
  Tensor y = Tensor::from_vector(std::vector<int64_t>{2, 2, 9}, {3});
  Tensor q = Tensor::from_vector(std::vector<float>{0, 0.5f, 20, 20, 5, 5.5f, 40, 0}, {4, 2});
  auto none = ml::make_estimator("radius_neighbors_classifier", {{"radius", "1"}});
  none->fit(X, y);
  std::string m = error_of([&] { none->predict(q); });
  EXPECT_NE(m.find("query row 1"), std::string::npos) << m;
  EXPECT_NE(m.find("outlier_label"), std::string::npos) << m;
  auto num = ml::make_estimator("radius_neighbors_classifier", {{"radius", "1"}, {"outlier_label", "-3"}});
  num->fit(X, y);
  Tensor pred = num->predict(q);
  EXPECT_EQ(pred.dtype(), DType::i64);
  EXPECT_EQ(pred.to_vector<int64_t>(), (std::vector<int64_t>{2, -3, 9, -3}));
  EXPECT_EQ(num->predict_proba(q).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0}));
  auto freq = ml::make_estimator("radius_neighbors_classifier", {{"radius", "1"}, {"outlier_label", "most_frequent"}});
  freq->fit(X, y);
  EXPECT_EQ(freq->predict(q).to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 9, 2}));
  EXPECT_EQ(freq->predict_proba(q).to_vector<float>(), (std::vector<float>{1, 0, 1, 0, 0, 1, 1, 0}));
  auto again = ml::estimator_from_json_text(freq->to_json_text());
  EXPECT_EQ(again->predict(q).to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 9, 2}));
}

// float64 LOF of the definition (k nearest other rows, ties to the lower index).
struct LofRef {
  std::vector<double> kdist, lrd, nof;
  int64_t k;
};

std::vector<int64_t> knn_ref(const Data& train, const Data& q, int64_t i, int64_t k, int64_t skip) {
  std::vector<int64_t> order;
  for (int64_t j = 0; j < train.n; ++j)
    if (j != skip) order.push_back(j);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return dist2(q, i, train, a) < dist2(q, i, train, b); });
  order.resize(static_cast<size_t>(k));
  return order;
}

double lrd_ref(const Data& train, const Data& q, int64_t i, const std::vector<int64_t>& nb, const std::vector<double>& kd) {
  double s = 0;
  for (int64_t j : nb) s += std::max(std::sqrt(dist2(q, i, train, j)), kd[j]);
  return 1.0 / (s / static_cast<double>(nb.size()) + 1e-10);
}

TEST(LocalOutlierFactor, MatchesFloat64) {
  Data train = make_data(150, 3, 31), test = make_data(40, 3, 32);
  for (int i = 0; i < 3; ++i) test.x[i * 3] += 4.0f;  // a few clear outliers
  const int64_t k = 7;
  LofRef ref;
  std::vector<std::vector<int64_t>> nbs;
  for (int64_t i = 0; i < train.n; ++i) {
    nbs.push_back(knn_ref(train, train, i, k, i));
    ref.kdist.push_back(std::sqrt(dist2(train, i, train, nbs.back().back())));
  }
  for (int64_t i = 0; i < train.n; ++i) ref.lrd.push_back(lrd_ref(train, train, i, nbs[i], ref.kdist));
  for (int64_t i = 0; i < train.n; ++i) {
    double s = 0;
    for (int64_t j : nbs[i]) s += ref.lrd[j] / ref.lrd[i];
    ref.nof.push_back(-s / k);
  }
  for (const char* contamination : {"auto", "0.1", "0.25"}) {
    auto est = ml::make_estimator("local_outlier_factor", {{"n_neighbors", "7"}, {"contamination", contamination}});
    est->fit(train.X());
    nlohmann::json state;
    est->save_state(state);
    std::vector<float> nof = ml::f32_from_hex(state["negative_outlier_factor"].get<std::string>(), "nof");
    const float offset = ml::f32_from_hex(state["offset"].get<std::string>(), "offset")[0];
    for (int64_t i = 0; i < train.n; ++i) EXPECT_NEAR(nof[i], ref.nof[i], 1e-5 * std::fabs(ref.nof[i])) << i;
    double want_offset = -1.5;
    if (std::string(contamination) != "auto") {
      std::vector<double> s = ref.nof;
      std::sort(s.begin(), s.end());
      const double at = std::stod(contamination) * static_cast<double>(train.n - 1);
      const int64_t lo = static_cast<int64_t>(at);
      want_offset = s[lo] + (at - lo) * (s[lo + 1] - s[lo]);
    }
    EXPECT_NEAR(offset, want_offset, 1e-5 * std::fabs(want_offset));
    std::vector<float> dec = est->decision_function(test.X()).to_vector<float>();
    std::vector<float> pred = est->predict(test.X()).to_vector<float>();
    for (int64_t i = 0; i < test.n; ++i) {
      std::vector<int64_t> nb = knn_ref(train, test, i, k, -1);
      const double l = lrd_ref(train, test, i, nb, ref.kdist);
      double s = 0;
      for (int64_t j : nb) s += ref.lrd[j] / l;
      const double score = -s / k;
      EXPECT_NEAR(static_cast<double>(dec[i]) + offset, score, 2e-5 * std::fabs(score)) << "row " << i;
      EXPECT_EQ(pred[i], dec[i] < 0.0f ? -1.0f : 1.0f);
      if (i < 3) EXPECT_EQ(pred[i], -1.0f) << "shifted row " << i;
    }
  }
}

TEST(LocalOutlierFactor, MoreCopiesThanNeighbors) {
  // 6 copies of the origin and a few other rows, k = 3: the copies' reachability distances are 0,
  // their lrd 1e10 (the 1e-10 guard), and every score stays finite.
  std::vector<float> x(12, 0.0f);
  for (float v : {1.0f, 0.0f, 0.0f, 1.0f, 2.0f, 2.0f, -1.0f, 3.0f}) x.push_back(v);
  Tensor X = Tensor::from_vector(x, {10, 2});
  auto est = ml::make_estimator("local_outlier_factor", {{"n_neighbors", "3"}});
  est->fit(X);
  nlohmann::json state;
  est->save_state(state);
  std::vector<float> lrd = ml::f32_from_hex(state["lrd"].get<std::string>(), "lrd");
  std::vector<float> kd = ml::f32_from_hex(state["k_distance"].get<std::string>(), "kd");
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(kd[i], 0.0f);
    EXPECT_EQ(lrd[i], 1e10f);
  }
  std::vector<float> dec = est->decision_function(X).to_vector<float>();
  for (float v : dec) EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_EQ(est->predict(X).to_vector<float>()[0], 1.0f);
  EXPECT_EQ(est->predict(X).to_vector<float>()[9], -1.0f);
}

TEST(RadiusLof, SameBytesAtThreads123) {
  Data train = make_data(700, 6, 41), test = make_data(300, 6, 42);
  Data reg = make_data(700, 6, 43, true);
  ml_common::expect_same_bytes_at_threads_123("radius_neighbors_classifier",
                                              {{"radius", "1.6"}, {"weights", "distance"}, {"outlier_label", "5"}},
                                              train.X(), train.Y(), test.X());
  ml_common::expect_same_bytes_at_threads_123("radius_neighbors_regressor", {{"radius", "1.2"}, {"weights", "distance"}},
                                              reg.X(), reg.Y(), test.X());
  ml_common::expect_same_bytes_at_threads_123("local_outlier_factor", {{"n_neighbors", "10"}, {"contamination", "0.1"}},
                                              train.X(), Tensor(), test.X());
  // decision_function too.
  std::vector<float> first;
  const int saved = num_threads();
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto est = ml::make_estimator("local_outlier_factor", {{"n_neighbors", "10"}});
    est->fit(train.X());
    std::vector<float> d = est->decision_function(test.X()).to_vector<float>();
    if (t == 1) first = d;
    else EXPECT_EQ(std::memcmp(d.data(), first.data(), d.size() * sizeof(float)), 0) << t;
  }
  set_num_threads(saved);
  ml_common::expect_input_change_moves_the_model("radius_neighbors_regressor", {{"radius", "1.2"}}, reg, 0.75f);
}

TEST(RadiusLof, NamedErrors) {
  auto msg = [](const char* name, const ml::Params& p) { return error_of([&] { ml::make_estimator(name, p); }); };
  EXPECT_NE(msg("radius_neighbors_classifier", {{"radius", "0"}}).find("radius=0"), std::string::npos);
  EXPECT_NE(msg("radius_neighbors_regressor", {{"radius", "-1"}}).find("radius"), std::string::npos);
  EXPECT_NE(msg("radius_neighbors_classifier", {{"outlier_label", "often"}}).find("outlier_label"), std::string::npos);
  EXPECT_NE(msg("radius_neighbors_regressor", {{"outlier_label", "1"}}).find("outlier_label"), std::string::npos);
  EXPECT_NE(msg("radius_neighbors_classifier", {{"weights", "gaussian"}}).find("weights"), std::string::npos);
  EXPECT_NE(msg("local_outlier_factor", {{"contamination", "0.6"}}).find("contamination"), std::string::npos);
  EXPECT_NE(msg("local_outlier_factor", {{"contamination", "0"}}).find("contamination"), std::string::npos);
  EXPECT_NE(msg("local_outlier_factor", {{"novelty", "false"}}).find("novelty"), std::string::npos);
  EXPECT_NE(msg("local_outlier_factor", {{"n_neighbors", "0"}}).find("n_neighbors"), std::string::npos);
  auto lof = ml::make_estimator("local_outlier_factor");
  std::string m = error_of([&] { lof->fit(Tensor::from_vector(std::vector<float>{1, 2}, {1, 2})); });
  EXPECT_NE(m.find("at least 2 rows"), std::string::npos) << m;
  m = error_of([&] { lof->predict(Tensor::zeros({2, 2})); });
  EXPECT_NE(m.find("predict before fit"), std::string::npos) << m;
  // n_neighbors above the row count is clipped to n - 1, as scikit-learn does.
  lof->fit(Tensor::from_vector(std::vector<float>{0, 0, 1, 0, 0, 1}, {3, 2}));
  nlohmann::json state;
  lof->save_state(state);
  EXPECT_EQ(state["n_neighbors"].get<int64_t>(), 2);
  auto reg = ml::make_estimator("radius_neighbors_regressor");
  reg->fit(Tensor::zeros({4, 3}), Tensor::zeros({4}));
  m = error_of([&] { reg->predict(Tensor::zeros({2, 4})); });
  EXPECT_NE(m.find("features"), std::string::npos) << m;
}

}  // namespace
}  // namespace bl
