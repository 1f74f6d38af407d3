// kd_tree.h: an exact kd-tree search for the euclidean k nearest training rows, giving the very
// bits of the brute force of nearest_rows.h (the same neighbor indices in the same order and the
// same squared distances).
//
// Build (deterministic, no threads): the root holds every training row; a node of more than
// leaf_size rows is split on the feature of widest spread (hi - lo of its rows, binary64; equal
// spreads: the lowest feature) at the median position: the first floor(count / 2) rows in the
// order (value, row index) go left, the rest right. Each node keeps the tight box (lo, hi) of its
// rows and the largest |t|^2 (binary64) of its rows; each leaf lists its rows in ascending index.
//
// Distances: every candidate's squared distance is the brute force's binary32 value,
//   D = relu((-2 * dot(q, t) + qq) + tt),
// with dot the contract GEMM element (kernels/matmul.h: leaves of kGemmKLeaf, an fma chain from
// +0 in ascending feature, leaves folded left to right), qq and tt the row_sq_norms values, one
// fma and one add. A query's list keeps the k smallest (D, index) pairs in lexicographic order;
// the brute force's list (rows offered in ascending index, a row enters only strictly below the
// last) is exactly that set in that order, so the visiting order does not matter.
//
// Pruning: a node is skipped only when its list is full and
//   LB * (1 - (d + 16) 2^-50) - E  >  D_k * (1 + 2^-50),
// LB the binary64 squared distance from q to the node's box, D_k the list's last distance and
//   E = (4 n + 16) 2^-24 (|q|^2 + max |t|^2 of the node) + (4 n + 16) 2^-149,   n = d + d / 256 + 2,
// a bound (with a factor of about 2 to spare) on |D - |q - t|^2| for every row t of the node:
// the GEMM element, the two norms (any summation order), the fma and the add each carry relative
// errors of 2^-24 per operation and at most 2^-150 absolute (underflow). So every skipped row's
// computed distance is strictly above D_k and could not have entered the list. A query is
// searched with no pruning at all (every leaf) when |q|^2 or some |t|^2 exceeds 2^124, or d >
// 2^16, where binary32 overflow could break the bound; the result is still the brute force's.
#pragma once

#include <cstdint>
#include <vector>

#include "ml/neighbors/nearest_rows.h"

namespace bl {
class ThreadPool;
}

namespace bl::ml {

class KdTree {
 public:
  // Builds the tree over the rows of X [n, d] (host, row-major); leaf_size >= 1.
  KdTree(const float* X, int64_t n, int64_t d, int64_t leaf_size);

  int64_t nodes() const { return static_cast<int64_t>(nodes_.size()); }
  int64_t leaves() const;

  // The k nearest rows of the m queries q [m, d] with qq[i] = row_sq_norms of q_i and tt[j] the
  // row_sq_norms of training row j (the values the brute force uses). One task per block of
  // queries on pool (the process pool when null): the same bits at every thread count. variant:
  // by_isa scans the leaves with AVX2+FMA where the CPU has it, portable with scalar code (the same
  // bits). margin_scale and skip_leaf exist for the sabotage tests only: margin_scale = 0 prunes on the
  // box distance alone (no rounding margin); skip_leaf >= 0 never scans that leaf (by order of
  // creation). Needs 1 <= k <= n.
  NeighborLists search(const float* q, int64_t m, const float* qq, const float* tt, int64_t k,
                       ThreadPool* pool = nullptr, NearestRowsVariant variant = NearestRowsVariant::by_isa,
                       double margin_scale = 1.0, int64_t skip_leaf = -1) const;

 private:
  struct Node {
    int64_t begin = 0, end = 0;   // rows perm_[begin, end)
    int64_t left = -1, right = -1;  // children (-1: a leaf)
    int64_t leaf_id = -1;
    double t_max = 0.0;  // largest |t|^2 of its rows (binary64)
  };
  struct Query;

  void build(int64_t node, const float* X);
  double box_lower_bound(int64_t node, const float* q) const;
  void visit(Query& s, int64_t node, double lb) const;

  int64_t n_, d_, leaf_size_;
  std::vector<Node> nodes_;
  std::vector<float> lo_, hi_;   // [nodes, d] box of each node
  std::vector<int64_t> perm_;    // training row of each position
  std::vector<float> cols_;      // rows in position order, by feature: [d, n]
  std::vector<double> norm64_;   // |t|^2 (binary64) in position order
  double t_max_all_ = 0.0;
  int64_t leaf_count_ = 0;
};

}  // namespace bl::ml
