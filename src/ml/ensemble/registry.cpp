// registry.cpp: the ensemble estimators (see ensemble_estimators.h).
#include "ml/ensemble/ensemble_estimators.h"

#include <algorithm>

#include "ml/tree/tree_model.h"

namespace bl::ml {

void add_ensemble_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"bagging_classifier", make_bagging_classifier});
  out.push_back({"bagging_regressor", make_bagging_regressor});
  out.push_back({"isolation_forest", make_isolation_forest});
  out.push_back({"voting_classifier", make_voting_classifier});
  out.push_back({"voting_regressor", make_voting_regressor});
  out.push_back({"stacking_classifier", make_stacking_classifier});
  out.push_back({"stacking_regressor", make_stacking_regressor});
  out.push_back({"adaboost_classifier", make_adaboost_classifier});
  out.push_back({"adaboost_regressor", make_adaboost_regressor});
}

std::vector<int64_t> draw_indices(uint64_t seed, uint64_t stream, int64_t n, int64_t m, bool replace) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(m));
  if (replace) {
    for (int64_t i = 0; i < m; ++i) {
      out.push_back(random_below(seed, stream, static_cast<uint64_t>(i), static_cast<uint32_t>(n)));
    }
  } else {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = 0; i < m; ++i) {  // position i takes a draw from [i, n)
      const int64_t j = i + random_below(seed, stream, static_cast<uint64_t>(i), static_cast<uint32_t>(n - i));
      std::swap(perm[i], perm[j]);
      out.push_back(perm[i]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace bl::ml
