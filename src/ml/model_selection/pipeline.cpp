// pipeline.cpp: the `pipeline` estimator, scikit-learn's Pipeline over registry estimators
// (see ml/model_selection/pipeline.h). Fit runs, in order, each step's fit on the previous step's
// output and its transform on the same rows, then fits the last step on the result; predict,
// predict_proba, decision_function, score_samples, transform and score pass X through the fitted
// transforms and call the last step. Every call is the step's own, in the same order as by hand, so
// the results are those of the steps run one after the other, bit for bit. Sample weights go to the
// last step's weighted fit alone (scikit-learn's Pipeline.fit(X, y, LAST__sample_weight=w)); the
// transformers fit unweighted.
#include "ml/model_selection/pipeline.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

constexpr const char* kName = "pipeline";

std::vector<std::string> step_names(const std::vector<SubSpec>& specs) {
  std::map<std::string, int> count, seen;
  for (const SubSpec& s : specs) ++count[s.name];
  std::vector<std::string> names;
  for (const SubSpec& s : specs)
    names.push_back(count[s.name] > 1 ? s.name + "-" + std::to_string(++seen[s.name]) : s.name);
  return names;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// True for the error an estimator without transform throws (Estimator::transform's, or an
// estimator's own "transform is not supported" for a setting).
bool no_transform(const Error& e) { return std::string(e.what()).find("transform is not supported") != std::string::npos; }

class Pipeline : public Estimator {
 public:
  std::string name() const override { return kName; }

  Params get_params() const override { return {{"steps", specs_.empty() ? "" : sub_specs_text(specs_)}}; }

  void set_params(const Params& params) override {
    std::vector<SubSpec> specs = specs_;
    // steps first: STEP__PARAM then addresses the new steps.
    const auto steps = params.find("steps");
    if (steps != params.end()) specs = steps->second.empty() ? std::vector<SubSpec>() : parse_sub_specs(kName, "steps", steps->second);
    for (const auto& [k, v] : params) {
      if (k == "steps") continue;
      const size_t sep = k.find("__");
      BL_CHECK(sep != std::string::npos, kName, ": unknown parameter '", k,
               "' (a pipeline takes steps, and STEP__PARAM for a parameter of a step)");
      const std::string step = k.substr(0, sep), param = k.substr(sep + 2);
      const std::vector<std::string> names = step_names(specs);
      size_t at = 0;
      while (at < names.size() && names[at] != step) ++at;
      BL_CHECK(at < names.size(), kName, ": parameter ", k, ": no step named '", step, "' (steps: ",
               names.empty() ? std::string("none; set steps first") : joined(names), ")");
      BL_CHECK(!param.empty(), kName, ": parameter ", k, ": no parameter name after '__'");
      Params p = specs[at].params;
      p[param] = v;
      try {
        make_estimator(specs[at].name, p);  // an unknown parameter or a bad value fails now
      } catch (const Error& e) {
        throw Error(std::string(kName) + ": parameter " + k + ": " + e.what());
      }
      specs[at].params = p;
    }
    specs_ = std::move(specs);
  }

  bool fitted() const override { return !models_.empty(); }

  Estimator& fit(const Tensor& X, const Tensor& y) override { return fit_rows(X, y, nullptr); }

  // The last step's, as scikit-learn's Pipeline routes sample_weight to its final step.
  bool supports_sample_weight() const override {
    return !specs_.empty() && make_sub_estimator(specs_.back(), "")->supports_sample_weight();
  }

  // Why fit_weighted refuses weights (supports_sample_weight() false): the last step takes none.
  std::string weight_refusal() const {
    if (specs_.empty()) return "parameter steps is empty (the weights go to the final step's fit)";
    return "its final step '" + step_names(specs_).back() + "' does not take sample weights (the weights go to " +
           "the final step's fit; the transformers fit unweighted)";
  }

  Tensor predict(const Tensor& X) const override { return final_step().predict(through(X)); }
  Tensor predict_proba(const Tensor& X) const override { return final_step().predict_proba(through(X)); }
  Tensor decision_function(const Tensor& X) const override { return final_step().decision_function(through(X)); }
  Tensor score_samples(const Tensor& X) const override { return final_step().score_samples(through(X)); }
  Tensor transform(const Tensor& X) const override { return final_step().transform(through(X)); }
  double score(const Tensor& X, const Tensor& y) const override { return final_step().score(through(X), y); }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = n_features_;
    state["steps"] = save_sub_estimators(models_);
    // The last step's classes, where it has them, for the readers of a model file's state.classes.
    nlohmann::json last = nlohmann::json::object();
    models_.back()->save_state(last);
    if (last.contains("classes")) state["classes"] = last["classes"];
  }

  void load_state(const nlohmann::json& state) override {
    BL_CHECK(!specs_.empty(), kName, ": model file params have no steps");
    require_state_keys(state, kName, {"n_features", "steps"});
    const int64_t n_features = state_n_features(state, kName);
    const nlohmann::json& list = state["steps"];
    BL_CHECK(list.is_array() && list.size() == specs_.size(), kName, ": state.steps must be a list of ",
             specs_.size(), " fitted steps (one per entry of parameter steps)");
    std::vector<std::unique_ptr<Estimator>> models;
    for (size_t i = 0; i < list.size(); ++i) {
      models.push_back(load_sub_estimator(list[i], std::string(kName) + ": state.steps[" + std::to_string(i) + "]"));
      BL_CHECK(models.back()->name() == specs_[i].name, kName, ": state.steps[", i, "] is a ", models.back()->name(),
               ", but parameter steps names ", specs_[i].name);
    }
    models_ = std::move(models);
    n_features_ = n_features;
  }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    return fit_rows(X, y, &w);
  }

 private:
  // w: the weights of the last step's fit (null: unweighted; fit_weighted never passes all ones, so
  // those take fit's path and bits).
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* w) {
    BL_CHECK(!specs_.empty(), kName, ": parameter steps is required: transformers then a final estimator, ",
             "NAME(k=v,...);...;NAME (e.g. standard_scaler;logistic_regression(C=0.5))");
    check_X(kName, X, /*allow_nan=*/true);  // NaN: for the steps to accept or refuse (imputers take it)
    const std::vector<std::string> names = step_names(specs_);
    std::vector<std::unique_ptr<Estimator>> models;
    Tensor Xt = X;
    for (size_t i = 0; i < specs_.size(); ++i) {
      models.push_back(make_sub_estimator(specs_[i], ""));
      Estimator& m = *models.back();
      const bool last = i + 1 == specs_.size();
      try {
        if (last && w != nullptr) m.fit_weighted(Xt, y, Tensor::from_vector(*w, {static_cast<int64_t>(w->size())}));
        else m.fit(Xt, y);
        if (!last) Xt = m.transform(Xt);
      } catch (const Error& e) {
        if (!last && no_transform(e))
          throw Error(detail::concat(kName, ": step ", i, " '", names[i], "' is not a transformer (it has no ",
                                     "transform); every step but the last must transform X"));
        throw Error(detail::concat(kName, ": step ", i, " '", names[i], "': ", e.what()));
      }
    }
    models_ = std::move(models);
    n_features_ = X.dim(1);
    return *this;
  }

  const Estimator& final_step() const {
    BL_CHECK(fitted(), kName, ": the pipeline is not fitted");
    return *models_.back();
  }

  // X through every fitted step but the last.
  Tensor through(const Tensor& X) const {
    BL_CHECK(fitted(), kName, ": the pipeline is not fitted");
    check_X(kName, X, /*allow_nan=*/true);
    BL_CHECK(X.dim(1) == n_features_, kName, ": X has ", X.dim(1), " features, but the pipeline was fitted on ",
             n_features_);
    Tensor Xt = X;
    for (size_t i = 0; i + 1 < models_.size(); ++i) Xt = models_[i]->transform(Xt);
    return Xt;
  }

  std::vector<SubSpec> specs_;
  std::vector<std::unique_ptr<Estimator>> models_;
  int64_t n_features_ = 0;
};

}  // namespace

std::vector<std::string> pipeline_step_names(const std::string& steps_text) {
  return step_names(parse_sub_specs(kName, "steps", steps_text));
}

bool estimator_is_classifier(const Estimator& est) {
  if (est.name() != kName) return is_classifier_name(est.name());
  const std::string steps = est.get_params().at("steps");
  if (steps.empty()) return false;
  const std::vector<SubSpec> specs = parse_sub_specs(kName, "steps", steps);
  return is_classifier_name(specs.back().name);
}

std::string pipeline_weight_refusal(const Estimator& est) {
  const auto* pipe = dynamic_cast<const Pipeline*>(&est);
  return pipe != nullptr ? pipe->weight_refusal() : std::string();
}

std::unique_ptr<Estimator> make_pipeline() { return std::make_unique<Pipeline>(); }

}  // namespace bl::ml
