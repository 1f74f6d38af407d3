// ml/model_selection.h: cross-validation folds, as scikit-learn's KFold and StratifiedKFold draw
// them, and the seeded permutation they (and SGD) shuffle with.
//
// Without shuffling, the folds are scikit-learn's exactly: KFold gives consecutive blocks (the first
// n % k folds one row longer); StratifiedKFold sorts the class codes (classes in order of first
// appearance), deals them round-robin to the folds to size each fold's share of every class, and
// gives each class's rows, in order, to the folds in that allocation. With shuffling, the rows
// (KFold) or each class's fold order (StratifiedKFold) are permuted by seeded_permutation, a pure
// function of (seed, n): the same folds on every machine, though not numpy's.
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml {

// 0..n-1 permuted by Fisher-Yates: for i = n-1 down to 1, swap(perm[i], perm[j]) with
// j = floor(u * (i + 1) / 2^32) and u the Philox word (seed, stream, n-1-i).
void seeded_permutation(std::vector<int64_t>& perm, uint64_t seed, uint64_t stream);

// The test fold (0..k-1) of each of n rows. Throws bl::Error unless 2 <= k <= n.
std::vector<int32_t> k_fold(int64_t n, int32_t k, bool shuffle = false, uint64_t seed = 0);
// The same, keeping each class's share in every fold; throws if k exceeds the rows of every class
// (scikit-learn refuses k above the largest class count, and warns below the smallest).
std::vector<int32_t> stratified_k_fold(const std::vector<double>& labels, int32_t k, bool shuffle = false,
                                       uint64_t seed = 0);

}  // namespace bl::ml
