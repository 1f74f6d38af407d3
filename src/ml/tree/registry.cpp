// registry.cpp: the tree estimators (see src/ml/registry.h).
#include "ml/registry.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml/tree/tree_estimators.h"

namespace bl::ml {

void add_tree_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"decision_tree_classifier", make_decision_tree_classifier});
  out.push_back({"decision_tree_regressor", make_decision_tree_regressor});
  out.push_back({"extra_tree_classifier", make_extra_tree_classifier});
  out.push_back({"extra_tree_regressor", make_extra_tree_regressor});
  out.push_back({"random_forest_classifier", make_random_forest_classifier});
  out.push_back({"random_forest_regressor", make_random_forest_regressor});
  out.push_back({"extra_trees_classifier", make_extra_trees_classifier});
  out.push_back({"extra_trees_regressor", make_extra_trees_regressor});
  add_ensemble_estimators(out);  // bagging, isolation forest, voting, stacking, AdaBoost
}

}  // namespace bl::ml
