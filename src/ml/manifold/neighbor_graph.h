// neighbor_graph.h: host binary64 pieces shared by the graph-based embeddings and clusterers
// (spectral_clustering, spectral_embedding, locally_linear_embedding): the k nearest rows of a row
// and the symmetric-normalized affinity of the rows. Distances are those of
// ml/cluster/density_clustering.h (binary32 rows widened exactly, squared differences summed in
// feature order from +0); every loop runs in a fixed order on one thread, so the results are pure
// functions of the rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ml/cluster/density_clustering.h"
#include "ml/host_math.h"

namespace bl::ml::graph {

// The k entries of sq[0..n) with the smallest values, skipping index `skip` (-1: none), in
// ascending value, the lower index first among equals (the first k of a stable sort by value).
inline std::vector<int64_t> k_nearest(const double* sq, int64_t n, int64_t k, int64_t skip) {
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    if (j != skip) idx.push_back(j);
  auto less = [sq](int64_t a, int64_t b) { return sq[a] < sq[b] || (sq[a] == sq[b] && a < b); };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), less);
  idx.resize(static_cast<size_t>(k));
  return idx;
}

// The squared distances [n, n] of the rows of x [n, d] (row-major binary32).
inline std::vector<double> sq_distances(const std::vector<float>& x, int64_t n, int64_t d) {
  std::vector<double> out(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = density_detail::sq_distance(x.data() + i * d, x.data() + j * d, d);
  return out;
}

// The normalized affinity of the rows: M = S^-1 A' S^-1 [n, n] and s [n], where
//   rbf (n_neighbors <= 0): A_ij = exp64(-gamma |x_i - x_j|^2);
//   nearest_neighbors:      C_ij = 1 when j is one of the n_neighbors rows nearest to i (i itself
//                           included, equal distances to the lower index), A = (C + C^T) / 2;
// A' is A with a zero diagonal, d_i = sum_{j != i} A_ij (j ascending), s_i = sqrt(d_i) (1 where
// d_i = 0). I - M is the normalized graph Laplacian; its smallest eigenvectors are M's largest.
struct NormalizedAffinity {
  std::vector<double> M, s;
};

inline NormalizedAffinity normalized_affinity(const std::vector<float>& x, int64_t n, int64_t d, double gamma,
                                              int64_t n_neighbors) {
  std::vector<double> dist2 = sq_distances(x, n, d);
  std::vector<double> A(static_cast<size_t>(n * n), 0.0);
  if (n_neighbors <= 0) {
    for (size_t t = 0; t < A.size(); ++t) A[t] = exp64(-gamma * dist2[t]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j : k_nearest(&dist2[i * n], n, n_neighbors, -1)) {
        A[i * n + j] += 0.5;
        A[j * n + i] += 0.5;
      }
  }
  dist2 = std::vector<double>();
  NormalizedAffinity out;
  out.s.assign(static_cast<size_t>(n), 1.0);
  for (int64_t i = 0; i < n; ++i) {
    double deg = 0.0;
    for (int64_t j = 0; j < n; ++j)
      if (j != i) deg += A[i * n + j];
    if (deg > 0.0) out.s[i] = std::sqrt(deg);
  }
  out.M.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (j != i) out.M[i * n + j] = A[i * n + j] / (out.s[i] * out.s[j]);
  return out;
}

}  // namespace bl::ml::graph
