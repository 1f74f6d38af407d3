// test_spline_target.cpp: spline_transformer and target_encoder (src/ml/preprocessing/
// spline_transformer.cpp, target_encoder.cpp). spline_transformer against a float64 reference written
// from the recursive B-spline definition (B_{i,0} the indicator of [t_i, t_{i+1}), the last interval
// closed; B_{i,k} from B_{i,k-1} and B_{i+1,k-1}; the derivative by the same definition): every
// extrapolation, include_bias, uniform and quantile knots (numpy's linspace and percentiles), the
// partition of unity and periodicity; the sabotage arm: linear extrapolation of degree 1 extends two
// splines at each end, and the output with one extended spline differs. target_encoder against float64
// encodings (the shrinkage of smooth=auto with the population variance; the sabotage arm: the sample
// variance gives other values), smooth=a, binary targets, unseen categories, and the cross fitting
// without shuffle equal to encoders fitted on the other blocks. Both: identical bytes at threads 1, 2
// and 3, a moved input moves the model, the state round trip and refused states, named refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/preprocessing/target_encoder.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using Data = ml_common::HostData;
using ml_common::error_of;
using ml_common::state_of;

Data uniform(int64_t n, int64_t d, uint64_t seed, double lo, double hi) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n * d; ++i)
    out.x.push_back(static_cast<float>(lo + (hi - lo) * 0.5 * (1.0 + rng.uniform_pm1())));
  for (int64_t i = 0; i < n; ++i) out.y.push_back(static_cast<float>(2.0 + rng.uniform_pm1()));
  return out;
}

// ---- spline_transformer ----

// B_{i,k}(x) by the recursive definition on knots t (m = len(t) - 1 - degree basis functions; the
// interval `last` = [t[m - 1], t[m]] closed at t[m] = the last base knot, where the values are the
// limits from the left).
double bspline(const std::vector<double>& t, int64_t i, int64_t k, double x, int64_t last) {
  if (k == 0) return x == t[last + 1] ? (i == last ? 1.0 : 0.0) : (t[i] <= x && x < t[i + 1] ? 1.0 : 0.0);
  double v = 0;
  if (t[i + k] > t[i]) v += (x - t[i]) / (t[i + k] - t[i]) * bspline(t, i, k - 1, x, last);
  if (t[i + k + 1] > t[i + 1]) v += (t[i + k + 1] - x) / (t[i + k + 1] - t[i + 1]) * bspline(t, i + 1, k - 1, x, last);
  return v;
}
double bspline_d(const std::vector<double>& t, int64_t i, int64_t k, double x, int64_t last) {
  if (k == 0) return 0.0;
  double v = 0;
  if (t[i + k] > t[i]) v += static_cast<double>(k) / (t[i + k] - t[i]) * bspline(t, i, k - 1, x, last);
  if (t[i + k + 1] > t[i + 1]) v -= static_cast<double>(k) / (t[i + k + 1] - t[i + 1]) * bspline(t, i + 1, k - 1, x, last);
  return v;
}

// The full knot vector of base knots b (non-periodic: the end gaps repeated degree times).
std::vector<double> full_knots(const std::vector<double>& b, int64_t deg, bool periodic) {
  const int64_t nk = static_cast<int64_t>(b.size());
  std::vector<double> t;
  const double period = b[nk - 1] - b[0];
  for (int64_t k = deg; k >= 1; --k) t.push_back(periodic ? b[nk - 1 - k] - period : b[0] - static_cast<double>(k) * (b[1] - b[0]));
  t.insert(t.end(), b.begin(), b.end());
  for (int64_t k = 1; k <= deg; ++k)
    t.push_back(periodic ? b[k] + period : b[nk - 1] + static_cast<double>(k) * (b[nk - 1] - b[nk - 2]));
  return t;
}

// The float64 reference of one column's output for x (inside [b0, b_last], or extrapolated).
std::vector<double> spline_ref(const std::vector<double>& b, int64_t deg, const std::string& extra, double x,
                               int64_t linear_count = -1) {
  const bool periodic = extra == "periodic";
  const std::vector<double> t = full_knots(b, deg, periodic);
  const int64_t nb = static_cast<int64_t>(t.size()) - deg - 1, last = nb - 1;
  const int64_t ns = periodic ? static_cast<int64_t>(b.size()) - 1 : nb;
  const double lo = b.front(), hi = b.back();
  std::vector<double> row(static_cast<size_t>(ns), 0.0);
  if (periodic) {
    double r = std::fmod(x - lo, hi - lo);
    if (r < 0) r += hi - lo;
    x = lo + r;
  }
  if (x >= lo && x <= hi) {
    for (int64_t i = 0; i < nb; ++i) row[i % ns] += bspline(t, i, deg, x, last);
    return row;
  }
  const double end = x < lo ? lo : hi;
  if (extra == "constant") {
    for (int64_t s = 0; s < deg; ++s) {
      const int64_t c = x < lo ? s : ns - deg + s;
      row[c] = bspline(t, c, deg, end, last);
    }
  } else {  // linear
    const int64_t count = linear_count >= 0 ? linear_count : (deg <= 1 ? deg + 1 : deg);
    for (int64_t s = 0; s < count; ++s) {
      const int64_t c = x < lo ? s : ns - 1 - s;
      row[c] = bspline(t, c, deg, end, last) + (x - end) * bspline_d(t, c, deg, end, last);
    }
  }
  return row;
}

std::vector<double> base_knots(const ml::Estimator& est) { return ml_common::f64_field(state_of(est), "base_knots_f64"); }

TEST(SplineTransformer, BasisMatchesTheRecursiveDefinition) {
  const Data train = uniform(40, 2, 3, -2.0, 3.0);
  Data test = uniform(60, 2, 4, -3.5, 4.5);  // a third of the rows outside the training range
  test.x[0] = -2.0f;
  for (const std::string extra : {"constant", "linear", "periodic"})
    for (int64_t deg : {0, 1, 2, 3})
      for (const std::string knots : {"uniform", "quantile"}) {
        if (extra == "periodic" && deg >= 4) continue;
        auto est = ml::make_estimator("spline_transformer", {{"n_knots", "4"},
                                                             {"degree", std::to_string(deg)},
                                                             {"knots", knots},
                                                             {"extrapolation", extra}});
        est->fit(train.X());
        const std::vector<double> flat = base_knots(*est);
        const std::vector<float> z = est->transform(test.X()).to_vector<float>();
        const int64_t ns = extra == "periodic" ? 3 : 3 + deg;
        ASSERT_EQ(static_cast<int64_t>(z.size()), test.n * 2 * ns);
        for (int64_t j = 0; j < 2; ++j) {
          const std::vector<double> b = {flat[j], flat[2 + j], flat[4 + j], flat[6 + j]};
          for (int64_t i = 0; i < test.n; ++i) {
            const std::vector<double> want = spline_ref(b, deg, extra, test.x[i * 2 + j]);
            for (int64_t s = 0; s < ns; ++s)
              ASSERT_NEAR(z[(i * 2 + j) * ns + s], want[s], 2e-6 * std::max(1.0, std::fabs(want[s])))
                  << extra << " degree " << deg << " " << knots << " row " << i << " column " << j << " spline " << s;
          }
        }
      }
}

TEST(SplineTransformer, KnotsPartitionOfUnityBiasAndContinue) {
  // Uniform knots: numpy's linspace of the column range; quantile: linear percentiles (5 rows, 3
  // knots: the minimum, the median, the maximum).
  Data x;
  x.n = 5;
  x.d = 1;
  x.x = {4, 0, 1, 3, 10};
  auto u = ml::make_estimator("spline_transformer", {{"n_knots", "3"}});
  u->fit(x.X());
  EXPECT_EQ(base_knots(*u), (std::vector<double>{0, 5, 10}));
  auto q = ml::make_estimator("spline_transformer", {{"n_knots", "3"}, {"knots", "quantile"}});
  q->fit(x.X());
  EXPECT_EQ(base_knots(*q), (std::vector<double>{0, 3, 10}));
  // Inside the range the splines sum to 1; include_bias=false leaves out each column's last spline.
  const Data train = uniform(50, 3, 7, 0.0, 1.0), test = uniform(30, 3, 8, 0.0, 1.0);
  auto est = ml::make_estimator("spline_transformer");
  est->fit(train.X());
  const std::vector<float> z = est->transform(test.X()).to_vector<float>();
  for (int64_t i = 0; i < test.n; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double s = 0;
      for (int64_t k = 0; k < 7; ++k) s += z[(i * 3 + j) * 7 + k];
      if (test.x[i * 3 + j] >= base_knots(*est)[j] && test.x[i * 3 + j] <= base_knots(*est)[12 + j]) {
        EXPECT_NEAR(s, 1.0, 1e-6);
      }
    }
  auto nobias = ml::make_estimator("spline_transformer", {{"include_bias", "false"}});
  nobias->fit(train.X());
  const std::vector<float> zb = nobias->transform(test.X()).to_vector<float>();
  ASSERT_EQ(zb.size(), static_cast<size_t>(test.n * 3 * 6));
  for (int64_t r = 0; r < test.n * 3; ++r)
    for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(zb[r * 6 + k], z[r * 7 + k]);
  // continue: the end polynomials extended (the recursive definition of the end pieces); error
  // refuses a value beyond the knots naming it.
  auto cont = ml::make_estimator("spline_transformer", {{"extrapolation", "continue"}, {"degree", "2"}, {"n_knots", "3"}});
  cont->fit(x.X());
  auto err = ml::make_estimator("spline_transformer", {{"extrapolation", "error"}});
  err->fit(x.X());
  Data out = x;
  out.x = {-1, 2, 5, 11, 12};
  const std::vector<float> zc = cont->transform(out.X()).to_vector<float>();
  // Beyond the last knot, the last interval's polynomial: the sum is still 1 (a partition of unity
  // on the whole line for the extended pieces).
  for (int64_t i = 0; i < 5; ++i) EXPECT_NEAR(zc[i * 4] + zc[i * 4 + 1] + zc[i * 4 + 2] + zc[i * 4 + 3], 1.0, 1e-6);
  EXPECT_NE(error_of([&] { err->transform(out.X()); }).find("beyond the limits of the knots"), std::string::npos);
  Data in = x;
  in.x = {0, 2, 5, 9, 10};
  EXPECT_NO_THROW(err->transform(in.X()));
}

TEST(SplineTransformer, LinearExtrapolationOfDegreeOneExtendsTwoSplines) {
  // Sabotage arm: one spline per end (degree 1 without the increment) gives another output.
  const Data train = uniform(30, 1, 11, 0.0, 1.0);
  auto est = ml::make_estimator("spline_transformer", {{"degree", "1"}, {"extrapolation", "linear"}, {"n_knots", "4"}});
  est->fit(train.X());
  const std::vector<double> b = base_knots(*est);
  Data t;
  t.n = 2;
  t.d = 1;
  t.x = {-0.5f, 1.7f};
  const std::vector<float> z = est->transform(t.X()).to_vector<float>();
  for (int64_t i = 0; i < 2; ++i) {
    const std::vector<double> want = spline_ref(b, 1, "linear", t.x[i]);
    const std::vector<double> wrong = spline_ref(b, 1, "linear", t.x[i], 1);
    double diff_want = 0, diff_wrong = 0;
    for (int64_t s = 0; s < 4; ++s) {
      diff_want = std::max(diff_want, std::fabs(z[i * 4 + s] - want[s]));
      diff_wrong = std::max(diff_wrong, std::fabs(z[i * 4 + s] - wrong[s]));
    }
    EXPECT_LT(diff_want, 1e-6);
    EXPECT_GT(diff_wrong, 0.1);
  }
}

// ---- target_encoder ----

// The float64 encodings of one column (categories ascending) for target y.
std::vector<double> encodings_ref(const std::vector<double>& cats, const std::vector<double>& col,
                                  const std::vector<double>& y, double smooth /* < 0: auto */, int ddof = 0) {
  double mean = 0, var = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  for (double v : y) var += (v - mean) * (v - mean);
  var /= static_cast<double>(y.size());
  std::vector<double> out;
  for (double c : cats) {
    double n = 0, s = 0;
    for (size_t i = 0; i < col.size(); ++i)
      if (col[i] == c) n += 1, s += y[i];
    const double m = s / n;
    double ss = 0;
    for (size_t i = 0; i < col.size(); ++i)
      if (col[i] == c) ss += (y[i] - m) * (y[i] - m);
    if (smooth >= 0) {
      out.push_back((s + smooth * mean) / (n + smooth));
    } else {
      const double within = n > ddof ? ss / (n - ddof) : 0.0;
      const double lambda = var * n / (var * n + within);
      out.push_back(lambda * m + (1 - lambda) * mean);
    }
  }
  return out;
}

// n rows of d category columns (values 0 .. k - 1 scaled by 1.5) and a target that depends on them.
Data categorical(int64_t n, int64_t d, int64_t k, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    double t = 0;
    for (int64_t j = 0; j < d; ++j) {
      const int64_t c = static_cast<int64_t>(static_cast<double>(k) * 0.5 * (1.0 + rng.uniform_pm1())) % k;
      out.x.push_back(1.5f * static_cast<float>(c));
      t += static_cast<double>(c * (j + 1));
    }
    out.y.push_back(static_cast<float>(t + 2.0 * rng.uniform_pm1()));
  }
  return out;
}

std::vector<double> column(const Data& x, int64_t j) {
  std::vector<double> c;
  for (int64_t i = 0; i < x.n; ++i) c.push_back(x.x[i * x.d + j]);
  return c;
}

TEST(TargetEncoder, EncodingsMatchFloat64AndUnseenGetsTheMean) {
  const Data x = categorical(200, 3, 5, 21);
  const std::vector<double> y(x.y.begin(), x.y.end());
  const std::vector<double> cats = {0, 1.5, 3, 4.5, 6};
  for (double smooth : {-1.0, 0.0, 2.5}) {
    auto est = ml::make_estimator("target_encoder", {{"smooth", smooth < 0 ? "auto" : std::to_string(smooth)}});
    est->fit(x.X(), x.Y());
    const std::vector<double> enc = ml_common::f64_field(state_of(*est), "encodings_f64");
    ASSERT_EQ(enc.size(), 15u);
    for (int64_t j = 0; j < 3; ++j) {
      const std::vector<double> want = encodings_ref(cats, column(x, j), y, smooth);
      for (int64_t c = 0; c < 5; ++c) EXPECT_NEAR(enc[j * 5 + c], want[c], 1e-12 * std::fabs(want[c])) << smooth;
      if (smooth < 0) {  // sabotage arm: the sample variance within a category gives other encodings
        const std::vector<double> wrong = encodings_ref(cats, column(x, j), y, smooth, 1);
        double diff = 0;
        for (int64_t c = 0; c < 5; ++c) diff = std::max(diff, std::fabs(enc[j * 5 + c] - wrong[c]));
        EXPECT_GT(diff, 1e-6);
      }
    }
    // transform: each value's encoding rounded once to f32; an unseen value: the target mean.
    Data t;
    t.n = 2;
    t.d = 3;
    t.x = {1.5f, 7.0f, 0.0f, -1.0f, 6.0f, 4.5f};
    double mean = 0;
    for (double v : y) mean += v;
    mean /= static_cast<double>(y.size());
    const std::vector<float> z = est->transform(t.X()).to_vector<float>();
    EXPECT_EQ(z, (std::vector<float>{static_cast<float>(enc[1]), static_cast<float>(mean), static_cast<float>(enc[10]),
                                     static_cast<float>(mean), static_cast<float>(enc[9]), static_cast<float>(enc[13])}));
  }
}

TEST(TargetEncoder, BinaryTargetAsZeroOne) {
  Data x = categorical(120, 2, 4, 5);
  for (int64_t i = 0; i < x.n; ++i) x.y[i] = x.y[i] > 4.0f ? 7.0f : 3.0f;
  std::vector<double> y01;
  for (float v : x.y) y01.push_back(v == 7.0f ? 1.0 : 0.0);
  auto est = ml::make_estimator("target_encoder");
  est->fit(x.X(), x.Y());
  const nlohmann::json st = state_of(*est);
  EXPECT_EQ(st["target_type"], "binary");
  const std::vector<double> enc = ml_common::f64_field(st, "encodings_f64");
  for (int64_t j = 0; j < 2; ++j) {
    const std::vector<double> want = encodings_ref({0, 1.5, 3, 4.5}, column(x, j), y01, -1);
    for (int64_t c = 0; c < 4; ++c) EXPECT_NEAR(enc[j * 4 + c], want[c], 1e-13);
  }
  auto cont = ml::make_estimator("target_encoder", {{"target_type", "continuous"}});
  cont->fit(x.X(), x.Y());
  EXPECT_EQ(state_of(*cont)["target_type"], "continuous");
}

TEST(TargetEncoder, MulticlassEncodesEachClassIndicator) {
  // Classes 2, 5, 9: one 0 / 1 target per class, outputs column-major (column j, class k: j K + k).
  Data x = categorical(150, 2, 4, 15);
  const float labels[] = {2.0f, 5.0f, 9.0f};
  for (int64_t i = 0; i < x.n; ++i) x.y[i] = labels[(static_cast<int64_t>(std::fabs(x.y[i])) + i) % 3];
  auto est = ml::make_estimator("target_encoder");
  est->fit(x.X(), x.Y());
  const nlohmann::json st = state_of(*est);
  EXPECT_EQ(st["target_type"], "multiclass");
  EXPECT_EQ(st["n_classes"], 3);
  const std::vector<double> enc = ml_common::f64_field(st, "encodings_f64");
  ASSERT_EQ(enc.size(), 24u);
  for (int64_t k = 0; k < 3; ++k) {
    std::vector<double> yk;
    for (float v : x.y) yk.push_back(v == labels[k] ? 1.0 : 0.0);
    for (int64_t j = 0; j < 2; ++j) {
      const std::vector<double> want = encodings_ref({0, 1.5, 3, 4.5}, column(x, j), yk, -1);
      for (int64_t c = 0; c < 4; ++c) EXPECT_NEAR(enc[(j * 3 + k) * 4 + c], want[c], 1e-13);
    }
  }
  Data t;
  t.n = 1;
  t.d = 2;
  t.x = {3.0f, 1.5f};
  EXPECT_EQ(est->transform(t.X()).to_vector<float>(),
            (std::vector<float>{static_cast<float>(enc[2]), static_cast<float>(enc[6]), static_cast<float>(enc[10]),
                                static_cast<float>(enc[13]), static_cast<float>(enc[17]), static_cast<float>(enc[21])}));
  EXPECT_EQ(ml::target_encoder_cross_fit(*est, x.X(), x.Y()).dim(1), 6);
  ml_common::expect_same_bytes_at_threads_123("target_encoder", {}, x.X(), x.Y(), t.X());
}

TEST(TargetEncoder, CrossFitWithoutShuffleIsTheOtherBlocksEncoders) {
  const Data x = categorical(53, 2, 6, 9);
  for (const std::string smooth : {"auto", "1"}) {
    auto est = ml::make_estimator("target_encoder", {{"shuffle", "false"}, {"smooth", smooth}});
    est->fit(x.X(), x.Y());
    const std::vector<float> z = ml::target_encoder_cross_fit(*est, x.X(), x.Y()).to_vector<float>();
    // KFold(5): blocks of 11, 11, 11, 10, 10 rows.
    int64_t start = 0;
    for (int64_t f = 0; f < 5; ++f) {
      const int64_t size = f < 3 ? 11 : 10;
      Data train, test;
      train.d = test.d = 2;
      for (int64_t i = 0; i < x.n; ++i) {
        Data& to = i >= start && i < start + size ? test : train;
        to.x.insert(to.x.end(), x.x.begin() + i * 2, x.x.begin() + i * 2 + 2);
        to.y.push_back(x.y[i]);
        ++to.n;
      }
      auto part = ml::make_estimator("target_encoder", {{"smooth", smooth}, {"target_type", "continuous"}});
      part->fit(train.X(), train.Y());
      const std::vector<float> want = part->transform(test.X()).to_vector<float>();
      for (int64_t r = 0; r < size * 2; ++r) EXPECT_EQ(z[start * 2 + r], want[r]) << "fold " << f;
      start += size;
    }
    // With shuffle the folds are another partition: other values, the same at every thread count.
    auto sh = ml::make_estimator("target_encoder", {{"smooth", smooth}});
    sh->fit(x.X(), x.Y());
    std::vector<float> z1;
    const int saved = num_threads();
    for (int t : {1, 2, 3}) {
      set_num_threads(t);
      const std::vector<float> zt = ml::target_encoder_cross_fit(*sh, x.X(), x.Y()).to_vector<float>();
      if (t == 1) z1 = zt;
      else EXPECT_EQ(zt, z1);
    }
    set_num_threads(saved);
    EXPECT_NE(z1, z);
  }
  // Binary targets: stratified folds; every row gets a value between 0 and 1.
  Data b = x;
  for (float& v : b.y) v = v > 5.0f ? 1.0f : 0.0f;
  auto est = ml::make_estimator("target_encoder");
  est->fit(b.X(), b.Y());
  for (float v : ml::target_encoder_cross_fit(*est, b.X(), b.Y()).to_vector<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
}

// ---- both ----

TEST(SplineTarget, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = uniform(400, 5, 31, -1.0, 2.0), test = uniform(150, 5, 32, -1.5, 2.5);
  for (const std::string extra : {"constant", "linear", "continue", "periodic"})
    ml_common::expect_same_bytes_at_threads_123("spline_transformer", {{"extrapolation", extra}, {"knots", "quantile"}},
                                                train.X(), Tensor(), test.X());
  const Data cat = categorical(300, 4, 7, 33), cat_test = categorical(100, 4, 8, 34);
  ml_common::expect_same_bytes_at_threads_123("target_encoder", {}, cat.X(), cat.Y(), cat_test.X());
  ml_common::expect_input_change_moves_the_model("spline_transformer", {}, uniform(9, 3, 5, 0.0, 1.0), 50.0f);
  ml_common::expect_input_change_moves_the_model("target_encoder", {}, categorical(30, 2, 3, 5), 50.0f);
}

TEST(SplineTarget, StateRoundTripAndRefusedStates) {
  const Data train = uniform(60, 4, 41, 0.0, 1.0), test = uniform(20, 4, 42, -0.2, 1.2);
  auto s = ml::make_estimator("spline_transformer");
  s->fit(train.X());
  ml_common::expect_transformer_state_round_trip(*s, test.X());
  nlohmann::json st = state_of(*s);
  std::vector<double> v = ml_common::f64_field(st, "base_knots_f64");
  std::swap(v[0], v[4]);
  std::vector<int64_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));
  st["base_knots_f64"] = ml::i64_to_hex(bits);
  EXPECT_NE(error_of([&] { ml::make_estimator("spline_transformer")->load_state(st); }).find("strictly increasing"),
            std::string::npos);
  const Data cat = categorical(80, 3, 4, 43), cat_test = categorical(20, 3, 6, 44);
  auto t = ml::make_estimator("target_encoder");
  t->fit(cat.X(), cat.Y());
  ml_common::expect_transformer_state_round_trip(*t, cat_test.X());
  st = state_of(*t);
  st["target_type"] = "ordinal";
  EXPECT_NE(error_of([&] { ml::make_estimator("target_encoder")->load_state(st); }).find("target_type"), std::string::npos);
  st = state_of(*t);
  st["n_categories"][1] = 0;
  EXPECT_NE(error_of([&] { ml::make_estimator("target_encoder")->load_state(st); }).find("n_categories"), std::string::npos);
  st = state_of(*t);
  EXPECT_NE(error_of([&] { ml::make_estimator("target_encoder", {{"target_type", "binary"}})->load_state(st); })
                .find("target_type=binary"),
            std::string::npos);
}

TEST(SplineTarget, RefusalsAreNamed) {
  auto named = [](const std::function<void()>& f, const char* part) {
    const std::string m = error_of(f);
    EXPECT_NE(m.find(part), std::string::npos) << m;
  };
  named([] { ml::make_estimator("spline_transformer", {{"n_knots", "1"}}); }, "n_knots");
  named([] { ml::make_estimator("spline_transformer", {{"degree", "-1"}}); }, "degree");
  named([] { ml::make_estimator("spline_transformer", {{"knots", "random"}}); }, "knots");
  named([] { ml::make_estimator("spline_transformer", {{"extrapolation", "mirror"}}); }, "extrapolation");
  named([] { ml::make_estimator("spline_transformer", {{"include_bias", "maybe"}}); }, "include_bias");
  const Data x = uniform(10, 3, 1, 0.0, 1.0), other = uniform(5, 2, 2, 0.0, 1.0);
  named([&] { ml::make_estimator("spline_transformer", {{"n_knots", "3"}, {"extrapolation", "periodic"}})->fit(x.X()); },
        "periodic splines need degree");
  named([&] { ml::make_estimator("spline_transformer", {{"n_knots", "1000000000"}})->fit(x.X()); }, "too many knots");
  Data constant = x;
  for (int64_t i = 0; i < x.n; ++i) constant.x[i * 3 + 1] = 2.0f;
  named([&] { ml::make_estimator("spline_transformer")->fit(constant.X()); }, "column 1 are not strictly increasing");
  named([] { ml::make_estimator("target_encoder", {{"smooth", "-1"}}); }, "smooth");
  named([] { ml::make_estimator("target_encoder", {{"smooth", "sometimes"}}); }, "smooth");
  named([] { ml::make_estimator("target_encoder", {{"cv", "1"}}); }, "cv");
  named([] { ml::make_estimator("target_encoder", {{"target_type", "ordinal"}}); }, "target_type");
  named([&] { ml::make_estimator("target_encoder")->fit(x.X()); }, "needs the target y");
  Data multi = x;
  for (int64_t i = 0; i < x.n; ++i) multi.y[i] = static_cast<float>(i % 3);
  Data two = x;
  for (int64_t i = 0; i < x.n; ++i) two.y[i] = static_cast<float>(i % 2);
  named([&] { ml::make_estimator("target_encoder", {{"target_type", "multiclass"}})->fit(two.X(), two.Y()); },
        "target_type=multiclass needs 3");
  named([&] { ml::make_estimator("target_encoder", {{"target_type", "binary"}})->fit(multi.X(), multi.Y()); },
        "exactly 2 distinct");
  Data nan = x;
  nan.x[4] = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : {"spline_transformer", "target_encoder"}) {
    auto est = ml::make_estimator(name);
    named([&] { est->transform(x.X()); }, "before fit");
    named([&] { est->fit(nan.X(), nan.Y()); }, "non-finite");
    est->fit(x.X(), x.Y());
    named([&] { est->transform(other.X()); }, "features");
    named([&] { est->transform(nan.X()); }, "non-finite");
  }
  auto spl = ml::make_estimator("spline_transformer");
  named([&] { ml::target_encoder_cross_fit(*spl, x.X(), x.Y()); }, "expected a target_encoder");
}

}  // namespace
}  // namespace bl
