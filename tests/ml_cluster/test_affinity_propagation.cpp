// test_affinity_propagation.cpp: affinity_propagation against a naive float64 message passing
// written from the published update rules (r(i,k) = s(i,k) - max_{k' != k} (a(i,k') + s(i,k'));
// a(i,k) = min(0, r(k,k) + sum_{i' not in {i,k}} max(0, r(i',k))), a(k,k) = sum_{i' != k}
// max(0, r(i',k)), both damped), without the tie-breaking noise, on tie-free blobs: the same
// exemplars, labels and iteration count; the median preference; the all-equal shortcut; predict as
// the nearest exemplar; the noise rule (a symmetric tie that the noise breaks, the same bytes
// whatever the thread count, another random_state moving the model); identical bytes at threads 1,
// 2 and 3 (and the sabotage arm); each refusal named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::state_of;

struct Ref {
  std::vector<int64_t> exemplars, labels;
  int64_t n_iter = 0;
};

Ref naive(const Data& x, double pref, double damping, int64_t max_iter, int64_t conv) {
  const int64_t n = x.n;
  std::vector<std::vector<double>> s(n, std::vector<double>(n)), r = s, a = s;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {
      double t = 0;
      for (int64_t f = 0; f < x.d; ++f) {
        const double v = static_cast<double>(x.x[i * x.d + f]) - x.x[k * x.d + f];
        t += v * v;
      }
      s[i][k] = i == k ? pref : -t;
    }
  std::vector<std::vector<bool>> hist(n, std::vector<bool>(conv, false));
  std::vector<bool> ex(n, false);
  Ref out;
  for (int64_t it = 0; it < max_iter; ++it) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < n; ++k) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t kk = 0; kk < n; ++kk)
          if (kk != k) m = std::max(m, a[i][kk] + s[i][kk]);
        r[i][k] = damping * r[i][k] + (1 - damping) * (s[i][k] - m);
      }
    std::vector<std::vector<double>> na = a;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < n; ++k) {
        double sum = 0;
        for (int64_t ii = 0; ii < n; ++ii)
          if (ii != i && ii != k) sum += std::max(0.0, r[ii][k]);
        const double v = i == k ? sum : std::min(0.0, r[k][k] + sum);
        na[i][k] = damping * a[i][k] + (1 - damping) * v;
      }
    a = na;
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) {
      ex[i] = a[i][i] + r[i][i] > 0;
      hist[i][it % conv] = ex[i];
      count += ex[i];
    }
    out.n_iter = it + 1;
    if (it >= conv && count > 0) {
      bool settled = true;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t c = std::count(hist[i].begin(), hist[i].end(), true);
        settled = settled && (c == 0 || c == conv);
      }
      if (settled) break;
    }
  }
  std::vector<int64_t> I;
  for (int64_t i = 0; i < n; ++i)
    if (ex[i]) I.push_back(i);
  auto join = [&](const std::vector<int64_t>& E) {
    std::vector<int64_t> c(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t b = 0;
      for (size_t k = 1; k < E.size(); ++k)
        if (s[i][E[k]] > s[i][E[b]]) b = static_cast<int64_t>(k);
      c[i] = b;
    }
    for (size_t k = 0; k < E.size(); ++k) c[E[k]] = static_cast<int64_t>(k);
    return c;
  };
  std::vector<int64_t> c = join(I);
  for (size_t k = 0; k < I.size(); ++k) {
    double best = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      if (c[j] != static_cast<int64_t>(k)) continue;
      double sum = 0;
      for (int64_t i = 0; i < n; ++i)
        if (c[i] == static_cast<int64_t>(k)) sum += s[i][j];
      if (sum > best) best = sum, I[k] = j;
    }
  }
  c = join(I);
  std::set<int64_t> centers;
  for (int64_t i = 0; i < n; ++i) centers.insert(I[c[i]]);
  out.exemplars.assign(centers.begin(), centers.end());
  for (int64_t i = 0; i < n; ++i)
    out.labels.push_back(std::lower_bound(out.exemplars.begin(), out.exemplars.end(), I[c[i]]) - out.exemplars.begin());
  return out;
}

TEST(AffinityPropagation, MatchesTheNaiveMessagePassingOnTieFreeData) {
  const Data x = ml_common::uniform_blobs(60, 3, 3, 5.0f, 5);
  for (double damping : {0.5, 0.8})
    for (double pref : {-30.0, -8.0}) {
      const Ref ref = naive(x, pref, damping, 200, 15);
      auto est = ml::make_estimator("affinity_propagation",
                                    {{"damping", ml::param_text(damping)}, {"preference", ml::param_text(pref)}});
      est->fit(x.X());
      const nlohmann::json st = state_of(*est);
      EXPECT_EQ(st["cluster_centers_indices"].get<std::vector<int64_t>>(), ref.exemplars) << damping << " " << pref;
      EXPECT_EQ(st["labels"].get<std::vector<int64_t>>(), ref.labels);
      EXPECT_EQ(st["n_iter"].get<int64_t>(), ref.n_iter);
      // predict: the nearest exemplar, so the fit labels on the training rows of tie-free data
      EXPECT_EQ(est->predict(x.X()).to_vector<int64_t>(), ref.labels);
    }
}

TEST(AffinityPropagation, MedianPreferenceAndEqualShortcut) {
  const Data x = ml_common::uniform_blobs(31, 2, 3, 5.0f, 7);
  // n^2 = 961 values: the median is the 481st smallest similarity.
  std::vector<double> s;
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t j = 0; j < x.n; ++j) {
      double t = 0;
      for (int64_t f = 0; f < x.d; ++f) {
        const double v = static_cast<double>(x.x[i * x.d + f]) - x.x[j * x.d + f];
        t += v * v;
      }
      s.push_back(-t);
    }
  std::sort(s.begin(), s.end());
  auto by_median = ml::make_estimator("affinity_propagation");
  by_median->fit(x.X());
  auto explicit_pref = ml::make_estimator("affinity_propagation", {{"preference", ml::param_text(s[480])}});
  explicit_pref->fit(x.X());
  EXPECT_EQ(state_of(*by_median)["labels"], state_of(*explicit_pref)["labels"]);
  // Every row the same distance apart (an equilateral triangle is not exact in floats; two rows are):
  Data two;
  two.n = 2;
  two.d = 1;
  two.x = {0.0f, 1.0f};
  auto own = ml::make_estimator("affinity_propagation", {{"preference", "0"}});
  own->fit(two.X());
  EXPECT_EQ(state_of(*own)["labels"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 1}));
  auto one = ml::make_estimator("affinity_propagation", {{"preference", "-5"}});
  one->fit(two.X());
  EXPECT_EQ(state_of(*one)["cluster_centers_indices"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0}));
}

TEST(AffinityPropagation, NoiseBreaksSymmetricTies) {
  // Four rows on a square: without the noise every row is symmetric to the others and the messages
  // oscillate; with it the fit settles. The noise is a function of (random_state, i, j) only.
  Data x;
  x.n = 8;
  x.d = 2;
  x.x = {0, 0, 1, 0, 0, 1, 1, 1, 10, 10, 11, 10, 10, 11, 11, 11};
  auto est = ml::make_estimator("affinity_propagation");
  ml::WarningCollector warnings;
  est->fit(x.X());
  EXPECT_TRUE(warnings.messages().empty());
  const std::vector<int64_t> lab = state_of(*est)["labels"].get<std::vector<int64_t>>();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(lab[i], lab[0]);
    EXPECT_EQ(lab[4 + i], lab[4]);
  }
  EXPECT_NE(lab[0], lab[4]);
}

TEST(AffinityPropagation, SameBytesAtThreads123AndInputMovesTheModel) {
  const Data x = ml_common::uniform_blobs(300, 4, 3, 4.0f, 3);
  const ml::Params p{{"damping", "0.7"}};
  ml_common::expect_same_bytes_at_threads_123("affinity_propagation", p, x.X(), Tensor(), x.X());
  ml_common::expect_input_change_moves_the_model("affinity_propagation", p, x, -20.0f);
}

TEST(AffinityPropagation, NonConvergenceWarnsAndKeepsTheModel) {
  const Data x = ml_common::uniform_blobs(60, 3, 3, 5.0f, 5);
  auto est = ml::make_estimator("affinity_propagation", {{"max_iter", "3"}});
  ml::WarningCollector warnings;
  est->fit(x.X());
  ASSERT_EQ(warnings.messages().size(), 1u);
  EXPECT_NE(warnings.messages()[0].find("did not converge"), std::string::npos);
  EXPECT_EQ(state_of(*est)["n_iter"].get<int64_t>(), 3);
}

TEST(AffinityPropagation, RefusalsAreNamed) {
  const Data x = ml_common::uniform_blobs(10, 2, 2, 4.0f, 1);
  EXPECT_NE(error_of([] { ml::make_estimator("affinity_propagation", {{"damping", "0.4"}}); }).find("damping"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("affinity_propagation", {{"max_iter", "0"}}); }).find("max_iter"),
            std::string::npos);
  EXPECT_NE(error_of([] { ml::make_estimator("affinity_propagation", {{"affinity", "precomputed"}}); })
                .find("affinity"),
            std::string::npos);
  auto fit_error = [&](const ml::Params& p, const Data& d) {
    return error_of([&] { ml::make_estimator("affinity_propagation", p)->fit(d.X()); });
  };
  EXPECT_NE(fit_error({{"damping", "1"}}, x).find("damping"), std::string::npos);
  EXPECT_NE(fit_error({}, ml_common::uniform_blobs(4097, 1, 1, 1.0f, 1)).find("limit"), std::string::npos);
  ml_common::expect_predict_before_fit_refused_and_state_round_trip("affinity_propagation", x.X());
}

}  // namespace
}  // namespace bl
