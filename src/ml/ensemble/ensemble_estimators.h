// ensemble_estimators.h: factories of the meta-estimators (src/ml/ensemble/): bagging, isolation
// forest, voting, stacking and AdaBoost (parameters in include/bitlearn/ml/ensemble.h).
#pragma once

#include <memory>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_bagging_classifier();
std::unique_ptr<Estimator> make_bagging_regressor();
std::unique_ptr<Estimator> make_isolation_forest();
std::unique_ptr<Estimator> make_voting_classifier();
std::unique_ptr<Estimator> make_voting_regressor();
std::unique_ptr<Estimator> make_stacking_classifier();
std::unique_ptr<Estimator> make_stacking_regressor();
std::unique_ptr<Estimator> make_adaboost_classifier();
std::unique_ptr<Estimator> make_adaboost_regressor();

// Appends the ensemble estimators to the registry (called from the tree family's registry).
void add_ensemble_estimators(std::vector<EstimatorEntry>& out);

// Philox stream tags of the ensembles (seed = random_state, counter = draw index).
constexpr uint64_t kBagRowStream = uint64_t{3} << 60;      // | estimator index
constexpr uint64_t kBagFeatureStream = uint64_t{4} << 60;  // | estimator index
constexpr uint64_t kSubSeedStream = uint64_t{5} << 60;     // word e: random_state of estimator e
constexpr uint64_t kIforestRowStream = uint64_t{6} << 60;  // | tree index
constexpr uint64_t kIforestNodeStream = uint64_t{7} << 60; // | tree index << 32 | node id
constexpr uint64_t kAdaRowStream = uint64_t{8} << 60;      // | boosting round (AdaBoost.R2 resampling)

// The first m entries (sorted) of a Philox Fisher-Yates permutation of 0..n-1 (without
// replacement), or m draws floor(u32 * n / 2^32) sorted (with replacement).
std::vector<int64_t> draw_indices(uint64_t seed, uint64_t stream, int64_t n, int64_t m, bool replace);

// Fold of every row for stacking: scikit-learn's StratifiedKFold(shuffle=False) allocation for class
// indices y, and plain K-fold in contiguous blocks (the first n % n_splits one row longer).
std::vector<int64_t> stratified_folds(const std::vector<int32_t>& y, int64_t n_classes, int64_t n_splits);
std::vector<int64_t> kfold_folds(int64_t n, int64_t n_splits);

}  // namespace bl::ml
