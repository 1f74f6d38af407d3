// test_estimator_checks.cpp: checks every registered estimator must pass (in the manner of
// scikit-learn's common tests), one parametrized test per registry name, so a newly registered
// estimator is checked without editing this file: fit and predict on a tiny data set, identical
// bytes at 1, 2 and 3 threads, a save / load round trip that writes the same file and predicts the
// same bytes, and named bl::Errors (never a crash) for bad parameters and bad data.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/thread_pool.h"
#include "ml_common/estimator_checks.h"

namespace bl::ml_common {
namespace {

// The training data of a spec: the import case's own X for an imported model, else make_dataset.
Dataset dataset_for(const CheckSpec& spec, uint64_t seed = 1) {
  if (spec.fixed_X.empty()) return spec_dataset(spec, 48, seed);
  std::ifstream in(spec.fixed_X);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str());
  Dataset ds;
  ds.X = Tensor::from_vector(ml::f32_from_hex(j["X"].get<std::string>(), "X"),
                             {j["n"].get<int64_t>(), j["d"].get<int64_t>()});
  return ds;
}

class EstimatorChecks : public ::testing::TestWithParam<std::string> {
 protected:
  std::string name() const { return GetParam(); }
  CheckSpec spec() const { return check_spec(GetParam()); }
};

TEST_P(EstimatorChecks, FitPredictShapes) {
  CheckSpec s = spec();
  Dataset ds = dataset_for(s);
  auto est = ml::make_estimator(name(), s.params);
  EXPECT_EQ(est->name(), name());
  EXPECT_FALSE(est->fitted());
  if (s.task == Task::unsupervised) est->fit(ds.X);
  else est->fit(ds.X, ds.y);
  EXPECT_TRUE(est->fitted());
  const int64_t n = ds.X.dim(0);
  bool any = false;
  for (int which = 0; which < 3; ++which) {
    try {
      Tensor out = which == 0 ? est->predict(ds.X) : which == 1 ? est->transform(ds.X) : est->score_samples(ds.X);
      ASSERT_GE(out.ndim(), 1);
      EXPECT_EQ(out.dim(0), n) << (which == 0 ? "predict" : which == 1 ? "transform" : "score_samples") << " rows";
      any = true;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(any) << name() << ": none of predict, transform and score_samples works";
  if (s.task == Task::classification) {
    // Predictions are labels of the training set.
    std::vector<float> labels = est->predict(ds.X).to_vector<float>();
    for (float v : labels) EXPECT_TRUE(v == 10.0f || v == 11.0f || v == 12.0f) << v;
  }
  // The parameters the estimator reports set again give the same hyper-parameters.
  ml::Params p = est->get_params();
  auto again = ml::make_estimator(name(), p);
  EXPECT_EQ(again->get_params(), p);
}

TEST_P(EstimatorChecks, SaveLoadRoundTrip) {
  CheckSpec s = spec();
  Dataset ds = dataset_for(s);
  auto est = fit_by_spec(name(), s, ds);
  const std::string path = ::testing::TempDir() + "/estimator_check_" + name() + ".json";
  est->save(path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), est->to_json_text()) << "save writes to_json_text";
  auto loaded = ml::load_estimator(path);
  ASSERT_EQ(loaded->name(), name());
  EXPECT_TRUE(loaded->fitted());
  EXPECT_EQ(loaded->to_json_text(), est->to_json_text()) << "reloaded model writes other bytes";
  Dataset test = dataset_for(s, 2);
  EXPECT_TRUE(outputs_of(*loaded, test.X) == outputs_of(*est, test.X)) << "reloaded model predicts other bytes";
  std::remove(path.c_str());
}

TEST_P(EstimatorChecks, SameBytesAtThreads123) {
  ThreadsRestored restore;
  CheckSpec s = spec();
  Dataset ds = dataset_for(s), test = dataset_for(s, 3);
  std::string model;
  std::vector<unsigned char> out;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    auto est = fit_by_spec(name(), s, ds);
    if (t == 1) {
      model = est->to_json_text();
      out = outputs_of(*est, test.X);
      continue;
    }
    EXPECT_EQ(est->to_json_text(), model) << name() << ": model file differs at " << t << " threads";
    EXPECT_TRUE(outputs_of(*est, test.X) == out) << name() << ": outputs differ at " << t << " threads";
  }
}

TEST_P(EstimatorChecks, BadParametersAreNamedErrors) {
  std::string msg = error_of([&] { ml::make_estimator(name(), {{"no_such_parameter", "1"}}); });
  EXPECT_NE(msg.find("no_such_parameter"), std::string::npos) << name() << ": " << msg;
  msg = error_of([&] { ml::make_estimator(name())->set_params({{"no_such_parameter", "1"}}); });
  EXPECT_NE(msg.find("no_such_parameter"), std::string::npos) << name() << ": " << msg;
  // Every numeric hyper-parameter set to NaN or -1: rejected with a bl::Error, or accepted and
  // then fit either works or throws a bl::Error (never another exception, never a crash).
  CheckSpec s = spec();
  Dataset ds = dataset_for(s);
  auto probe = ml::make_estimator(name(), s.params);
  for (const auto& [key, value] : probe->get_params()) {
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') continue;  // not a number (a name, a list, a path)
    for (const char* bad : {"nan", "-1"}) {
      ml::Params p = s.params;
      p[key] = bad;
      std::string m = error_of([&] {
        auto est = ml::make_estimator(name(), p);
        if (s.task == Task::unsupervised) est->fit(ds.X);
        else est->fit(ds.X, ds.y);
        outputs_of(*est, ds.X);
      });
      EXPECT_NE(m, "(other exception)") << name() << ": " << key << "=" << bad;
    }
  }
}

TEST_P(EstimatorChecks, BadDataAreNamedErrors) {
  CheckSpec s = spec();
  Dataset ds = dataset_for(s);
  const bool supervised = s.task != Task::unsupervised;
  auto fit = [&](ml::Estimator& e, const Tensor& X, const Tensor& y) {
    if (supervised) e.fit(X, y);
    else e.fit(X);
  };
  const int64_t n = ds.X.dim(0), d = ds.X.dim(1);
  auto expect_error = [&](const char* what, const std::function<void()>& f) {
    std::string m = error_of(f);
    EXPECT_NE(m, "(no error)") << name() << ": " << what << " was accepted";
    EXPECT_NE(m, "(other exception)") << name() << ": " << what << " threw something other than bl::Error";
    EXPECT_FALSE(m.empty()) << name() << ": " << what << ": empty message";
  };
  // Predict before fit.
  expect_error("predict before fit", [&] { outputs_of(*ml::make_estimator(name(), s.params), ds.X); });
  // Empty data.
  expect_error("fit on 0 rows", [&] {
    auto e = ml::make_estimator(name(), s.params);
    fit(*e, ds.X.slice(0, 0, 0), supervised ? ds.y.slice(0, 0, 0) : Tensor());
  });
  // NaN in X (a forecaster without feature columns: NaN in its series y).
  if (d == 0) {
    std::vector<float> yv = ds.y.to_vector<float>();
    yv[1] = std::numeric_limits<float>::quiet_NaN();
    expect_error("NaN in y", [&] {
      auto e = ml::make_estimator(name(), s.params);
      fit(*e, ds.X, Tensor::from_vector(yv, {n}));
    });
  }
  std::vector<float> xv = ds.X.to_vector<float>();
  if (d > 0) xv[static_cast<size_t>(d + 1 < n * d ? d + 1 : 0)] = std::numeric_limits<float>::quiet_NaN();
  Tensor X_nan = Tensor::from_vector(xv, {n, d});
  if (d == 0) {
    // (no X value to set to NaN)
  } else if (!s.allows_nan) {
    expect_error("NaN in X", [&] {
      auto e = ml::make_estimator(name(), s.params);
      fit(*e, X_nan, ds.y);
    });
  } else {
    std::string m = error_of([&] {
      auto e = ml::make_estimator(name(), s.params);
      fit(*e, X_nan, ds.y);
      outputs_of(*e, X_nan);
    });
    EXPECT_EQ(m, "(no error)") << name() << " allows NaN but: " << m;
  }
  // Wrong rank and wrong column count at predict.
  auto est = fit_by_spec(name(), s, ds);
  expect_error("1-d X at predict", [&] { outputs_of(*est, ds.X.reshape({n * d})); });
  Tensor wide = Tensor::zeros({3, d + 1});
  expect_error("predict with one column more", [&] { outputs_of(*est, wide); });
  if (d > 1) expect_error("predict with one column less", [&] { outputs_of(*est, Tensor::zeros({3, d - 1})); });
  if (supervised) {
    expect_error("y with one row less", [&] {
      auto e = ml::make_estimator(name(), s.params);
      fit(*e, ds.X, ds.y.slice(0, 0, n - 1));
    });
    expect_error("2-d y", [&] {
      auto e = ml::make_estimator(name(), s.params);
      fit(*e, ds.X, ds.y.reshape({n, 1}));
    });
  }
}

// Sabotage arm of the byte comparisons above: a model fitted on data whose values are each one ulp
// larger writes other bytes and predicts other bytes (so "identical" is a test that can fail).
TEST(EstimatorChecksSabotage, OneUlpInputChangesTheModel) {
  CheckSpec s = check_spec("ridge");
  Dataset ds = make_dataset(s.task, 48, 4, 1);
  std::vector<float> xv = ds.X.to_vector<float>();
  for (float& x : xv) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    bits += 1;
    std::memcpy(&x, &bits, 4);
  }
  Dataset changed = ds;
  changed.X = Tensor::from_vector(xv, ds.X.shape());
  auto a = fit_by_spec("ridge", s, ds), b = fit_by_spec("ridge", s, changed);
  EXPECT_NE(a->to_json_text(), b->to_json_text());
  EXPECT_FALSE(outputs_of(*a, ds.X) == outputs_of(*b, ds.X));
}

// The registry and the parametrization agree: every name constructs and reports its name.
TEST(EstimatorChecksRegistry, EveryNameConstructs) {
  for (const std::string& n : ml::estimator_names()) EXPECT_EQ(ml::make_estimator(n)->name(), n);
  std::string m = error_of([] { ml::make_estimator("no_such_estimator"); });
  EXPECT_NE(m.find("no_such_estimator"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(Registry, EstimatorChecks, ::testing::ValuesIn(ml::estimator_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace bl::ml_common
