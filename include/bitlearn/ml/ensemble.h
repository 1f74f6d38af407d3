// ml/ensemble.h: meta-estimators and isolation forest (create them with bl::ml::make_estimator).
//
//   auto bag = bl::ml::make_estimator("bagging_classifier", {{"estimator", "decision_tree_classifier(max_depth=6)"},
//                                                            {"n_estimators", "20"}});
//   auto vote = bl::ml::make_estimator("voting_classifier",
//       {{"estimators", "logistic_regression;random_forest_classifier(n_estimators=50)"}, {"voting", "soft"}});
//   auto iso = bl::ml::make_estimator("isolation_forest", {{"contamination", "0.05"}});
//   iso->fit(X);  bl::Tensor s = bl::ml::score_samples(*iso, X);  bl::Tensor label = iso->predict(X);  // -1 / 1
//
// Sub-estimators are named by registry name and parameters: items separated by ';', parameters in
// parentheses separated by ',' ("ridge(alpha=2);random_forest_regressor(n_estimators=30)").
//
// bagging_classifier / bagging_regressor: estimator (default decision_tree_classifier /
//   decision_tree_regressor), n_estimators 10, max_samples 1.0, max_features 1.0 (a count, or a
//   fraction with a '.'), bootstrap true, bootstrap_features false, random_state 0. Rows and features
//   of estimator e are Philox draws keyed by (random_state, e); predict_proba averages the members'
//   probabilities (or their votes when the member has no predict_proba), in member order.
// isolation_forest: n_estimators 100, max_samples auto (min(256, n)) | count | fraction,
//   contamination auto | (0, 0.5], max_features 1.0, bootstrap false, random_state 0.
//   predict gives -1 (outlier) / 1 (inlier) as f32; score_samples and decision_function below.
// voting_classifier / voting_regressor: estimators (required), voting hard | soft (classifier,
//   default hard), weights (comma-separated, default all 1).
// stacking_classifier / stacking_regressor: estimators (required), final_estimator (default
//   logistic_regression / ridge), cv 5 (stratified K-fold without shuffling for the classifier, as
//   scikit-learn's StratifiedKFold; K-fold in contiguous blocks for the regressor), passthrough false.
//   The classifier stacks predict_proba (the last column only for two classes, as scikit-learn).
// adaboost_classifier (SAMME): estimator (default decision_tree_classifier(max_depth=1); must be a
//   tree or stump: decision_tree_classifier), n_estimators 50, learning_rate 1.0.
// adaboost_regressor (AdaBoost.R2): estimator (default decision_tree_regressor(max_depth=3)),
//   n_estimators 50, learning_rate 1.0, loss linear | square | exponential, random_state 0
//   (the weighted resampling of each round is a Philox draw keyed by (random_state, round)).
//
// Every combination runs in a fixed order (members in list order, float32 sums through the
// contract's arithmetic), so model files and predictions are bitwise the same for every thread
// count (docs/ml-trees.md).
#pragma once

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

// isolation_forest: the anomaly score of each row, -2^(-E[h(x)]/c(n)), lower is more abnormal
// (scikit-learn's score_samples); and score_samples - offset (offset -0.5 for contamination=auto,
// else the training scores' contamination quantile), negative for outliers. The same as
// est.score_samples(X) / est.decision_function(X), which other estimators provide too.
Tensor score_samples(const Estimator& est, const Tensor& X);
Tensor decision_function(const Estimator& est, const Tensor& X);

}  // namespace bl::ml
