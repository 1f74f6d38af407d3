// kd_tree.cpp: see kd_tree.h.
#include "ml/neighbors/kd_tree.h"

#include <algorithm>
#include <cmath>

#include "contract/arith.h"
#include "core/error.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "ml/neighbors/cpu/kd_leaf.h"
#include "ml/neighbors/cpu/nearest_rows_tile.h"

namespace bl::ml {

namespace {

// Queries per task.
constexpr int64_t kTaskQueries = 64;
// Above these, binary32 intermediates could overflow: no pruning.
constexpr double kSafeNorm = 0x1p124;
constexpr int64_t kSafeDims = int64_t{1} << 16;

double sq_norm64(const float* v, int64_t d) {
  double s = 0.0;
  for (int64_t a = 0; a < d; ++a) s += static_cast<double>(v[a]) * static_cast<double>(v[a]);
  return s;
}

// (dd, j) enters a list of capacity k when the list has room or (dd, j) is below its last pair in
// (distance, index) order; it goes to its place in that order.
void offer_ordered(neighbors_detail::NeighborList& list, int64_t k, float dd, int64_t j) {
  auto before = [&](int64_t pos) { return dd < list.dist[pos] || (dd == list.dist[pos] && j < list.idx[pos]); };
  if (list.filled == k && !before(k - 1)) return;
  int64_t pos = list.filled < k ? list.filled++ : k - 1;
  while (pos > 0 && before(pos - 1)) {
    list.dist[pos] = list.dist[pos - 1];
    list.idx[pos] = list.idx[pos - 1];
    --pos;
  }
  list.dist[pos] = dd;
  list.idx[pos] = j;
}

}  // namespace

namespace neighbors_detail {

void kd_leaf_distances_portable(const float* cols, int64_t pitch, int64_t d, int64_t k_leaf, int64_t count,
                                const float* q, float qq, const float* tt, float* out) {
  for (int64_t i = 0; i < count; ++i) {
    // Row i of the leaf is column i of op(B) = cols [d, pitch]: the GEMM element of kernels/matmul.h.
    (void)k_leaf;  // kGemmKLeaf, inside matmul_reference_element
    const float dot = matmul_reference_element(q, d, false, cols, pitch, false, d, 0, i);
    const float dd = bl::add(bl::fma(-2.0f, dot, qq), tt[i]);
    out[i] = dd > 0.0f ? dd : 0.0f;
  }
}

}  // namespace neighbors_detail

struct KdTree::Query {
  const float* q;
  float qq;         // row_sq_norms value
  double q_norm;    // |q|^2 in binary64 (for the margin)
  bool prune;       // false: visit every leaf
  const float* tt;  // row_sq_norms of the training rows, by position
  float* scratch;   // a leaf's distances
  neighbors_detail::KdLeafDistances leaf_distances;
  int64_t k;
  neighbors_detail::NeighborList list;
  double margin_scale;
  int64_t skip_leaf;
};

KdTree::KdTree(const float* X, int64_t n, int64_t d, int64_t leaf_size) : n_(n), d_(d), leaf_size_(leaf_size) {
  BL_CHECK(n >= 1 && d >= 1, "kd_tree: needs n >= 1 and d >= 1, got n=", n, " d=", d);
  BL_CHECK(leaf_size >= 1, "kd_tree: leaf_size must be >= 1, got ", leaf_size);
  perm_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm_[i] = i;
  nodes_.push_back({0, n, -1, -1, -1, 0.0});
  build(0, X);
  // Rows by feature in position order for the leaf scans, and the norms for the margins.
  cols_.resize(static_cast<size_t>(n * d));
  norm64_.resize(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t a = 0; a < d; ++a) cols_[a * n + p] = X[perm_[p] * d + a];
    norm64_[p] = sq_norm64(X + perm_[p] * d, d);
  }
  for (Node& node : nodes_) {
    node.t_max = 0.0;
    for (int64_t p = node.begin; p < node.end; ++p) node.t_max = std::max(node.t_max, norm64_[p]);
  }
  t_max_all_ = nodes_[0].t_max;
}

int64_t KdTree::leaves() const { return leaf_count_; }

void KdTree::build(int64_t node, const float* X) {
  const int64_t begin = nodes_[node].begin, end = nodes_[node].end, d = d_;
  // The node's box.
  if (lo_.size() < static_cast<size_t>((node + 1) * d)) {
    lo_.resize(static_cast<size_t>((node + 1) * d));
    hi_.resize(static_cast<size_t>((node + 1) * d));
  }
  for (int64_t a = 0; a < d; ++a) {
    float lo = X[perm_[begin] * d + a], hi = lo;
    for (int64_t p = begin + 1; p < end; ++p) {
      const float v = X[perm_[p] * d + a];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    lo_[node * d + a] = lo;
    hi_[node * d + a] = hi;
  }
  if (end - begin <= leaf_size_) {
    nodes_[node].leaf_id = leaf_count_++;
    std::sort(perm_.begin() + begin, perm_.begin() + end);
    return;
  }
  int64_t dim = 0;
  double widest = -1.0;
  for (int64_t a = 0; a < d; ++a) {
    const double spread = static_cast<double>(hi_[node * d + a]) - static_cast<double>(lo_[node * d + a]);
    if (spread > widest) {
      widest = spread;
      dim = a;
    }
  }
  const int64_t mid = begin + (end - begin) / 2;
  std::nth_element(perm_.begin() + begin, perm_.begin() + mid, perm_.begin() + end, [&](int64_t x, int64_t y) {
    const float vx = X[x * d + dim], vy = X[y * d + dim];
    return vx < vy || (vx == vy && x < y);
  });
  const int64_t left = static_cast<int64_t>(nodes_.size());
  nodes_.push_back({begin, mid, -1, -1, -1, 0.0});
  nodes_.push_back({mid, end, -1, -1, -1, 0.0});
  nodes_[node].left = left;
  nodes_[node].right = left + 1;
  build(left, X);
  build(left + 1, X);
}

// Squared distance from q to the node's box in binary64 (each gap rounded once, squared, summed).
double KdTree::box_lower_bound(int64_t node, const float* q) const {
  const float* lo = &lo_[node * d_];
  const float* hi = &hi_[node * d_];
  double s = 0.0;
  for (int64_t a = 0; a < d_; ++a) {
    double gap = 0.0;
    if (q[a] < lo[a]) gap = static_cast<double>(lo[a]) - static_cast<double>(q[a]);
    if (q[a] > hi[a]) gap = static_cast<double>(q[a]) - static_cast<double>(hi[a]);
    s += gap * gap;
  }
  return s;
}

void KdTree::visit(Query& s, int64_t node_id, double lb) const {
  const Node& node = nodes_[node_id];
  if (s.prune && s.list.filled == s.k) {
    const double ops = static_cast<double>(d_ + d_ / kGemmKLeaf + 2);
    const double margin = s.margin_scale * ((4.0 * ops + 16.0) * 0x1p-24 * (s.q_norm + node.t_max) +
                                            (4.0 * ops + 16.0) * 0x1p-149);
    const double shrink = s.margin_scale * (static_cast<double>(d_) + 16.0) * 0x1p-50;
    const double last = static_cast<double>(s.list.dist[s.k - 1]);
    if (lb * (1.0 - shrink) - margin > last * (1.0 + s.margin_scale * 0x1p-50)) return;
  }
  if (node.left < 0) {
    if (node.leaf_id == s.skip_leaf) return;
    const int64_t count = node.end - node.begin;
    s.leaf_distances(&cols_[node.begin], n_, d_, kGemmKLeaf, count, s.q, s.qq, s.tt + node.begin, s.scratch);
    for (int64_t i = 0; i < count; ++i) {
      const float dd = s.scratch[i];
      if (s.list.filled < s.k || dd <= s.list.dist[s.k - 1]) offer_ordered(s.list, s.k, dd, perm_[node.begin + i]);
    }
    return;
  }
  const double lb_left = box_lower_bound(node.left, s.q), lb_right = box_lower_bound(node.right, s.q);
  if (lb_left <= lb_right) {
    visit(s, node.left, lb_left);
    visit(s, node.right, lb_right);
  } else {
    visit(s, node.right, lb_right);
    visit(s, node.left, lb_left);
  }
}

NeighborLists KdTree::search(const float* q, int64_t m, const float* qq, const float* tt, int64_t k, ThreadPool* pool,
                             NearestRowsVariant variant, double margin_scale, int64_t skip_leaf) const {
  BL_CHECK(k >= 1 && k <= n_, "kd_tree: k=", k, " must be in [1, ", n_, "] (the training rows)");
  BL_CHECK(m >= 0, "kd_tree: m must be >= 0, got ", m);
  NeighborLists out;
  out.k = k;
  out.idx.resize(static_cast<size_t>(m * k));
  out.dist.resize(static_cast<size_t>(m * k));
  if (m == 0) return out;
  const bool tree_safe = t_max_all_ <= kSafeNorm && d_ <= kSafeDims;
  std::vector<float> tt_pos(static_cast<size_t>(n_));
  for (int64_t p = 0; p < n_; ++p) tt_pos[p] = tt[perm_[p]];
  const neighbors_detail::KdLeafDistances leaf_distances =
      variant == NearestRowsVariant::by_isa && cpu_has_avx2_fma() ? &neighbors_detail::kd_leaf_distances_avx2
                                                                  : &neighbors_detail::kd_leaf_distances_portable;
  const int64_t scratch_size = std::min(leaf_size_, n_);
  ThreadPool& workers = pool ? *pool : default_pool();
  workers.parallel_for((m + kTaskQueries - 1) / kTaskQueries, [&](int64_t t) {
    const int64_t i1 = std::min(m, (t + 1) * kTaskQueries);
    std::vector<float> scratch(static_cast<size_t>(scratch_size));
    for (int64_t i = t * kTaskQueries; i < i1; ++i) {
      Query s;
      s.q = q + i * d_;
      s.qq = qq[i];
      s.q_norm = sq_norm64(s.q, d_);
      s.prune = tree_safe && s.q_norm <= kSafeNorm;
      s.tt = tt_pos.data();
      s.scratch = scratch.data();
      s.leaf_distances = leaf_distances;
      s.k = k;
      s.list = {out.dist.data() + i * k, out.idx.data() + i * k, 0};
      s.margin_scale = margin_scale;
      s.skip_leaf = skip_leaf;
      visit(s, 0, box_lower_bound(0, s.q));
    }
  });
  return out;
}

}  // namespace bl::ml
