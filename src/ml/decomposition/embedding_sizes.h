// embedding_sizes.h: the sizes stored in the model state of the estimators that keep their training
// rows and embed them by an n_samples x n_samples eigen-decomposition (kernel_pca, isomap).
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "ml/linear/common.h"

namespace bl::ml::dec {

struct EmbeddingSizes {
  int64_t d = 0, n = 0, k = 0;  // n_features, n_samples, n_components
};

inline void put_embedding_sizes(nlohmann::json& state, const EmbeddingSizes& s) {
  lin::put_ints(state, {{"n_features", s.d}, {"n_samples", s.n}, {"n_components", s.k}});
}

// The sizes read back: n_features >= 1, 2 <= n_samples <= max_samples, 1 <= n_components <= n_samples.
inline EmbeddingSizes get_embedding_sizes(const nlohmann::json& state, const std::string& name, int64_t max_samples) {
  EmbeddingSizes s;
  s.d = lin::get_int(state, "n_features", 1, name);
  s.n = lin::get_int(state, "n_samples", 2, name);
  BL_CHECK(s.n <= max_samples, name, ": model state: n_samples is more than ", max_samples);
  s.k = lin::get_int(state, "n_components", 1, name);
  BL_CHECK(s.k <= s.n, name, ": model state: n_components ", s.k, " > n_samples ", s.n);
  return s;
}

}  // namespace bl::ml::dec
