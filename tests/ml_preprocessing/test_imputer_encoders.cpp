// test_imputer_encoders.cpp: simple_imputer, ordinal_encoder and one_hot_encoder
// (src/ml/preprocessing/imputer.cpp, encoders.cpp). The imputer's statistics exactly (binary64
// mean / numpy median rounded once, the smallest of the most frequent values, fill_value) and its
// transform (only NaN replaced); the encoders' codes and 0 / 1 blocks exactly on small columns, in
// scikit-learn's column order, with each drop / handle_unknown setting. All: identical bytes at
// threads 1, 2 and 3, a moved input moves the model, the state round trip, and each refusal named.
// Sabotage arms: the tie data of most_frequent separate the smallest-value rule from the largest,
// and the imputer's output differs from its input exactly where NaN was.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
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
using ml_common::expect_refusal_names;
using ml_common::host_table;
using ml_common::state_of;
using ml_common::transform_of;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// n rows of d integer columns: column j takes values 0 .. j + 2 (j + 3 categories), some NaN
// when with_nan (every 7th entry).
Data categorical(int64_t n, int64_t d, uint64_t seed, bool with_nan = false) {
  test_rng::SplitMix64 rng(seed);
  std::vector<float> x;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const float u = 0.5f * (rng.uniform_pm1() + 1.0f);
      x.push_back(std::floor(u * static_cast<float>(j + 3)));
    }
  if (with_nan)
    for (size_t k = 3; k < x.size(); k += 7) x[k] = kNaN;
  return host_table(n, d, std::move(x));
}

std::vector<float> statistics(const ml::Estimator& est) {
  return ml::f32_from_hex(state_of(est)["statistics"].get<std::string>(), "statistics");
}

TEST(SimpleImputer, StatisticsExactAndOnlyNaNReplaced) {
  // Column 0 observed {0.1, 0.2, 0.7, 5}: mean in binary64; median (0.2 + 0.7) / 2 (even count).
  // Column 1 observed {3, 1, 3, 1, 2}: median 2; most frequent 1 and 3 tie: 1 (the smallest).
  const Data x = host_table(5, 2, {0.1f, 3.0f, kNaN, 1.0f, 0.2f, 3.0f, 0.7f, 1.0f, 5.0f, 2.0f});
  const double mean0 = (static_cast<double>(0.1f) + 0.2f + 0.7f + 5.0f) / 4.0;
  auto mean = ml::make_estimator("simple_imputer");
  mean->fit(x.X());
  EXPECT_EQ(statistics(*mean), (std::vector<float>{static_cast<float>(mean0), 2.0f}));
  auto median = ml::make_estimator("simple_imputer", {{"strategy", "median"}});
  median->fit(x.X());
  EXPECT_EQ(statistics(*median),
            (std::vector<float>{static_cast<float>((static_cast<double>(0.2f) + 0.7f) / 2.0), 2.0f}));
  auto frequent = ml::make_estimator("simple_imputer", {{"strategy", "most_frequent"}});
  frequent->fit(x.X());
  EXPECT_EQ(statistics(*frequent)[1], 1.0f);
  // Sabotage arm: the data tie 1 and 3, so the largest-value rule would give 3, not 1.
  EXPECT_NE(statistics(*frequent)[1], 3.0f);
  auto constant = ml::make_estimator("simple_imputer", {{"strategy", "constant"}, {"fill_value", "-7.5"}});
  constant->fit(x.X());
  EXPECT_EQ(statistics(*constant), (std::vector<float>{-7.5f, -7.5f}));
  // Transform: the NaN at (1, 0) becomes the statistic; every other value stays bit for bit.
  for (const auto* est : {mean.get(), median.get(), frequent.get(), constant.get()}) {
    const std::vector<float> z = transform_of(*est, x), s = statistics(*est);
    for (size_t k = 0; k < z.size(); ++k) {
      if (k == 2) ASSERT_EQ(z[k], s[0]);
      else ASSERT_EQ(z[k], x.x[k]) << k;
    }
  }
  // A column of NaN only: constant fills it; the other strategies refuse it, naming the column.
  const Data empty = host_table(3, 2, {1.0f, kNaN, 2.0f, kNaN, 3.0f, kNaN});
  constant->fit(empty.X());
  EXPECT_EQ(transform_of(*constant, empty), (std::vector<float>{1, -7.5f, 2, -7.5f, 3, -7.5f}));
  for (const char* strategy : {"mean", "median", "most_frequent"}) {
    const std::string m =
        error_of([&] { ml::make_estimator("simple_imputer", {{"strategy", strategy}})->fit(empty.X()); });
    EXPECT_NE(m.find("column 1 has no observed value"), std::string::npos) << m;
  }
}

TEST(OrdinalEncoder, SortedCategoriesAndUnknownValues) {
  // Column 0 categories {-2, 0.5, 3}; column 1 {1, 7}.
  const Data x = host_table(4, 2, {3.0f, 7.0f, -2.0f, 1.0f, 0.5f, 7.0f, 3.0f, 1.0f});
  auto est = ml::make_estimator("ordinal_encoder");
  est->fit(x.X());
  EXPECT_EQ(state_of(*est)["n_categories"], (nlohmann::json{3, 2}));
  EXPECT_EQ(transform_of(*est, x), (std::vector<float>{2, 1, 0, 0, 1, 1, 2, 0}));
  const Data unseen = host_table(1, 2, {4.0f, 1.0f});
  expect_refusal_names([&] { est->transform(unseen.X()); }, "unknown category 4 in column 0");
  auto coded = ml::make_estimator("ordinal_encoder", {{"handle_unknown", "use_encoded_value"}, {"unknown_value", "-1"}});
  coded->fit(x.X());
  EXPECT_EQ(transform_of(*coded, unseen), (std::vector<float>{-1, 0}));
  auto nan = ml::make_estimator("ordinal_encoder", {{"handle_unknown", "use_encoded_value"}, {"unknown_value", "nan"}});
  nan->fit(x.X());
  EXPECT_TRUE(std::isnan(transform_of(*nan, unseen)[0]));
  // unknown_value must not be a code in use, must be integral, and is needed with use_encoded_value.
  for (const char* bad : {"2", "0.5", "none"}) {
    auto e = ml::make_estimator("ordinal_encoder", {{"handle_unknown", "use_encoded_value"}, {"unknown_value", bad}});
    expect_refusal_names([&] { e->fit(x.X()); }, "unknown_value", bad);
  }
  auto wrong = ml::make_estimator("ordinal_encoder", {{"unknown_value", "5"}});
  expect_refusal_names([&] { wrong->fit(x.X()); }, "unknown_value");
}

TEST(OneHotEncoder, BlocksInScikitLearnOrderWithEachDrop) {
  // Column 0 categories {-2, 0.5, 3}; column 1 {1, 7} (binary).
  const Data x = host_table(3, 2, {3.0f, 7.0f, -2.0f, 1.0f, 0.5f, 7.0f});
  auto expect_rows = [&](const ml::Params& p, const std::vector<float>& want) {
    auto est = ml::make_estimator("one_hot_encoder", p);
    est->fit(x.X());
    EXPECT_EQ(transform_of(*est, x), want);
  };
  expect_rows({}, {0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1});
  expect_rows({{"drop", "first"}}, {0, 1, 1, 0, 0, 0, 1, 0, 1});
  expect_rows({{"drop", "if_binary"}}, {0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1});
  // An unseen category: refused, or an all-zero block (ignore).
  const Data unseen = host_table(1, 2, {4.0f, 1.0f});
  auto est = ml::make_estimator("one_hot_encoder");
  est->fit(x.X());
  expect_refusal_names([&] { est->transform(unseen.X()); }, "unknown category 4 in column 0");
  auto ignore = ml::make_estimator("one_hot_encoder", {{"handle_unknown", "ignore"}});
  ignore->fit(x.X());
  EXPECT_EQ(transform_of(*ignore, unseen), (std::vector<float>{0, 0, 0, 1, 0}));
  // One category per column with drop=first: no output column, refused.
  const Data single = host_table(2, 1, {5.0f, 5.0f});
  auto first = ml::make_estimator("one_hot_encoder", {{"drop", "first"}});
  expect_refusal_names([&] { first->fit(single.X()); }, "no output column");
}

const char* const kNames[] = {"simple_imputer", "ordinal_encoder", "one_hot_encoder"};

TEST(ImputerEncoders, SameBytesAtThreads123AndChangesMoveTheModel) {
  const Data train = categorical(700, 6, 31), test = categorical(300, 6, 32);
  for (const char* name : kNames) ml_common::expect_same_bytes_at_threads_123(name, {}, train.X(), Tensor(), test.X());
  const Data gaps = categorical(700, 6, 33, true);
  for (const char* strategy : {"median", "most_frequent"})
    ml_common::expect_same_bytes_at_threads_123("simple_imputer", {{"strategy", strategy}}, gaps.X(), Tensor(),
                                                gaps.X());
  ml_common::expect_same_bytes_at_threads_123("one_hot_encoder", {{"drop", "first"}}, train.X(), Tensor(), test.X());
  const Data small = categorical(9, 3, 5);
  for (const char* name : kNames) ml_common::expect_input_change_moves_the_model(name, {}, small, 50.0f);
}

TEST(ImputerEncoders, StateRoundTripGivesTheSameFileAndOutputs) {
  const Data train = categorical(60, 4, 41, true), test = categorical(20, 4, 42);
  Data clean = categorical(60, 4, 41);
  for (const char* name : kNames) {
    const Data& fit_on = std::string(name) == "simple_imputer" ? train : clean;
    auto est = ml::make_estimator(name);
    est->fit(fit_on.X());
    ml_common::expect_transformer_state_round_trip(*est, test.X());
  }
  // Categories out of order, or a count list of the wrong length, are refused.
  auto est = ml::make_estimator("ordinal_encoder");
  est->fit(clean.X());
  nlohmann::json st = state_of(*est);
  st["n_categories"] = nlohmann::json{3, 4, 5};
  ml_common::expect_state_refused("ordinal_encoder", st, "n_categories");
  st = state_of(*est);
  std::vector<float> cats = ml::f32_from_hex(st["categories"].get<std::string>(), "categories");
  std::swap(cats[0], cats[1]);
  st["categories"] = ml::f32_to_hex(cats);
  ml_common::expect_state_refused("ordinal_encoder", st, "ascending");
}

TEST(ImputerEncoders, RefusalsAreNamed) {
  expect_refusal_names([] { ml::make_estimator("simple_imputer", {{"strategy", "mode"}}); }, "strategy");
  expect_refusal_names([] { ml::make_estimator("simple_imputer", {{"fill_value", "x"}}); }, "fill_value");
  expect_refusal_names([] { ml::make_estimator("ordinal_encoder", {{"handle_unknown", "ignore"}}); }, "handle_unknown");
  expect_refusal_names([] { ml::make_estimator("one_hot_encoder", {{"drop", "last"}}); }, "drop");
  expect_refusal_names([] { ml::make_estimator("one_hot_encoder", {{"handle_unknown", "use_encoded_value"}}); },
                       "handle_unknown");
  const Data x = categorical(10, 3, 1), other = categorical(5, 2, 2), nan = categorical(10, 3, 1, true);
  Data inf = x;
  inf.x[4] = std::numeric_limits<float>::infinity();
  for (const char* name : kNames) {
    auto est = ml::make_estimator(name);
    expect_refusal_names([&] { est->transform(x.X()); }, "before fit");
    expect_refusal_names([&] { est->fit(inf.X()); }, "non-finite");
    if (std::string(name) != "simple_imputer") expect_refusal_names([&] { est->fit(nan.X()); }, "non-finite");
    est->fit(x.X());
    expect_refusal_names([&] { est->transform(other.X()); }, "features");
    if (std::string(name) != "simple_imputer") expect_refusal_names([&] { est->transform(nan.X()); }, "non-finite");
    expect_refusal_names([&] { est->fit(x.X(), Tensor::from_vector(std::vector<float>(4, 0.0f), {4})); },
                         "y has 4 entries");
  }
}

}  // namespace
}  // namespace bl
