// test_pipeline.cpp: the `pipeline` estimator (src/ml/model_selection/pipeline.cpp): its outputs are
// the bytes of its steps run by hand (fit a transformer, transform, fit the next on the output), at
// 1, 2 and 3 threads; its model file round trip; STEP__PARAM; and the errors of bad steps.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "core/thread_pool.h"
#include "ml/model_selection/pipeline.h"
#include "ml_common/estimator_checks.h"

namespace bl::ml_common {
namespace {

class ThreadsRestored {
 public:
  ThreadsRestored() : saved_(num_threads()) {}
  ~ThreadsRestored() { set_num_threads(saved_); }

 private:
  int saved_;
};

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

}  // namespace
}  // namespace bl::ml_common
