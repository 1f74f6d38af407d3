// training_embedding.h: what the host embeddings that keep their training rows (tsne, umap) hold and
// write to the model file: the training rows (binary32), the embedding of the rows (binary64 descent
// results rounded to binary32) and its width. One place for the end of their fits and for the
// model-state fields they share (n_features, n_samples, n_components, training_rows, embedding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "ml/cluster/density_clustering.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/linear/common.h"

namespace bl::ml::manifold {

struct TrainingEmbedding {
  density_detail::HostRows rows;
  std::vector<float> embedding;  // [rows.n, k]
  int64_t k = 0;

  // The rows of X [n, d], copied to the host.
  void keep_rows(const Tensor& X) {
    rows.x = X.to(Device::cpu()).contiguous().to_vector<float>();
    rows.n = X.dim(0);
    rows.d = X.dim(1);
  }

  // The fitted embedding emb [n, width], each value rounded to binary32.
  void keep_embedding(const std::vector<double>& emb, int64_t width) {
    k = width;
    embedding.assign(emb.begin(), emb.end());
  }

  void save(nlohmann::json& state) const {
    dec::put_embedding_sizes(state, {rows.d, rows.n, k});
    lin::put_f32s(state, {{"training_rows", rows.x}, {"embedding", embedding}});
  }

  // The fields of save, checked: 2 <= n_samples <= max_samples, n_samples x n_features at most 2^40.
  void load(const nlohmann::json& state, const std::string& name, int64_t max_samples) {
    const dec::EmbeddingSizes sizes = dec::get_embedding_sizes(state, name, max_samples);
    BL_CHECK(sizes.d <= (int64_t{1} << 40) / sizes.n, name,
             ": model state: n_samples x n_features is more than 2^40");
    rows.n = sizes.n;
    rows.d = sizes.d;
    k = sizes.k;
    rows.x = lin::get_f32(state, "training_rows", rows.n * rows.d, name);
    embedding = lin::get_f32(state, "embedding", rows.n * k, name);
  }
};

}  // namespace bl::ml::manifold
