// ml/tree.h: the tree estimators (create them with bl::ml::make_estimator, see estimator.h).
//
//   auto rf = bl::ml::make_estimator("random_forest_classifier", {{"n_estimators", "200"}});
//   rf->fit(X, y);                       // X f32 [n, d] (finite), y labels
//   bl::Tensor proba = rf->predict_proba(X_test);
//
// Registry names and parameters (text values; defaults as scikit-learn's):
//   decision_tree_classifier / decision_tree_regressor (CART, exhaustive thresholds)
//   extra_tree_classifier / extra_tree_regressor (one Philox threshold per feature and node)
//     criterion          gini | entropy (= log_loss)   (classifier, default gini)
//                        squared_error                 (regressor)
//     max_depth          none | int >= 0                (default none)
//     min_samples_split  int >= 2 (default 2);  min_samples_leaf  int >= 1 (default 1)
//     max_features       all | sqrt | log2 | count | fraction (trees: all; forests' and extra trees'
//                        classifiers: sqrt) -- drawn per node with Philox
//     random_state       seed of every Philox draw (default 0)
//   random_forest_classifier / random_forest_regressor   (bootstrap = true)
//   extra_trees_classifier / extra_trees_regressor       (bootstrap = false)
//     the tree parameters plus n_estimators (default 100) and bootstrap (true | false)
//
// The split search order and tie-breaking are fixed (docs/ml-trees.md), class counts are exact
// integers (binary64 sums in the same order with sample weights, fit_weighted), and forests average the trees' class fractions in tree order: the model file and the
// predictions are bitwise the same for every thread count.
#pragma once

#include "bitlearn/ml/estimator.h"

#include <vector>

namespace bl::ml {

// Impurity-based feature importances (mean decrease in impurity, scikit-learn's
// feature_importances_) of a fitted decision_tree_* / extra_tree_* / random_forest_* /
// extra_trees_* estimator, from the data it was fitted on (X, y and the sample weights, or an
// undefined tensor): the rows are routed through each tree with their weights (a forest's bootstrap
// counts drawn again from its random_state), each split adds w_node i_node - w_left i_left -
// w_right i_right to its feature (gini, entropy or variance; binary64 in row and node order), a
// tree's totals are divided by their sum, and a forest averages its trees in tree order and
// normalizes again. All zeros when no tree splits. Throws bl::Error for other estimators.
std::vector<double> tree_feature_importances(const Estimator& est, const Tensor& X, const Tensor& y,
                                             const Tensor& sample_weight = Tensor());

}  // namespace bl::ml
