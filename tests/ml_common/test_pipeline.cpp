// test_pipeline.cpp: the `pipeline` estimator (src/ml/model_selection/pipeline.cpp): its outputs are
// the bytes of its steps run by hand (fit a transformer, transform, fit the next on the output), at
// 1, 2 and 3 threads; its model file round trip; STEP__PARAM; the errors of bad steps; and sample
// weights, which go to the last step's weighted fit (the transformers fit unweighted).
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "core/thread_pool.h"
#include "ml/model_selection/pipeline.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/weight_checks.h"

namespace bl::ml_common {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// scaler -> PCA -> logistic regression, fitted step by step, against the pipeline of the same steps.
TEST(Pipeline, ClassifierEqualsStepsByHand) {
  ThreadsRestored restore;
  Dataset train = make_dataset(Task::classification, 90, 5, 3), test = make_dataset(Task::classification, 31, 5, 4);
  std::vector<unsigned char> first;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto scaler = ml::make_estimator("standard_scaler");
    auto pca = ml::make_estimator("pca", {{"n_components", "3"}});
    auto logreg = ml::make_estimator("logistic_regression", {{"C", "0.5"}});
    Tensor a = scaler->fit(train.X, train.y).transform(train.X);
    Tensor b = pca->fit(a, train.y).transform(a);
    logreg->fit(b, train.y);
    Tensor test_b = pca->transform(scaler->transform(test.X));

    auto pipe = ml::make_estimator(
        "pipeline", {{"steps", "standard_scaler;pca(n_components=3);logistic_regression(C=0.5)"}});
    pipe->fit(train.X, train.y);
    EXPECT_EQ(bytes_of(pipe->predict(test.X)), bytes_of(logreg->predict(test_b))) << threads;
    EXPECT_EQ(bytes_of(pipe->predict_proba(test.X)), bytes_of(logreg->predict_proba(test_b))) << threads;
    EXPECT_EQ(bytes_of(pipe->decision_function(test.X)), bytes_of(logreg->decision_function(test_b))) << threads;
    EXPECT_EQ(pipe->score(test.X, test.y), logreg->score(test_b, test.y)) << threads;
    EXPECT_TRUE(ml::estimator_is_classifier(*pipe));
    std::vector<unsigned char> out = outputs_of(*pipe, test.X);
    if (threads == 1) first = out;
    EXPECT_EQ(out, first) << "threads " << threads;
  }
}

TEST(Pipeline, RegressorAndTransformerPipelines) {
  Dataset train = make_dataset(Task::regression, 60, 4, 5), test = make_dataset(Task::regression, 17, 4, 6);
  auto scaler = ml::make_estimator("min_max_scaler");
  auto ridge = ml::make_estimator("ridge", {{"alpha", "2"}});
  ridge->fit(scaler->fit(train.X, train.y).transform(train.X), train.y);
  auto pipe = ml::make_estimator("pipeline", {{"steps", "min_max_scaler;ridge(alpha=2)"}});
  pipe->fit(train.X, train.y);
  EXPECT_EQ(bytes_of(pipe->predict(test.X)), bytes_of(ridge->predict(scaler->transform(test.X))));
  EXPECT_EQ(pipe->score(test.X, test.y), ridge->score(scaler->transform(test.X), test.y));
  EXPECT_FALSE(ml::estimator_is_classifier(*pipe));
  EXPECT_EQ(error_of([&] { pipe->transform(test.X); }), "ridge: transform is not supported");

  // Transformers only: the pipeline transforms; predict is the last step's (not supported).
  auto t = ml::make_estimator("pipeline", {{"steps", "standard_scaler;pca(n_components=2)"}});
  t->fit(train.X);
  auto s2 = ml::make_estimator("standard_scaler");
  auto p2 = ml::make_estimator("pca", {{"n_components", "2"}});
  p2->fit(s2->fit(train.X).transform(train.X));
  EXPECT_EQ(bytes_of(t->transform(test.X)), bytes_of(p2->transform(s2->transform(test.X))));
  EXPECT_EQ(error_of([&] { t->predict(test.X); }), "pca: predict is not supported");
}

TEST(Pipeline, ModelFileRoundTrip) {
  Dataset train = make_dataset(Task::classification, 70, 4, 7), test = make_dataset(Task::classification, 20, 4, 8);
  auto pipe = ml::make_estimator("pipeline", {{"steps", "robust_scaler;logistic_regression(C=0.25)"}});
  pipe->fit(train.X, train.y);
  const std::string text = pipe->to_json_text();
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["estimator"], "pipeline");
  EXPECT_EQ(j["params"]["steps"], "robust_scaler;logistic_regression(C=0.25)");
  ASSERT_EQ(j["state"]["steps"].size(), 2u);
  EXPECT_EQ(j["state"]["steps"][1]["estimator"], "logistic_regression");
  EXPECT_TRUE(j["state"].contains("classes"));  // the last step's, for predict's column names
  auto back = ml::estimator_from_json_text(text);
  EXPECT_EQ(back->to_json_text(), text);
  EXPECT_EQ(bytes_of(back->predict_proba(test.X)), bytes_of(pipe->predict_proba(test.X)));

  // A file whose state does not match its steps.
  nlohmann::json bad = j;
  bad["state"]["steps"].erase(0);
  EXPECT_TRUE(contains(error_of([&] { ml::estimator_from_json_text(bad.dump()); }),
                       "state.steps must be a list of 2 fitted steps"));
  bad = j;
  bad["params"]["steps"] = "standard_scaler;logistic_regression(C=0.25)";
  EXPECT_TRUE(contains(error_of([&] { ml::estimator_from_json_text(bad.dump()); }),
                       "state.steps[0] is a robust_scaler, but parameter steps names standard_scaler"));
}

TEST(Pipeline, StepParameters) {
  auto pipe = ml::make_estimator("pipeline", {{"steps", "standard_scaler;pca(n_components=3);logistic_regression"},
                                              {"logistic_regression__C", "2"},
                                              {"pca__n_components", "2"}});
  EXPECT_EQ(pipe->get_params().at("steps"), "standard_scaler;pca(n_components=2);logistic_regression(C=2)");
  pipe->set_params({{"standard_scaler__with_mean", "false"}});
  EXPECT_EQ(pipe->get_params().at("steps"),
            "standard_scaler(with_mean=false);pca(n_components=2);logistic_regression(C=2)");
  // Equals the pipeline written with those parameters in its steps.
  Dataset train = make_dataset(Task::classification, 50, 4, 9);
  auto same = ml::make_estimator("pipeline", {{"steps", pipe->get_params().at("steps")}});
  pipe->fit(train.X, train.y);
  same->fit(train.X, train.y);
  EXPECT_EQ(pipe->to_json_text(), same->to_json_text());
  // A step used twice is NAME-1, NAME-2 (scikit-learn's make_pipeline).
  EXPECT_EQ(ml::pipeline_step_names("standard_scaler;pca;standard_scaler;ridge"),
            (std::vector<std::string>{"standard_scaler-1", "pca", "standard_scaler-2", "ridge"}));
  auto twice = ml::make_estimator("pipeline", {{"steps", "standard_scaler;standard_scaler;ridge"},
                                               {"standard_scaler-2__with_std", "false"}});
  EXPECT_EQ(twice->get_params().at("steps"), "standard_scaler;standard_scaler(with_std=false);ridge");
}

TEST(Pipeline, BadInputIsANamedError) {
  Dataset train = make_dataset(Task::regression, 30, 3, 10);
  // Unknown step.
  EXPECT_TRUE(contains(error_of([] { ml::make_estimator("pipeline", {{"steps", "standard_scaler;no_such_model"}}); }),
                       "pipeline: parameter steps: unknown estimator 'no_such_model'"));
  // A step's unknown parameter in the steps text.
  EXPECT_TRUE(contains(error_of([] { ml::make_estimator("pipeline", {{"steps", "ridge(alhpa=1)"}}); }),
                       "pipeline: parameter steps: ridge: unknown parameter 'alhpa'"));
  // A non-transformer in the middle.
  auto mid = ml::make_estimator("pipeline", {{"steps", "standard_scaler;ridge;linear_regression"}});
  EXPECT_EQ(error_of([&] { mid->fit(train.X, train.y); }),
            "pipeline: step 1 'ridge' is not a transformer (it has no transform); every step but the last must "
            "transform X");
  EXPECT_FALSE(mid->fitted());
  // No steps: no final estimator.
  EXPECT_TRUE(contains(error_of([&] { ml::make_estimator("pipeline")->fit(train.X, train.y); }),
                       "pipeline: parameter steps is required"));
  // Bad STEP__PARAM: no such step, no such parameter, a value that does not parse, no '__'.
  const ml::Params steps = {{"steps", "standard_scaler;ridge"}};
  auto with = [&](const std::string& k, const std::string& v) {
    return error_of([&] {
      ml::Params p = steps;
      p[k] = v;
      ml::make_estimator("pipeline", p);
    });
  };
  EXPECT_EQ(with("lasso__alpha", "1"), "pipeline: parameter lasso__alpha: no step named 'lasso' (steps: standard_scaler, ridge)");
  EXPECT_TRUE(contains(with("ridge__no_such", "1"), "pipeline: parameter ridge__no_such: ridge: unknown parameter 'no_such'"));
  EXPECT_TRUE(contains(with("ridge__alpha", "abc"), "pipeline: parameter ridge__alpha: ridge: parameter alpha=abc"));
  EXPECT_TRUE(contains(with("alpha", "1"), "pipeline: unknown parameter 'alpha'"));
  EXPECT_TRUE(contains(error_of([] { ml::make_estimator("pipeline", {{"ridge__alpha", "1"}}); }),
                       "no step named 'ridge' (steps: none; set steps first)"));
  // A step's own fit error names the step.
  auto nan_pipe = ml::make_estimator("pipeline", {{"steps", "ridge"}});
  std::vector<float> x = train.X.to_vector<float>();
  x[4] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(contains(error_of([&] { nan_pipe->fit(Tensor::from_vector(x, {30, 3}), train.y); }),
                       "pipeline: step 0 'ridge': ridge: X holds a non-finite value"));
  // Predict before fit; wrong width.
  auto fitted = ml::make_estimator("pipeline", steps);
  EXPECT_EQ(error_of([&] { fitted->predict(train.X); }), "pipeline: the pipeline is not fitted");
  fitted->fit(train.X, train.y);
  EXPECT_EQ(error_of([&] { fitted->predict(Tensor::zeros({2, 4})); }),
            "pipeline: X has 4 features, but the pipeline was fitted on 3");
}


// The fitted state of a model file's step i (a pipeline's), or of a whole model file (i < 0).
nlohmann::json state_of(const std::string& text, int i = -1) {
  const nlohmann::json j = nlohmann::json::parse(text);
  return i < 0 ? j["state"] : j["state"]["steps"][static_cast<size_t>(i)]["state"];
}

// Real-valued weights in [0.25, 2.75], none equal to 1.
std::vector<float> some_weights(int64_t n) {
  std::vector<float> w;
  for (int64_t i = 0; i < n; ++i) w.push_back(0.25f + 0.5f * static_cast<float>((i * 7 + 2) % 6));
  return w;
}

// A weighted pipeline fit: the transformers fitted unweighted by hand, the last step's weighted fit
// on their output; the same model states and output bytes, at 1, 2 and 3 threads.
TEST(PipelineWeights, WeightedFitEqualsStepsByHandWithTheLastStepWeighted) {
  ThreadsRestored restore;
  Dataset train = make_dataset(Task::classification, 90, 5, 11), test = make_dataset(Task::classification, 31, 5, 12);
  const Tensor W = Tensor::from_vector(some_weights(90), {90});
  std::string first, first_text;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto scaler = ml::make_estimator("standard_scaler");
    auto pca = ml::make_estimator("pca", {{"n_components", "3"}});
    auto logreg = ml::make_estimator("logistic_regression", {{"C", "0.5"}});
    Tensor a = scaler->fit(train.X, train.y).transform(train.X);
    Tensor b = pca->fit(a, train.y).transform(a);
    logreg->fit_weighted(b, train.y, W);
    Tensor test_b = pca->transform(scaler->transform(test.X));

    auto pipe = ml::make_estimator(
        "pipeline", {{"steps", "standard_scaler;pca(n_components=3);logistic_regression(C=0.5)"}});
    EXPECT_TRUE(pipe->supports_sample_weight());
    pipe->fit_weighted(train.X, train.y, W);
    const std::string text = pipe->to_json_text();
    EXPECT_EQ(state_of(text, 0), state_of(scaler->to_json_text())) << threads;
    EXPECT_EQ(state_of(text, 1), state_of(pca->to_json_text())) << threads;
    EXPECT_EQ(state_of(text, 2), state_of(logreg->to_json_text())) << threads;
    EXPECT_EQ(bytes_of(pipe->predict_proba(test.X)), bytes_of(logreg->predict_proba(test_b))) << threads;
    EXPECT_EQ(bytes_of(pipe->decision_function(test.X)), bytes_of(logreg->decision_function(test_b))) << threads;
    std::vector<unsigned char> out = outputs_of(*pipe, test.X);
    const std::string all = text + std::string(out.begin(), out.end());
    if (threads == 1) first = all, first_text = text;
    EXPECT_EQ(all, first) << "threads " << threads;
  }
  // The weights reach the last step: the unweighted pipeline is another model.
  auto plain = ml::make_estimator("pipeline",
                                  {{"steps", "standard_scaler;pca(n_components=3);logistic_regression(C=0.5)"}});
  plain->fit(train.X, train.y);
  EXPECT_NE(state_of(plain->to_json_text(), 2), state_of(first_text, 2));
}

// A regression pipeline: scaler then weighted ridge, against the steps by hand.
TEST(PipelineWeights, RegressorEqualsStepsByHand) {
  HostData data = smooth_regression(70, 4, 21);
  const Tensor W = Tensor::from_vector(some_weights(70), {70});
  auto scaler = ml::make_estimator("min_max_scaler");
  auto ridge = ml::make_estimator("ridge", {{"alpha", "0.5"}});
  ridge->fit_weighted(scaler->fit(data.X(), data.Y()).transform(data.X()), data.Y(), W);
  auto pipe = ml::make_estimator("pipeline", {{"steps", "min_max_scaler;ridge(alpha=0.5)"}});
  pipe->fit_weighted(data.X(), data.Y(), W);
  EXPECT_EQ(state_of(pipe->to_json_text(), 1), state_of(ridge->to_json_text()));
  EXPECT_EQ(bytes_of(pipe->predict(data.X())), bytes_of(ridge->predict(scaler->transform(data.X()))));
}

// The shared weight checks (ml_common/weight_checks.h): all-ones weights and no weights give the
// unweighted bits; weighted bytes at threads 1, 2, 3; a changed weight moves the model.
TEST(PipelineWeights, SharedWeightChecks) {
  const WeightCase cases[] = {
      {"pipeline", {{"steps", "standard_scaler;pca(n_components=3);logistic_regression(C=0.5)"}}, true},
      {"pipeline", {{"steps", "min_max_scaler;ridge(alpha=0.5)"}}, false},
      {"pipeline", {{"steps", "standard_scaler;gaussian_nb"}}, true},
  };
  for (const WeightCase& c : cases) {
    SCOPED_TRACE(c.params.at("steps"));
    HostData data = c.classes ? uniform_blobs(72, 4, 3, 1.0f, 31) : smooth_regression(72, 4, 31);
    expect_all_ones_give_the_unweighted_bits(c.name, c.params, data);
    const WeightedHostData wd =
        with_weights(data, [](int64_t i) { return 0.25 + 0.5 * static_cast<double>((i * 5 + 1) % 6); });
    expect_weighted_bytes_at_threads_123_and_moved(c.name, c.params, wd, 7);
  }
}

// The fitted numbers of the last step of a pipeline's model file (coef and intercept).
std::vector<float> last_coef(const ml::Estimator& pipe) {
  const nlohmann::json st = state_of(pipe.to_json_text(), 1);
  std::vector<float> v = ml::f32_from_hex(st["coef"].get<std::string>(), "coef");
  std::vector<float> b = ml::f32_from_hex(st["intercept"].get<std::string>(), "intercept");
  v.insert(v.end(), b.begin(), b.end());
  return v;
}

// Integer weights fit as the repeated rows where the transformer's fit does not see the repetition
// (min_max_scaler: the same minimum and maximum with weights 1 to 3) and the last step has that
// property (ridge, logistic regression: tests/ml_linear/test_sample_weight.cpp's tolerances).
TEST(PipelineWeights, IntegerWeightsFitAsTheRepeatedRows) {
  struct Case {
    const char* steps;
    bool classes;
    double tol;
  } cases[] = {
      {"min_max_scaler;ridge(alpha=0.5)", false, 1e-4},
      {"min_max_scaler;logistic_regression(C=0.7,tol=1e-6,max_iter=500)", true, 2e-3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.steps);
    HostData data = c.classes ? uniform_blobs(60, 4, 3, 0.7f, 41) : smooth_regression(60, 4, 41);
    const WeightedHostData wd = with_weights(data, [](int64_t i) { return 1 + (i * 7 + 3) % 3; });
    const HostData rep = wd.repeated();
    auto weighted = ml::make_estimator("pipeline", {{"steps", c.steps}});
    auto repeated = ml::make_estimator("pipeline", {{"steps", c.steps}});
    weighted->fit_weighted(wd.X(), wd.Y(), wd.W());
    repeated->fit(rep.X(), rep.Y());
    // The scaler saw the same extremes: the same bytes.
    EXPECT_EQ(state_of(weighted->to_json_text(), 0), state_of(repeated->to_json_text(), 0));
    const std::vector<float> a = last_coef(*weighted), b = last_coef(*repeated);
    ASSERT_EQ(a.size(), b.size());
    double scale = 0;
    for (float v : b) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], c.tol * std::max(1.0, scale)) << "entry " << k;
    // The sabotage arm: unweighted, the coefficients are farther off than the tolerance.
    auto plain = ml::make_estimator("pipeline", {{"steps", c.steps}});
    plain->fit(wd.X(), wd.Y());
    const std::vector<float> p = last_coef(*plain);
    double off = 0;
    for (size_t k = 0; k < p.size(); ++k) off = std::max(off, std::fabs(static_cast<double>(p[k]) - b[k]));
    EXPECT_GT(off, c.tol * std::max(1.0, scale));
  }
}

// supports_sample_weight() is the last step's (standard_scaler takes no weights, yet a pipeline
// ending in logistic_regression does); a last step without weights is refused by name.
TEST(PipelineWeights, LastStepWithoutWeightsIsANamedError) {
  Dataset train = make_dataset(Task::regression, 30, 3, 13);
  const Tensor W = Tensor::from_vector(some_weights(30), {30});
  EXPECT_FALSE(ml::make_estimator("standard_scaler")->supports_sample_weight());
  EXPECT_TRUE(ml::make_estimator("pipeline", {{"steps", "standard_scaler;ridge"}})->supports_sample_weight());
  EXPECT_FALSE(ml::make_estimator("pipeline")->supports_sample_weight());
  auto knn = ml::make_estimator("pipeline", {{"steps", "standard_scaler;kneighbors_regressor(n_neighbors=3)"}});
  EXPECT_FALSE(knn->supports_sample_weight());
  EXPECT_EQ(error_of([&] { knn->fit_weighted(train.X, train.y, W); }),
            "pipeline: sample_weight is not supported by this estimator: its final step 'kneighbors_regressor' does "
            "not take sample weights (the weights go to the final step's fit; the transformers fit unweighted) "
            "(docs/ml.md lists the estimators that take weights)");
  EXPECT_FALSE(knn->fitted());
  // A step name of a repeated registry name.
  auto twice = ml::make_estimator("pipeline", {{"steps", "pca;standard_scaler;pca"}});
  EXPECT_TRUE(contains(error_of([&] { twice->fit_weighted(train.X, train.y, W); }), "its final step 'pca-2'"));
  EXPECT_TRUE(contains(error_of([&] { ml::make_estimator("pipeline")->fit_weighted(train.X, train.y, W); }),
                       "pipeline: sample_weight is not supported by this estimator: parameter steps is empty"));
  // Without weights the same pipeline fits.
  EXPECT_EQ(error_of([&] { knn->fit_weighted(train.X, train.y, Tensor()); }), "(no error)");
  // Setting steps changes the answer.
  knn->set_params({{"steps", "standard_scaler;ridge"}});
  EXPECT_TRUE(knn->supports_sample_weight());
  // Bad weights are the pipeline's named errors.
  auto pipe = ml::make_estimator("pipeline", {{"steps", "standard_scaler;ridge"}});
  EXPECT_EQ(error_of([&] { pipe->fit_weighted(train.X, train.y, Tensor::from_vector(std::vector<float>{1, 2}, {2})); }),
            "pipeline: sample_weight has 2 entries but X has 30 rows");
  std::vector<float> neg = some_weights(30);
  neg[4] = -1.0f;
  EXPECT_TRUE(contains(error_of([&] { pipe->fit_weighted(train.X, train.y, Tensor::from_vector(neg, {30})); }),
                       "pipeline: sample_weight holds -1 at row 4"));
  // A last step's own refusal of the weighted fit names the step.
  auto bad = ml::make_estimator("pipeline", {{"steps", "standard_scaler;logistic_regression"}});
  EXPECT_TRUE(contains(error_of([&] { bad->fit_weighted(train.X, train.y, W); }),
                       "pipeline: step 1 'logistic_regression': "));
}

}  // namespace
}  // namespace bl::ml_common
