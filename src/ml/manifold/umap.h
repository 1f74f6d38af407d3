// umap.h: the binary64 pieces of umap (ml/manifold/umap.cpp), open to its tests: the exact nearest
// rows, the per-row bandwidths (smooth_knn_dist), the fuzzy simplicial set and the curve parameters a
// and b. Every row is computed by one worker-pool task (or in row order on one thread), so the bits do
// not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "ml/manifold/sparse_rows.h"

namespace bl::ml::umap {

// The k nearest rows of every row, the row itself first (position 0, distance 0), then the k - 1
// others by ascending Euclidean distance sqrt(sum of squared differences in feature order, binary64),
// the lower index first among equals. idx and dist are [n, k] row-major.
struct Knn {
  int64_t n = 0, k = 0;
  std::vector<int64_t> idx;
  std::vector<double> dist;
};
Knn exact_knn(const std::vector<float>& x, int64_t n, int64_t d, int64_t k);
// The k nearest rows of x [n, d] to each row of q [m, d] (no row skipped), as above.
Knn query_knn(const std::vector<float>& x, int64_t n, int64_t d, const std::vector<float>& q, int64_t m, int64_t k);

// rho_i: the smallest positive distance of row i's list (0 when none; local_connectivity 1);
// sigma_i: by bisection (64 steps at most, from 1, doubling until bracketed) until
// sum_{j >= 1} exp(-max(d_ij - rho_i, 0) / sigma_i) is within 1e-5 of log2(k) (bandwidth 1); then at
// least 1e-3 times the mean of row i's distances (of all rows' distances where rho_i = 0). zero_rho:
// rho_i = 0 for every row (local_connectivity 0, umap-learn's transform of new rows).
struct Bandwidths {
  std::vector<double> sigma, rho;
};
Bandwidths smooth_knn_dist(const Knn& knn, bool zero_rho = false);

// The symmetric fuzzy graph in CSR form (columns ascending in each row, no zero entries, no
// diagonal): directed memberships w_ij = exp(-(d_ij - rho_i) / sigma_i) (1 where d_ij <= rho_i; 0 for
// the row itself), joined by the fuzzy union w_ij + w_ji - w_ij w_ji (set_op_mix_ratio 1).
using Graph = manifold::SparseRows;
Graph fuzzy_simplicial_set(const Knn& knn, const Bandwidths& bw);

// a and b of the curve 1 / (1 + a x^(2b)) fitted by least squares (Levenberg-Marquardt from
// a = b = 1) to y = 1 for x < min_dist and exp(-(x - min_dist) / spread) above, at the 300 evenly
// spaced x of [0, 3 spread]. min_dist 0.1, spread 1 give a = 1.5769, b = 0.8951.
struct CurveAB {
  double a = 0.0, b = 0.0;
};
CurveAB find_ab_params(double spread, double min_dist);

// x^y for x >= 0 (0 at x = 0, y > 0) by exp64(y log64(x)).
double pow64(double x, double y);

}  // namespace bl::ml::umap
