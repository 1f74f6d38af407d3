// pipeline.h: what the command line needs to know about the `pipeline` estimator (pipeline.cpp).
//
// A pipeline is a registry estimator like any other: make_estimator("pipeline", {{"steps",
// "standard_scaler;pca(n_components=5);logistic_regression(C=0.5)"}}). Its steps are the
// ensembles' sub-estimator specs (ml/ensemble/sub_estimators.h); every step but the last must have
// transform. Steps are named by registry name (a name used twice: NAME-1, NAME-2, ... as
// scikit-learn's make_pipeline), and a step's parameter is set as STEP__PARAM (scikit-learn's
// spelling): set_params({{"logistic_regression__C", "2"}}). Sample weights (fit_weighted) go to the
// last step's weighted fit, the transformers fit unweighted, as scikit-learn's
// Pipeline.fit(X, y, LAST__sample_weight=w): a pipeline takes weights exactly when its last step does.
#pragma once

#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

// The step names of a steps text, in order (make_pipeline's names).
std::vector<std::string> pipeline_step_names(const std::string& steps_text);

// Whether an estimator fits class labels: is_classifier_name of its name, or for a pipeline of its
// last step's (scikit-learn's is_classifier of a Pipeline).
bool estimator_is_classifier(const Estimator& est);

// For a pipeline that refuses sample weights, why (its last step takes none, or it has no steps),
// for fit_weighted's message; empty for any other estimator.
std::string pipeline_weight_refusal(const Estimator& est);

}  // namespace bl::ml
