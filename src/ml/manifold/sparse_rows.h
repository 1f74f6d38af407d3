// sparse_rows.h: the sparse symmetric graphs of the neighbor embeddings (umap's fuzzy graph, tsne's
// barnes_hut probabilities) in CSR form, and their symmetrization from each row's directed entries.
// One thread, rows and columns in ascending order, so the result is a pure function of the entries.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace bl::ml::manifold {

struct SparseRows {
  int64_t n = 0;
  std::vector<int64_t> row_ptr, col;
  std::vector<double> val;
};

using DirectedEntries = std::vector<std::vector<std::pair<int64_t, double>>>;

// The union of the directed entries (row i's list: (j, w_ij), j != i, columns distinct, any order),
// each pair of directions joined by combine(w_ij, w_ji) (0 for a direction that has no entry); zero
// results dropped, columns ascending in each row.
template <typename Combine>
SparseRows symmetrize(DirectedEntries out_rows, Combine combine) {
  const int64_t n = static_cast<int64_t>(out_rows.size());
  DirectedEntries in_rows(out_rows.size());
  for (int64_t i = 0; i < n; ++i) {
    for (const auto& e : out_rows[i]) in_rows[e.first].emplace_back(i, e.second);  // rows i ascend: sorted
    std::sort(out_rows[i].begin(), out_rows[i].end());
  }
  SparseRows g;
  g.n = n;
  g.row_ptr.assign(1, 0);
  for (int64_t i = 0; i < n; ++i) {
    const auto &a = out_rows[i], &b = in_rows[i];
    size_t p = 0, q = 0;
    while (p < a.size() || q < b.size()) {
      int64_t j;
      double x = 0.0, y = 0.0;
      if (q == b.size() || (p < a.size() && a[p].first < b[q].first)) {
        j = a[p].first;
        x = a[p++].second;
      } else if (p == a.size() || b[q].first < a[p].first) {
        j = b[q].first;
        y = b[q++].second;
      } else {
        j = a[p].first;
        x = a[p++].second;
        y = b[q++].second;
      }
      const double v = combine(x, y);
      if (v == 0.0) continue;
      g.col.push_back(j);
      g.val.push_back(v);
    }
    g.row_ptr.push_back(static_cast<int64_t>(g.col.size()));
  }
  return g;
}

}  // namespace bl::ml::manifold
