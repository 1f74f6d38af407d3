// folds.cpp: k-fold and stratified k-fold assignments, and the seeded permutation
// (bitlearn/ml/model_selection.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "bitlearn/ml/model_selection.h"
#include "contract/rng.h"
#include "core/error.h"

namespace bl::ml {

void seeded_permutation(std::vector<int64_t>& perm, uint64_t seed, uint64_t stream) {
  const int64_t n = static_cast<int64_t>(perm.size());
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1; i >= 1; --i) {
    uint32_t r = random_u32_element(seed, stream, static_cast<uint64_t>(n - 1 - i));
    int64_t j = static_cast<int64_t>((static_cast<uint64_t>(r) * static_cast<uint64_t>(i + 1)) >> 32);
    std::swap(perm[i], perm[j]);
  }
}

namespace {
constexpr uint64_t kFoldStream = 0x666f6c64ULL << 32;  // "fold": the streams of the fold shuffles
}  // namespace

std::vector<int32_t> k_fold(int64_t n, int32_t k, bool shuffle, uint64_t seed) {
  BL_CHECK(k >= 2, "k-fold: the number of folds must be at least 2, got ", k);
  BL_CHECK(k <= n, "k-fold: cannot make ", k, " folds of ", n, " rows");
  std::vector<int64_t> order(static_cast<size_t>(n));
  if (shuffle) {
    seeded_permutation(order, seed, kFoldStream);
  } else {
    for (int64_t i = 0; i < n; ++i) order[i] = i;
  }
  std::vector<int32_t> fold(static_cast<size_t>(n));
  int64_t at = 0;
  for (int32_t f = 0; f < k; ++f) {
    const int64_t size = n / k + (f < n % k ? 1 : 0);
    for (int64_t i = 0; i < size; ++i) fold[static_cast<size_t>(order[at++])] = f;
  }
  return fold;
}

std::vector<int32_t> stratified_k_fold(const std::vector<double>& labels, int32_t k, bool shuffle, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(labels.size());
  BL_CHECK(k >= 2, "stratified k-fold: the number of folds must be at least 2, got ", k);
  // Class codes in order of first appearance.
  std::map<double, int32_t> code_of;
  std::vector<int32_t> code(static_cast<size_t>(n));
  std::vector<int64_t> count;
  for (int64_t i = 0; i < n; ++i) {
    // As scikit-learn's StratifiedKFold: class labels only, not a continuous target.
    BL_CHECK(std::isfinite(labels[i]) && labels[i] == std::floor(labels[i]), "stratified k-fold: y[", i, "] = ",
             labels[i], " is not a class label (a continuous target); stratified folds need classes");
    auto [it, added] = code_of.emplace(labels[i], static_cast<int32_t>(count.size()));
    if (added) count.push_back(0);
    code[i] = it->second;
    ++count[static_cast<size_t>(it->second)];
  }
  const int32_t n_classes = static_cast<int32_t>(count.size());
  BL_CHECK(k <= *std::max_element(count.begin(), count.end()), "stratified k-fold: ", k,
           " folds, but no class has that many rows (the largest has ",
           *std::max_element(count.begin(), count.end()), ")");
  // Allocation: the sorted codes dealt round-robin, fold f taking sorted positions f, f+k, ...
  std::vector<int32_t> sorted = code;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> alloc(static_cast<size_t>(k) * n_classes, 0);  // [fold][class]
  for (int64_t i = 0; i < n; ++i) ++alloc[static_cast<size_t>(i % k) * n_classes + sorted[i]];
  std::vector<int32_t> fold(static_cast<size_t>(n));
  for (int32_t c = 0; c < n_classes; ++c) {
    std::vector<int32_t> folds_for_class;
    for (int32_t f = 0; f < k; ++f)
      folds_for_class.insert(folds_for_class.end(), static_cast<size_t>(alloc[static_cast<size_t>(f) * n_classes + c]), f);
    if (shuffle) {
      std::vector<int64_t> perm(folds_for_class.size());
      seeded_permutation(perm, seed, kFoldStream | (static_cast<uint64_t>(c) + 1));
      std::vector<int32_t> shuffled(folds_for_class.size());
      for (size_t i = 0; i < perm.size(); ++i) shuffled[i] = folds_for_class[static_cast<size_t>(perm[i])];
      folds_for_class.swap(shuffled);
    }
    size_t at = 0;
    for (int64_t i = 0; i < n; ++i)
      if (code[i] == c) fold[i] = folds_for_class[at++];
  }
  return fold;
}

}  // namespace bl::ml
