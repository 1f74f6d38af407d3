// ml/boosting.h: the boosting estimators (create them with bl::ml::make_estimator).
//
//   auto gb = bl::ml::make_estimator("hist_gradient_boosting_classifier", {{"max_iter", "200"}});
//   gb->fit(X, y);                  // X f32 [n, d], NaN = missing; X on CUDA builds histograms there
//   auto xgb = bl::ml::make_estimator("xgboost_model", {{"model_file", "model.json"}});
//   xgb->fit(X);                    // imports an XGBoost JSON model; predict with our arithmetic
//
// hist_gradient_boosting_classifier / hist_gradient_boosting_regressor (defaults as scikit-learn's
// HistGradientBoosting*): learning_rate 0.1, max_iter 100, max_leaf_nodes 31 (none = unlimited),
// max_depth none, min_samples_leaf 20, min_child_weight 1e-3 (hessian), l2_regularization 0,
// l1_regularization 0, min_split_gain 0, max_bins 255, grow_policy lossguide | depthwise |
// symmetric (oblivious trees as CatBoost's: one split per depth level, depth max_depth, 6 when
// unset), subsample 1 (rows per iteration), colsample_bytree 1 (features per tree), random_state 0.
// booster gbtree | dart; with dart also rate_drop 0.1, skip_drop 0, one_drop false, normalize_type
// tree | forest (XGBoost's meanings; dropout drawn from Philox keyed by (random_state, iteration)).
// The DART parameters appear in get_params and the model file only when booster=dart.
// Losses: squared error (regressor), logistic (2 classes), softmax (more classes).
//
// Gradients are quantized to int64 fixed point and histograms are integer sums (no float atomics),
// so CPU threads and CUDA give the same model file. predict_proba of the classifier returns
// [n, n_classes]; transform is not provided.
//
// xgboost_model: parameter model_file (an XGBoost >= 1.0 JSON model, booster gbtree). predict
// returns XGBoost's transformed prediction for regression objectives and the class index for
// binary:* and multi:* ones; predict_proba the probabilities; transform the raw margins.
#pragma once

#include "bitlearn/ml/estimator.h"
