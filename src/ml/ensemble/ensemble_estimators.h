// ensemble_estimators.h: the random streams, row draws and folds of the meta-estimators
// (src/ml/ensemble/): bagging, isolation forest, voting, stacking and AdaBoost (parameters in
// include/bitlearn/ml/ensemble.h).
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml {

// Philox stream tags of the ensembles (seed = random_state, counter = draw index).
constexpr uint64_t kBagRowStream = uint64_t{3} << 60;      // | estimator index
constexpr uint64_t kBagFeatureStream = uint64_t{4} << 60;  // | estimator index
constexpr uint64_t kSubSeedStream = uint64_t{5} << 60;     // word e: random_state of estimator e
constexpr uint64_t kIforestRowStream = uint64_t{6} << 60;  // | tree index
constexpr uint64_t kIforestNodeStream = uint64_t{7} << 60; // | tree index << 32 | node id
constexpr uint64_t kAdaRowStream = uint64_t{8} << 60;      // | boosting round (AdaBoost.R2 resampling)

// The first m entries (sorted) of a Philox Fisher-Yates permutation of 0..n-1 (without
// replacement), or m draws floor(u32 * n / 2^32) sorted (with replacement). Defined in bagging.cpp.
std::vector<int64_t> draw_indices(uint64_t seed, uint64_t stream, int64_t n, int64_t m, bool replace);

// Fold of every row for stacking: scikit-learn's StratifiedKFold(shuffle=False) allocation for class
// indices y, and plain K-fold in contiguous blocks (the first n % n_splits one row longer).
std::vector<int64_t> stratified_folds(const std::vector<int32_t>& y, int64_t n_classes, int64_t n_splits);
std::vector<int64_t> kfold_folds(int64_t n, int64_t n_splits);

}  // namespace bl::ml
