// tsne.h: the binary64 pieces of tsne (ml/manifold/tsne.cpp), open to its tests: the joint
// probabilities P of the rows and the Kullback-Leibler divergence of the Student-t similarities of an
// embedding with its gradient, dense (method=exact) and over the nearest neighbors with the
// Barnes-Hut tree (method=barnes_hut). Row-major matrices; every row (point) by one worker-pool task
// and the row sums folded in row order, so the bits do not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "ml/manifold/sparse_rows.h"

namespace bl::ml::tsne {

// Conditional probabilities of each row from the squared distances sq [n, n] (each rounded to
// binary32 first): p_j|i = exp(-beta_i sq_ij) / sum_{l != i} exp(-beta_i sq_il), beta_i by the
// binary search for entropy ln(perplexity) (100 steps at most, tolerance 1e-5 on the entropy);
// then P = (C + C^T) / max(sum, eps) with every off-diagonal entry at least eps (binary64 machine
// epsilon) and a zero diagonal.
std::vector<double> joint_probabilities(const std::vector<double>& sq, int64_t n, double perplexity);

// The KL divergence sum_{i != j} p_ij ln(max(p_ij, eps) / q_ij) of the embedding y [n, k] against
// exaggeration * P (computed only when want_error; 0 otherwise), and its gradient into grad [n, k]:
// w_ij = (1 + |y_i - y_j|^2 / dof)^(-(dof + 1) / 2), dof = max(k - 1, 1), q_ij = max(w_ij / sum_{a != b}
// w_ab, eps), grad_i = 2 (dof + 1) / dof sum_j (p_ij - q_ij) w_ij (y_i - y_j). w [n, n] is scratch.
// The step is scikit-learn's: at dof = 1 (k <= 2) the divergence's exact gradient; for k >= 3 the
// derivative would have (1 + |y_i - y_j|^2 / dof)^-1 where this has w_ij, as scikit-learn's has.
double kl_gradient(const std::vector<double>& P, double exaggeration, const std::vector<double>& y, int64_t n,
                   int64_t k, bool want_error, std::vector<double>& grad, std::vector<double>& w);

// Sparse symmetric joint probabilities in CSR form (columns ascending in each row, no diagonal, no
// zero entries).
using SparseP = manifold::SparseRows;

// The neighbor count of method=barnes_hut: min(n - 1, floor(3 perplexity + 1)).
int64_t bh_neighbors(int64_t n, double perplexity);

// P over the `neighbors` nearest rows of each row of x [n, d] (squared Euclidean distances in binary64,
// summed in feature order; the lower index first among equals; the row itself left out): each row's
// conditional probabilities over its neighbors by the bisection of joint_probabilities (the squared
// distances rounded to binary32), then P = (C + C^T) / max(sum, eps), the entries summed row by row in
// column order. No floor on the entries (an entry that underflows to 0 is not stored).
SparseP neighbor_probabilities(const std::vector<float>& x, int64_t n, int64_t d, double perplexity,
                               int64_t neighbors);

// kl_gradient's divergence (over the stored entries of P only) and step, the repulsion approximated by
// the Barnes-Hut tree of y [n, k] (k <= 3: a binary tree, quadtree or octree, rebuilt at each call; see
// tsne.cpp): grad_i = 2 (dof + 1) / dof (sum_{j in P_i} p_ij w_ij (y_i - y_j) - F_i / Z), where F_i
// and Z_i are summed over the tree for point i (a cell of count c and barycenter b taken whole when
// its squared largest width is below angle^2 |y_i - b|^2, a leaf's points one by one, point i itself
// left out): F_i = sum c w^2 (y_i - b), Z_i = sum c w, Z = sum_i Z_i in point order. angle = 0
// visits every point: the exact repulsion, summed in the tree's order.
double bh_gradient(const SparseP& P, double exaggeration, const std::vector<double>& y, int64_t k, double angle,
                   bool want_error, std::vector<double>& grad);

}  // namespace bl::ml::tsne
