// hist_gbm.cpp: histogram gradient boosting on integer histograms (see hist_gbm.h).
#include "ml/boosting/hist_gbm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "bitlearn/ml/progress.h"
#include "contract/math.h"
#include "contract/rng.h"
#include "core/allocator.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/histogram.h"
#include "kernels/math_map.h"
#include "ml/boosting/binning.h"
#include "ml/boosting/boost_chunks.h"
#include "ml/boosting/hgb_losses.h"
#include "ml/boosting/logistic_gradients.h"
#include "ml/boosting/row_partition.h"
#include "ops/dispatch.h"

namespace bl::ml {

namespace {

constexpr double kNoGain = -std::numeric_limits<double>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kMinHessian = 1e-16f;
constexpr int64_t kRowChunk = kBoostRowChunk;
// Categorical splits (hist_gbm.h): scikit-learn's MIN_CAT_SUPPORT (a category's support, and the
// hessian added when ordering).
constexpr int64_t kMinCatSupport = 10;
constexpr double kCatSmooth = 10.0;

// Per-iteration Philox streams (seed = random_state).
constexpr uint64_t kRowStreamTag = uint64_t{1} << 62;
constexpr uint64_t kColumnStreamTag = uint64_t{2} << 62;
constexpr uint64_t kDartStreamTag = uint64_t{3} << 62;  // | iteration

// Histograms on the CPU or on CUDA; both give the same integers.
class HistogramBuilder {
 public:
  HistogramBuilder(const std::vector<uint8_t>& bins, int64_t n, int64_t d, bool use_cuda)
      : bins_(bins), n_(n), d_(d), cuda_(use_cuda) {
    if (cuda_) {
      check_device_usable(Device::cuda(), "hist_gradient_boosting");
      dev_bins_ = Tensor::from_vector(bins, {n * d}, DType::u8, Device::cuda());
    }
  }

  // Gradients of the current tree (host arrays of n entries), copied to the device for CUDA; the
  // CPU reads the gathered pairs passed to build.
  void set_gradients(const std::vector<int64_t>& gq, const std::vector<int64_t>& hq) {
    if (!cuda_) return;
    dev_gq_ = Tensor::from_vector(gq, {n_}, Device::cuda());
    dev_hq_ = Tensor::from_vector(hq, {n_}, Device::cuda());
  }

  bool on_cuda() const { return cuda_; }

  // Histogram of the listed rows; g, h hold their pairs in list order (h null: every hessian is
  // h_const); the CPU cuts the work over `pool`. CUDA reads the pairs by row from its own copies.
  void build(const int32_t* rows, int64_t count, const int64_t* g, const int64_t* h, int64_t h_const,
             std::vector<int64_t>& hist, ThreadPool& pool) const {
    hist.resize(static_cast<size_t>(histogram_size(d_)));
    if (cuda_) {
      std::vector<int32_t> list(rows, rows + count);
      Tensor dev_rows = Tensor::from_vector(list, {count}, Device::cuda());
      Tensor dev_hist = Tensor::empty({histogram_size(d_)}, DType::i64, Device::cuda());
      dispatch::histogram(Device::cuda(), static_cast<const uint8_t*>(dev_bins_.raw_data()), d_,
                          static_cast<const int32_t*>(dev_rows.raw_data()), count,
                          static_cast<const int64_t*>(dev_gq_.raw_data()),
                          static_cast<const int64_t*>(dev_hq_.raw_data()),
                          static_cast<int64_t*>(dev_hist.raw_data()));
      hist = dev_hist.to(Device::cpu()).to_vector<int64_t>();
      return;
    }
    // The CPU runs the gathered form (kernels/histogram.h), which reads the pairs in list order.
    histogram_gathered_cpu(bins_.data(), d_, rows, count, g, h, h_const, hist.data(), pool);
  }

 private:
  const std::vector<uint8_t>& bins_;
  int64_t n_, d_;
  bool cuda_;
  Tensor dev_bins_, dev_gq_, dev_hq_;
};

// llround(x) for |x| < 2^62 without a library call: the truncation plus the exact fraction
// x - trunc(x) (exact for |x| < 2^53; larger doubles are integers), halves away from zero.
inline int64_t round_half_away(double x) {
  const int64_t t = static_cast<int64_t>(x);
  const double frac = x - static_cast<double>(t);
  return t + (frac >= 0.5 ? 1 : 0) - (frac <= -0.5 ? 1 : 0);
}

// Fixed-point form of one array over the listed rows: q = round(v * 2^s), |sum| < 2^62.
struct Quantized {
  std::vector<int64_t> q;
  double unit = 1.0;       // 2^-s: value of one integer step
  bool constant = false;   // every listed row has the same q (squared error's hessians)
  int64_t constant_q = 0;  // that q
};

// Marks out.constant when every listed row's q is the same (row chunks checked in parallel).
void mark_constant(Quantized& out, const std::vector<int32_t>& rows) {
  const int64_t first = out.q[rows[0]];
  const int64_t m = static_cast<int64_t>(rows.size());
  std::vector<char> same(static_cast<size_t>((m + kRowChunk - 1) / kRowChunk), 1);
  for_chunk_ranges(m, [&](int64_t c, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (out.q[rows[i]] != first) {
        same[c] = 0;
        return;
      }
    }
  });
  for (char s : same) {
    if (!s) return;
  }
  out.constant = true;
  out.constant_q = first;
}

// Quantizes v over the listed rows into out (its q buffer is reused between calls; rows not
// listed get q = 0). The largest |v| is the largest of per-chunk maxima (NaN never wins a max, so
// the cut does not matter); each q depends on its own value only.
void quantize(const std::vector<float>& v, const std::vector<int32_t>& rows, int64_t n, Quantized& out) {
  out.unit = 1.0;
  out.constant = false;
  out.constant_q = 0;
  const int64_t m = static_cast<int64_t>(rows.size());
  std::vector<float> chunk_max(static_cast<size_t>((m + kRowChunk - 1) / kRowChunk), 0.0f);
  for_chunk_ranges(m, [&](int64_t c, int64_t begin, int64_t end) {
    float mx = 0.0f;
    for (int64_t i = begin; i < end; ++i) mx = std::max(mx, bl::abs(v[rows[i]]));
    chunk_max[c] = mx;
  });
  float max_abs = 0.0f;
  for (float mx : chunk_max) max_abs = std::max(max_abs, mx);
  out.q.resize(static_cast<size_t>(n));
  if (m < n || max_abs == 0.0f) std::fill(out.q.begin(), out.q.end(), 0);
  if (max_abs == 0.0f) {
    mark_constant(out, rows);
    return;
  }
  int e = 0;
  std::frexp(static_cast<double>(max_abs), &e);  // max_abs < 2^e
  int b = 0;
  while ((int64_t{1} << b) < m) ++b;  // count <= 2^b
  const int s = 62 - e - b;
  out.unit = std::ldexp(1.0, -s);
  const double scale = std::ldexp(1.0, s);  // a power of two: v * scale is exact in float64
  for_chunk_ranges(m, [&](int64_t, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int32_t r = rows[i];
      out.q[r] = round_half_away(static_cast<double>(v[r]) * scale);
    }
  });
  mark_constant(out, rows);
}

struct SplitInfo {
  double gain = kNoGain;
  int32_t feature = -1;
  int32_t bin = 0;
  bool default_left = false;
  bool categorical = false;           // a categorical split: the codes in cat_left go left
  uint64_t cat_left[4] = {0, 0, 0, 0};
};

struct NodeWork {
  int32_t id;
  int64_t begin, end, depth;
  std::vector<int64_t> hist;
  SplitInfo best;
};

// Nodes of at least this many rows build their histogram alone, cut over the pool's threads;
// smaller ones of one depth-wise level are built side by side, one node per task.
constexpr int64_t kAloneHistogramRows = 16384;

class TreeGrower {
 public:
  TreeGrower(const BoostParams& p, const BinMapper& mapper, const std::vector<uint8_t>& bins,
             int64_t d, const HistogramBuilder& hb)
      : p_(p), mapper_(mapper), bins_(bins), d_(d), hb_(hb), serial_pool_(1) {
    // Column-major copy of the bins for the partitions: one node's rows, ascending, read one
    // column contiguously instead of one byte per d-byte row.
    const int64_t n = static_cast<int64_t>(bins.size()) / std::max<int64_t>(1, d);
    bins_by_column_.resize(bins.size());
    default_pool().parallel_for(d, [&](int64_t f) {
      uint8_t* col = bins_by_column_.data() + f * n;
      for (int64_t r = 0; r < n; ++r) col[r] = bins[r * d + f];
    });
    n_rows_ = n;
    // Categorical features: the codes never seen at fit, which go where missing values go.
    if (!mapper.categorical.empty()) {
      unseen_.assign(static_cast<size_t>(4 * d), 0);
      for (int64_t f = 0; f < d; ++f) {
        if (!mapper.is_categorical(f)) continue;
        uint64_t seen[4] = {0, 0, 0, 0};
        const uint8_t* col = bins_by_column_.data() + f * n;
        for (int64_t r = 0; r < n; ++r) {
          if (col[r] != kMissingBin) seen[col[r] / 64] |= uint64_t{1} << (col[r] % 64);
        }
        for (int w = 0; w < 4; ++w) unseen_[f * 4 + w] = ~seen[w];
      }
    }
    for (int8_t c : p.monotonic) constrained_ = constrained_ || c != 0;
    if (!p.interaction.empty()) {  // the listed groups, then one of the features listed nowhere
      std::vector<char> listed(static_cast<size_t>(d), 0);
      for (const auto& g : p.interaction) {
        groups_.emplace_back(static_cast<size_t>(d), 0);
        for (int32_t f : g) groups_.back()[f] = listed[f] = 1;
      }
      if (std::find(listed.begin(), listed.end(), 0) != listed.end()) {
        groups_.emplace_back(static_cast<size_t>(d), 0);
        for (int64_t f = 0; f < d; ++f) groups_.back()[f] = !listed[f];
      }
    }
  }

  // What both growths do first: start_tree, the per-node arrays emptied, an empty one-value tree.
  Tree begin_tree(std::vector<int32_t> rows, const Quantized& g, const Quantized& h, const std::vector<char>& allowed,
                  std::vector<int32_t>& node_split_bin, int64_t* g_root, int64_t* h_root) {
    start_tree(std::move(rows), g, h, allowed, g_root, h_root);
    Tree tree;
    tree.n_values = 1;
    node_split_bin.clear();
    node_begin_.clear();
    node_end_.clear();
    node_depth_.clear();
    return tree;
  }

  // Grows one tree over `rows` with the quantized gradients; node_split_bin receives each node's
  // split bin (for the training-score update on bins).
  Tree grow(std::vector<int32_t> rows, const Quantized& g, const Quantized& h,
            const std::vector<char>& allowed, std::vector<int32_t>& node_split_bin) {
    int64_t g_root = 0, h_root = 0;
    Tree tree = begin_tree(std::move(rows), g, h, allowed, node_split_bin, &g_root, &h_root);
    node_g_.clear();
    node_h_.clear();
    node_lo_.clear();
    node_hi_.clear();
    node_v_.clear();
    node_groups_.clear();
    node_features_.clear();
    std::vector<std::unique_ptr<NodeWork>> open;
    auto root = std::make_unique<NodeWork>();
    root->id = add_node(tree, node_split_bin, g_root, h_root);
    if (constrained_) node_v_[root->id] = node_value(g_root, h_root, -kInf, kInf);
    if (!groups_.empty()) {  // the root may split on any feature of any group
      node_groups_[root->id].assign(groups_.size(), 1);
      node_features_[root->id].assign(static_cast<size_t>(d_), 1);
    }
    root->begin = 0;
    root->end = static_cast<int64_t>(rows_[0].size());
    root->depth = 0;
    node_end_[root->id] = root->end;
    take_hist(root->hist);
    build_hist(0, root->end, 0, root->hist, default_pool());
    if (splittable(*root)) {
      root->best = best_split(root->hist, root->id, g_root, h_root);
      if (root->best.gain > p_.min_split_gain) open.push_back(std::move(root));
    }
    if (p_.depthwise) {
      grow_levels(tree, node_split_bin, std::move(open));
    } else {
      grow_best_first(tree, node_split_bin, std::move(open));
    }
    set_leaf_values(tree, node_g_, node_h_);
    return tree;
  }

  // For the tree grown last: adds each leaf's value to raw[r * K + k] of the rows that reached it
  // (the row lists hold them grouped by leaf) and, when leaf_out is given, stores each row's leaf. The
  // same single float addition per row as a traversal, without traversing; leaves run as parallel
  // tasks (no two leaves share a row).
  void add_leaf_values(const Tree& tree, float* raw, int64_t K, int64_t k, int32_t* leaf_out) const {
    std::vector<int32_t> leaves;
    for (int64_t id = 0; id < tree.n_nodes(); ++id) {
      if (tree.feature[id] < 0 && node_end_[id] > node_begin_[id]) leaves.push_back(static_cast<int32_t>(id));
    }
    default_pool().parallel_for(static_cast<int64_t>(leaves.size()), [&](int64_t j) {
      const int32_t id = leaves[j];
      const float v = tree.value[id];
      const int32_t* rows = rows_[node_depth_[id] & 1].data();
      for (int64_t i = node_begin_[id]; i < node_end_[id]; ++i) {
        const int64_t r = rows[i];
        if (raw) raw[r * K + k] = bl::add(raw[r * K + k], v);
        if (leaf_out) leaf_out[r] = id;
      }
    });
  }

  // For the tree grown last (absolute error, quantile): each leaf's value becomes learning_rate
  // times the q-quantile of y - raw over its rows (hgb_losses.h), clipped to the leaf's bounds
  // under monotonic constraints; leaves run as parallel tasks.
  void set_leaf_quantiles(Tree& tree, const float* raw, const float* y, const float* weight, double q) const {
    std::vector<int32_t> leaves;
    for (int64_t id = 0; id < tree.n_nodes(); ++id) {
      if (tree.feature[id] < 0 && node_end_[id] > node_begin_[id]) leaves.push_back(static_cast<int32_t>(id));
    }
    default_pool().parallel_for(static_cast<int64_t>(leaves.size()), [&](int64_t j) {
      const int32_t id = leaves[j];
      const int32_t* rows = rows_[node_depth_[id] & 1].data();
      std::vector<std::pair<float, int32_t>> res;
      res.reserve(static_cast<size_t>(node_end_[id] - node_begin_[id]));
      for (int64_t i = node_begin_[id]; i < node_end_[id]; ++i) {
        res.push_back({bl::sub(y[rows[i]], raw[rows[i]]), rows[i]});
      }
      double v = residual_quantile(res, weight, q);
      if (constrained_) v = std::min(std::max(v, node_lo_[id]), node_hi_[id]);  // keeps the constraints
      tree.value[id] = static_cast<float>(p_.learning_rate * v);
    });
  }

  // Symmetric (oblivious) tree: level by level, every node of the level splits on the one
  // (feature, bin, NaN side) that maximises the sum of the nodes' gains (features ascending, bins
  // ascending, NaN right then left; strictly better wins). A node whose side would break
  // min_samples_leaf / min_child_weight, or that is empty, contributes 0 to the sum; empty nodes
  // stay leaves. Depth max_depth (6 when unset); growth stops when the best sum <= min_split_gain.
  Tree grow_symmetric(std::vector<int32_t> rows, const Quantized& g, const Quantized& h,
                      const std::vector<char>& allowed, std::vector<int32_t>& node_split_bin) {
    int64_t g_root = 0, h_root = 0;
    Tree tree = begin_tree(std::move(rows), g, h, allowed, node_split_bin, &g_root, &h_root);
    std::vector<int64_t> node_g, node_h;
    auto add_node = [&](int64_t gs, int64_t hs) {
      node_g.push_back(gs);
      node_h.push_back(hs);
      node_split_bin.push_back(0);
      node_begin_.push_back(0);
      node_end_.push_back(0);
      node_depth_.push_back(0);
      tree.cover.push_back(static_cast<double>(hs) * h.unit);  // TreeSHAP's cover: the hessian sum
      return tree.add_node();
    };
    std::vector<std::unique_ptr<NodeWork>> level;
    level.push_back(std::make_unique<NodeWork>());
    level[0]->id = add_node(g_root, h_root);
    level[0]->begin = 0;
    level[0]->end = static_cast<int64_t>(rows_[0].size());
    level[0]->depth = 0;
    node_end_[level[0]->id] = level[0]->end;
    take_hist(level[0]->hist);
    build_hist(0, level[0]->end, 0, level[0]->hist, default_pool());
    const int64_t depth_limit = p_.max_depth > 0 ? p_.max_depth : 6;
    for (int64_t depth = 0; depth < depth_limit && !level.empty(); ++depth) {
      const SplitInfo s = best_level_split(level, node_g, node_h);
      if (s.feature < 0 || !(s.gain > p_.min_split_gain)) break;
      std::vector<std::unique_ptr<NodeWork>> next;
      const bool last = depth + 1 == depth_limit;
      for (auto& node : level) {
        int64_t gl = 0, hl = 0;
        const int64_t mid = partition(node->begin, node->end, node->depth, s, &gl, &hl, default_pool());
        auto left = std::make_unique<NodeWork>();
        auto right = std::make_unique<NodeWork>();
        left->id = add_node(gl, hl);
        right->id = add_node(node_g[node->id] - gl, node_h[node->id] - hl);
        tree.feature[node->id] = s.feature;
        tree.threshold[node->id] = mapper_.thresholds[s.feature][s.bin];
        tree.left[node->id] = left->id;
        tree.right[node->id] = right->id;
        tree.default_left[node->id] = s.default_left ? 1 : 0;
        node_split_bin[node->id] = s.bin;
        left->begin = node->begin;
        left->end = mid;
        right->begin = mid;
        right->end = node->end;
        left->depth = right->depth = depth + 1;
        node_depth_[left->id] = node_depth_[right->id] = depth + 1;
        node_begin_[left->id] = node->begin;
        node_end_[left->id] = node_begin_[right->id] = mid;
        node_end_[right->id] = node->end;
        if (!last) {
          NodeWork* small = (mid - node->begin) <= (node->end - mid) ? left.get() : right.get();
          NodeWork* large = small == left.get() ? right.get() : left.get();
          take_hist(small->hist);
          take_hist(large->hist);
          build_hist(small->begin, small->end, small->depth, small->hist, default_pool());
          large->hist.resize(node->hist.size());
          subtract_hist(node->hist, small->hist, large->hist);
        }
        for (auto* child : {&left, &right}) {
          if ((*child)->end > (*child)->begin) next.push_back(std::move(*child));
        }
      }
      for (auto& node : level) recycle_hist(node->hist);
      level = std::move(next);
    }
    set_leaf_values(tree, node_g, node_h);
    return tree;
  }

 private:
  int32_t add_node(Tree& tree, std::vector<int32_t>& node_split_bin, int64_t gs, int64_t hs) {
    const int32_t id = tree.add_node();
    tree.cover.push_back(static_cast<double>(hs) * h_->unit);  // TreeSHAP's cover: the hessian sum
    node_g_.push_back(gs);
    node_h_.push_back(hs);
    node_split_bin.push_back(0);
    node_begin_.push_back(0);
    node_end_.push_back(0);
    node_depth_.push_back(0);
    if (constrained_) {
      node_lo_.push_back(-kInf);
      node_hi_.push_back(kInf);
      node_v_.push_back(0.0);
    }
    if (!groups_.empty()) {
      node_groups_.emplace_back();
      node_features_.emplace_back();
    }
    return id;
  }

  // Records node's split at row position mid (left sums gl, hl) in the tree and creates its two
  // children (ids: left, then right).
  void record_split(Tree& tree, std::vector<int32_t>& node_split_bin, const NodeWork& node, int64_t mid, int64_t gl,
                    int64_t hl, NodeWork& left, NodeWork& right) {
    const SplitInfo& s = node.best;
    left.id = add_node(tree, node_split_bin, gl, hl);
    right.id = add_node(tree, node_split_bin, node_g_[node.id] - gl, node_h_[node.id] - hl);
    tree.feature[node.id] = s.feature;
    if (s.categorical) {  // the node's left set, plus the codes never seen at fit when NaN goes left
      uint64_t bits[4];
      for (int w = 0; w < 4; ++w) bits[w] = s.cat_left[w] | (s.default_left ? unseen_[s.feature * 4 + w] : 0);
      tree.set_categorical(node.id, bits);
    } else {
      tree.threshold[node.id] = mapper_.thresholds[s.feature][s.bin];
    }
    tree.left[node.id] = left.id;
    tree.right[node.id] = right.id;
    tree.default_left[node.id] = s.default_left ? 1 : 0;
    node_split_bin[node.id] = s.bin;
    left.begin = node.begin;
    left.end = mid;
    right.begin = mid;
    right.end = node.end;
    left.depth = right.depth = node.depth + 1;
    node_depth_[left.id] = node_depth_[right.id] = node.depth + 1;
    node_begin_[left.id] = node.begin;
    node_end_[left.id] = node_begin_[right.id] = mid;
    node_end_[right.id] = node.end;
    if (constrained_) {
      // The children's values within the parent's bounds; a constrained split bounds the subtrees
      // by their mid-point (the left side below it for +1, above it for -1).
      const double lo = node_lo_[node.id], hi = node_hi_[node.id];
      const double vl = node_value(gl, hl, lo, hi);
      const double vr = node_value(node_g_[node.id] - gl, node_h_[node.id] - hl, lo, hi);
      node_v_[left.id] = vl;
      node_v_[right.id] = vr;
      node_lo_[left.id] = node_lo_[right.id] = lo;
      node_hi_[left.id] = node_hi_[right.id] = hi;
      const int8_t c = p_.monotonic[s.feature];
      const double mid = (vl + vr) / 2.0;
      if (c > 0) node_hi_[left.id] = node_lo_[right.id] = mid;
      if (c < 0) node_lo_[left.id] = node_hi_[right.id] = mid;
    }
    if (!groups_.empty()) {
      // Interaction constraints: the children keep the parent's groups that hold the split feature
      // and may split on the features of those groups.
      std::vector<char> keep = node_groups_[node.id], feats(static_cast<size_t>(d_), 0);
      for (size_t g = 0; g < groups_.size(); ++g) {
        keep[g] = keep[g] && groups_[g][s.feature];
        if (!keep[g]) continue;
        for (int64_t f = 0; f < d_; ++f) feats[f] = feats[f] || groups_[g][f];
      }
      node_groups_[left.id] = node_groups_[right.id] = keep;
      node_features_[left.id] = node_features_[right.id] = feats;
    }
  }

  // Loss-guided growth: the open node of the best gain (ties: lower id) splits next, one at a time.
  void grow_best_first(Tree& tree, std::vector<int32_t>& node_split_bin, std::vector<std::unique_ptr<NodeWork>> open) {
    int64_t leaves = 1;
    while (!open.empty() && (p_.max_leaf_nodes <= 0 || leaves < p_.max_leaf_nodes)) {
      size_t pick = 0;
      for (size_t i = 1; i < open.size(); ++i) {
        const NodeWork& a = *open[i];
        const NodeWork& b = *open[pick];
        if (a.best.gain > b.best.gain || (a.best.gain == b.best.gain && a.id < b.id)) pick = i;
      }
      std::unique_ptr<NodeWork> node = std::move(open[pick]);
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(pick));
      int64_t gl = 0, hl = 0;
      const int64_t mid = partition(node->begin, node->end, node->depth, node->best, &gl, &hl, default_pool());
      auto left = std::make_unique<NodeWork>();
      auto right = std::make_unique<NodeWork>();
      record_split(tree, node_split_bin, *node, mid, gl, hl, *left, *right);
      ++leaves;
      // Histogram of the smaller child; the larger is parent - smaller (exact in integers).
      NodeWork* small = (mid - node->begin) <= (node->end - mid) ? left.get() : right.get();
      NodeWork* large = small == left.get() ? right.get() : left.get();
      const bool need = splittable(*left) || splittable(*right);
      if (need) {
        take_hist(small->hist);
        take_hist(large->hist);
        build_hist(small->begin, small->end, small->depth, small->hist, default_pool());
        large->hist.resize(node->hist.size());
        subtract_hist(node->hist, small->hist, large->hist);
      }
      recycle_hist(node->hist);
      node.reset();
      for (auto* child : {&left, &right}) {
        NodeWork& c = **child;
        if (!need || !splittable(c)) continue;
        c.best = best_split(c.hist, c.id, node_g_[c.id], node_h_[c.id]);
        if (c.best.gain > p_.min_split_gain) {
          open.push_back(std::move(*child));
        }
      }
    }
  }

  // Depth-wise growth, one level at a time. The open nodes of a level are in ascending id order,
  // the order in which the one-at-a-time growth (lowest depth, then lowest id) splits them; with
  // max_leaf_nodes the first ones split until the cap. A level runs as a few batches of pool tasks:
  // partitions (large nodes blocked, small ones one node per task), histograms of the smaller
  // children (large alone, small one node per task), sibling subtractions and split searches (one
  // task per node and feature). Every node's result is the one-at-a-time growth's: the same tree.
  void grow_levels(Tree& tree, std::vector<int32_t>& node_split_bin, std::vector<std::unique_ptr<NodeWork>> open) {
    ThreadPool& pool = default_pool();
    int64_t leaves = 1;
    while (!open.empty() && (p_.max_leaf_nodes <= 0 || leaves < p_.max_leaf_nodes)) {
      if (p_.max_leaf_nodes > 0 && static_cast<int64_t>(open.size()) > p_.max_leaf_nodes - leaves) {
        for (size_t j = static_cast<size_t>(p_.max_leaf_nodes - leaves); j < open.size(); ++j) {
          recycle_hist(open[j]->hist);
        }
        open.resize(static_cast<size_t>(p_.max_leaf_nodes - leaves));
      }
      const size_t m = open.size();
      // Partitions.
      std::vector<int64_t> mid(m), gl(m, 0), hl(m, 0);
      std::vector<size_t> small_nodes;
      for (size_t j = 0; j < m; ++j) {
        const NodeWork& node = *open[j];
        if (node.end - node.begin >= 2 * kPartitionBlock) {
          mid[j] = partition(node.begin, node.end, node.depth, node.best, &gl[j], &hl[j], pool);
        } else {
          small_nodes.push_back(j);
        }
      }
      pool.parallel_for(static_cast<int64_t>(small_nodes.size()), [&](int64_t t) {
        const size_t j = small_nodes[t];
        const NodeWork& node = *open[j];
        mid[j] = partition(node.begin, node.end, node.depth, node.best, &gl[j], &hl[j], serial_pool_);
      });
      // Children, in the order the one-at-a-time growth creates them.
      struct Pair {
        NodeWork* parent;
        NodeWork* small;
        NodeWork* large;
      };
      std::vector<std::unique_ptr<NodeWork>> children;
      std::vector<Pair> pairs;
      for (size_t j = 0; j < m; ++j) {
        NodeWork& node = *open[j];
        auto left = std::make_unique<NodeWork>();
        auto right = std::make_unique<NodeWork>();
        record_split(tree, node_split_bin, node, mid[j], gl[j], hl[j], *left, *right);
        ++leaves;
        if (splittable(*left) || splittable(*right)) {
          NodeWork* small = (mid[j] - node.begin) <= (node.end - mid[j]) ? left.get() : right.get();
          NodeWork* large = small == left.get() ? right.get() : left.get();
          take_hist(small->hist);
          take_hist(large->hist);
          pairs.push_back({&node, small, large});
        }
        children.push_back(std::move(left));
        children.push_back(std::move(right));
      }
      // Histograms of the smaller children, then the larger ones as parent - smaller.
      std::vector<const Pair*> side_by_side;
      for (const Pair& pr : pairs) {
        if (hb_.on_cuda() || pr.small->end - pr.small->begin >= kAloneHistogramRows) {
          build_hist(pr.small->begin, pr.small->end, pr.small->depth, pr.small->hist, pool);
        } else {
          side_by_side.push_back(&pr);
        }
      }
      pool.parallel_for(static_cast<int64_t>(side_by_side.size()), [&](int64_t t) {
        const Pair& pr = *side_by_side[t];
        build_hist(pr.small->begin, pr.small->end, pr.small->depth, pr.small->hist, serial_pool_);
      });
      for (const Pair& pr : pairs) pr.large->hist.resize(pr.parent->hist.size());
      pool.parallel_for(static_cast<int64_t>(pairs.size()) * d_, [&](int64_t t) {
        const Pair& pr = pairs[t / d_];
        const int64_t at = (t % d_) * kHistBins * kHistStats;
        histogram_subtract(pr.parent->hist.data() + at, pr.small->hist.data() + at, 1, pr.large->hist.data() + at);
      });
      for (auto& node : open) recycle_hist(node->hist);
      // Split searches of the splittable children, one task per (child, feature), each child's
      // per-feature bests reduced in feature order as best_split does.
      std::vector<NodeWork*> search;
      for (const Pair& pr : pairs) {
        NodeWork* left = pr.small->id < pr.large->id ? pr.small : pr.large;
        NodeWork* right = left == pr.small ? pr.large : pr.small;
        if (splittable(*left)) search.push_back(left);
        if (splittable(*right)) search.push_back(right);
      }
      std::vector<double> parent_score(search.size());
      for (size_t c = 0; c < search.size(); ++c) {
        parent_score[c] = node_score(search[c]->id);
      }
      std::vector<SplitInfo> per_feature(search.size() * static_cast<size_t>(d_));
      pool.parallel_for(static_cast<int64_t>(search.size()) * d_, [&](int64_t t) {
        const NodeWork& c = *search[t / d_];
        best_split_of_feature(c.hist, t % d_, node_g_[c.id], node_h_[c.id], parent_score[t / d_], per_feature[t],
                              bound_lo(c.id), bound_hi(c.id), node_features(c.id));
      });
      for (size_t c = 0; c < search.size(); ++c) {
        SplitInfo best;
        for (int64_t f = 0; f < d_; ++f) {
          const SplitInfo& s = per_feature[c * d_ + f];
          if (s.gain > best.gain) best = s;
        }
        search[c]->best = best;
      }
      std::vector<char> searched(tree.n_nodes(), 0);
      for (NodeWork* c : search) searched[c->id] = 1;
      std::vector<std::unique_ptr<NodeWork>> next;
      for (auto& child : children) {
        if (searched[child->id] && child->best.gain > p_.min_split_gain) {
          next.push_back(std::move(child));
        } else {
          recycle_hist(child->hist);
        }
      }
      open = std::move(next);
    }
  }
  // Per tree: the rows (ascending), their fixed-point pairs gathered in the same order (the
  // hessians only when they differ between rows) into list 0, and the root's sums.
  void start_tree(std::vector<int32_t> rows, const Quantized& g, const Quantized& h, const std::vector<char>& allowed,
                  int64_t* g_root, int64_t* h_root) {
    g_ = &g;
    h_ = &h;
    allowed_ = &allowed;
    rows_[0] = std::move(rows);
    const size_t m = rows_[0].size();
    rows_[1].resize(m);
    for (int k = 0; k < 2; ++k) {
      row_g_[k].resize(m);
      row_h_[k].resize(h.constant ? 0 : m);
    }
    // Gathered in row chunks; the sums are integers (no true sum overflows), any cut gives them.
    const int64_t chunks = (static_cast<int64_t>(m) + kRowChunk - 1) / kRowChunk;
    std::vector<uint64_t> g_part(static_cast<size_t>(chunks), 0), h_part(static_cast<size_t>(chunks), 0);
    const int32_t* list = rows_[0].data();
    int64_t* row_g = row_g_[0].data();
    int64_t* row_h = row_h_[0].data();
    for_chunk_ranges(static_cast<int64_t>(m), [&](int64_t c, int64_t begin, int64_t end) {
      uint64_t gs = 0, hs = 0;
      for (int64_t i = begin; i < end; ++i) {
        row_g[i] = g.q[list[i]];
        gs += static_cast<uint64_t>(row_g[i]);
      }
      if (!h.constant) {
        for (int64_t i = begin; i < end; ++i) {
          row_h[i] = h.q[list[i]];
          hs += static_cast<uint64_t>(row_h[i]);
        }
      }
      g_part[c] = gs;
      h_part[c] = hs;
    });
    uint64_t gs = 0, hs = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      gs += g_part[c];
      hs += h_part[c];
    }
    *g_root = static_cast<int64_t>(gs);
    *h_root = h.constant ? static_cast<int64_t>(m) * h.constant_q : static_cast<int64_t>(hs);
  }

  // Histogram of the rows at positions [begin, end) of the list of nodes at `depth`, the CPU work
  // cut over `pool`.
  void build_hist(int64_t begin, int64_t end, int64_t depth, std::vector<int64_t>& hist, ThreadPool& pool) const {
    const int k = static_cast<int>(depth & 1);
    hb_.build(rows_[k].data() + begin, end - begin, row_g_[k].data() + begin,
              h_->constant ? nullptr : row_h_[k].data() + begin, h_->constant_q, hist, pool);
  }

  // large = parent - small (exact in integers), by feature ranges in parallel on several threads.
  void subtract_hist(const std::vector<int64_t>& parent, const std::vector<int64_t>& small,
                     std::vector<int64_t>& large) const {
    large.resize(parent.size());
    ThreadPool& pool = default_pool();
    const int64_t tasks = std::min<int64_t>(pool.threads(), d_);
    if (tasks <= 1) {
      histogram_subtract(parent.data(), small.data(), d_, large.data());
      return;
    }
    pool.parallel_for(tasks, [&](int64_t t) {
      const int64_t f0 = d_ * t / tasks, f1 = d_ * (t + 1) / tasks;
      const int64_t at = f0 * kHistBins * kHistStats;
      histogram_subtract(parent.data() + at, small.data() + at, f1 - f0, large.data() + at);
    });
  }

  bool splittable(const NodeWork& n) const {
    return (p_.max_depth < 0 || n.depth < p_.max_depth) &&
           n.end - n.begin >= 2 * std::max<int64_t>(1, p_.min_samples_leaf);
  }

  // Histogram buffers are reused between nodes (a fresh vector would be zeroed twice).
  void take_hist(std::vector<int64_t>& h) {
    if (h.empty() && !spare_.empty()) {
      h = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  void recycle_hist(std::vector<int64_t>& h) {
    if (!h.empty()) spare_.push_back(std::move(h));
    h = std::vector<int64_t>();
  }

  // Leaf values: -T(G) / (H + l2) * learning_rate, rounded once to float.
  void set_leaf_values(Tree& tree, const std::vector<int64_t>& node_g, const std::vector<int64_t>& node_h) const {
    for (int64_t i = 0; i < tree.n_nodes(); ++i) {
      if (tree.feature[i] >= 0) continue;
      const double G = static_cast<double>(node_g[i]) * g_->unit;
      const double H = static_cast<double>(node_h[i]) * h_->unit;
      const double denom = H + p_.l2_regularization;
      const double v = denom > 0.0 ? -soft_threshold(G) / denom * p_.learning_rate : 0.0;
      tree.value[i] = static_cast<float>(constrained_ ? node_v_[i] * p_.learning_rate : v);
    }
  }

  // The symmetric level's split: gains summed over the level's nodes in node order.
  SplitInfo best_level_split(const std::vector<std::unique_ptr<NodeWork>>& level, const std::vector<int64_t>& node_g,
                             const std::vector<int64_t>& node_h) const {
    SplitInfo best;
    const size_t m = level.size();
    std::vector<double> parent(m);
    for (size_t j = 0; j < m; ++j) parent[j] = score(node_g[level[j]->id], node_h[level[j]->id]);
    std::vector<int64_t> gl(m), hl(m), nl(m), ntot(m);
    for (int64_t f = 0; f < d_; ++f) {
      if (!(*allowed_)[f]) continue;
      const int64_t nb = static_cast<int64_t>(mapper_.thresholds[f].size()) + 1;
      if (nb < 2) continue;
      bool any_missing = false;
      for (size_t j = 0; j < m; ++j) {
        gl[j] = hl[j] = nl[j] = 0;
        ntot[j] = level[j]->end - level[j]->begin;
        any_missing = any_missing || level[j]->hist[(f * kHistBins + kMissingBin) * kHistStats + 2] > 0;
      }
      for (int64_t b = 0; b + 1 < nb; ++b) {
        for (size_t j = 0; j < m; ++j) {
          const int64_t* cell = level[j]->hist.data() + (f * kHistBins + b) * kHistStats;
          gl[j] += cell[0];
          hl[j] += cell[1];
          nl[j] += cell[2];
        }
        for (int dir = 0; dir < 2; ++dir) {
          const bool miss_left = dir == 1;
          if (miss_left && !any_missing) break;
          double total = 0.0;
          for (size_t j = 0; j < m; ++j) {
            const int64_t* miss = level[j]->hist.data() + (f * kHistBins + kMissingBin) * kHistStats;
            const int64_t G = gl[j] + (miss_left ? miss[0] : 0);
            const int64_t H = hl[j] + (miss_left ? miss[1] : 0);
            const int64_t N = nl[j] + (miss_left ? miss[2] : 0);
            const int64_t gt = node_g[level[j]->id], ht = node_h[level[j]->id];
            if (N < p_.min_samples_leaf || ntot[j] - N < p_.min_samples_leaf || N == 0 || N == ntot[j]) continue;
            if (static_cast<double>(H) * h_->unit < p_.min_child_weight ||
                static_cast<double>(ht - H) * h_->unit < p_.min_child_weight)
              continue;
            total += score(G, H) + score(gt - G, ht - H) - parent[j];
          }
          if (total > best.gain) {
            best.gain = total;
            best.feature = static_cast<int32_t>(f);
            best.bin = static_cast<int32_t>(b);
            best.default_left = miss_left;
          }
        }
      }
    }
    return best;
  }

  double soft_threshold(double G) const {
    const double a = p_.l1_regularization;
    if (G > a) return G - a;
    if (G < -a) return G + a;
    return 0.0;
  }
  // Monotonic constraints: a node's value -T(G) / (H + l2) clipped to [lo, hi], the score of a
  // value (-T(G) v: the unconstrained score where v is not clipped), a node's bounds and score.
  double node_value(int64_t gq, int64_t hq, double lo, double hi) const {
    const double G = soft_threshold(static_cast<double>(gq) * g_->unit);
    const double H = static_cast<double>(hq) * h_->unit + p_.l2_regularization;
    const double v = H > 0.0 ? -G / H : 0.0;
    return std::min(std::max(v, lo), hi);
  }
  double bounded_score(int64_t gq, double v) const {
    return -soft_threshold(static_cast<double>(gq) * g_->unit) * v;
  }
  const char* node_features(int32_t id) const { return groups_.empty() ? nullptr : node_features_[id].data(); }
  double bound_lo(int32_t id) const { return constrained_ ? node_lo_[id] : -kInf; }
  double bound_hi(int32_t id) const { return constrained_ ? node_hi_[id] : kInf; }
  double node_score(int32_t id) const {
    if (!constrained_) return score(node_g_[id], node_h_[id]);
    return bounded_score(node_g_[id], node_value(node_g_[id], node_h_[id], node_lo_[id], node_hi_[id]));
  }
  double score(int64_t gq, int64_t hq) const {
    const double G = soft_threshold(static_cast<double>(gq) * g_->unit);
    const double H = static_cast<double>(hq) * h_->unit + p_.l2_regularization;
    return H > 0.0 ? G * G / H : 0.0;
  }

  // Best split of a node from its histogram: features ascending, bins ascending, missing values
  // first tried on the right, then on the left; a later candidate must be strictly better.
  // On more than one thread the features are searched in parallel and their bests reduced in
  // feature order with the same strict comparison: the result is the sequential scan's.
  SplitInfo best_split(const std::vector<int64_t>& hist, int32_t id, int64_t g_tot, int64_t h_tot) const {
    const double parent = node_score(id);
    const double lo = bound_lo(id), hi = bound_hi(id);
    const char* feats = node_features(id);
    SplitInfo best;
    ThreadPool& pool = default_pool();
    if (pool.threads() == 1) {
      for (int64_t f = 0; f < d_; ++f) best_split_of_feature(hist, f, g_tot, h_tot, parent, best, lo, hi, feats);
      return best;
    }
    std::vector<SplitInfo> per_feature(static_cast<size_t>(d_));
    pool.parallel_for(d_, [&](int64_t f) {
      best_split_of_feature(hist, f, g_tot, h_tot, parent, per_feature[f], lo, hi, feats);
    });
    for (const SplitInfo& s : per_feature) {
      if (s.gain > best.gain) best = s;
    }
    return best;
  }

  // Feature f's candidates, scanned in order into best (replaced only by a strictly larger gain).
  // The gain of a candidate whose left child holds G, H, N of the node's g_tot, h_tot, n_tot, or
  // false when the children break min_samples_leaf / min_child_weight or (mono: the feature's
  // monotonic direction, 0: none) the constraint. With constraints the children's values stay
  // within the node's bounds [lo, hi].
  bool candidate_gain(int64_t G, int64_t H, int64_t N, int64_t g_tot, int64_t h_tot, int64_t n_tot, double parent,
                      double lo, double hi, int8_t mono, double& gain) const {
    if (N < p_.min_samples_leaf || n_tot - N < p_.min_samples_leaf || N == 0 || N == n_tot) return false;
    if (static_cast<double>(H) * h_->unit < p_.min_child_weight ||
        static_cast<double>(h_tot - H) * h_->unit < p_.min_child_weight)
      return false;
    if (constrained_) {
      const double vl = node_value(G, H, lo, hi), vr = node_value(g_tot - G, h_tot - H, lo, hi);
      if ((mono > 0 && vl > vr) || (mono < 0 && vl < vr)) return false;
      gain = bounded_score(G, vl) + bounded_score(g_tot - G, vr) - parent;
    } else {
      gain = score(G, H) + score(g_tot - G, h_tot - H) - parent;
    }
    return true;
  }

  void best_split_of_feature(const std::vector<int64_t>& hist, int64_t f, int64_t g_tot, int64_t h_tot,
                             double parent, SplitInfo& best, double lo, double hi, const char* feats) const {
    if (!(*allowed_)[f] || (feats && !feats[f])) return;
    if (mapper_.is_categorical(f)) {
      best_categorical_split(hist, f, g_tot, h_tot, parent, best, lo, hi);
      return;
    }
    const int64_t nb = static_cast<int64_t>(mapper_.thresholds[f].size()) + 1;
    if (nb < 2) return;
    const int64_t* hf = hist.data() + f * kHistBins * kHistStats;
    const int64_t* miss = hf + kMissingBin * kHistStats;
    int64_t n_tot = 0;
    for (int64_t b = 0; b < nb; ++b) n_tot += hf[b * kHistStats + 2];
    n_tot += miss[2];
    int64_t gl = 0, hl = 0, nl = 0;
    for (int64_t b = 0; b + 1 < nb; ++b) {
      gl += hf[b * kHistStats];
      hl += hf[b * kHistStats + 1];
      nl += hf[b * kHistStats + 2];
      for (int dir = 0; dir < 2; ++dir) {
        const bool miss_left = dir == 1;
        if (miss_left && miss[2] == 0) break;
        const int64_t G = gl + (miss_left ? miss[0] : 0);
        const int64_t H = hl + (miss_left ? miss[1] : 0);
        const int64_t N = nl + (miss_left ? miss[2] : 0);
        double gain = 0.0;
        if (!candidate_gain(G, H, N, g_tot, h_tot, n_tot, parent, lo, hi, constrained_ ? p_.monotonic[f] : 0, gain))
          continue;
        if (gain > best.gain) {
          best.gain = gain;
          best.feature = static_cast<int32_t>(f);
          best.bin = static_cast<int32_t>(b);
          best.categorical = false;  // best may hold an earlier feature's categorical split
          // Without missing values in the node, NaN follows the larger child (ties: left).
          best.default_left = miss[2] > 0 ? miss_left : (N >= n_tot - N);
        }
      }
    }
  }

  // Categorical feature f (hist_gbm.h): the categories of the node with support kMinCatSupport
  // (the missing values as code kMissingBin), sorted by G / (H + kCatSmooth) (binary64 of exact
  // integer sums; ties: lower code); with m of them (none if m < 2), prefixes of up to (m + 1) / 2
  // categories from the low end, then of up to (m + 1) / 2 - 1 from the high end, each scored as a
  // numeric candidate (strictly better wins).
  void best_categorical_split(const std::vector<int64_t>& hist, int64_t f, int64_t g_tot, int64_t h_tot,
                              double parent, SplitInfo& best, double lo, double hi) const {
    const int64_t* hf = hist.data() + f * kHistBins * kHistStats;
    const int64_t* miss = hf + kMissingBin * kHistStats;
    struct Cat {
      int32_t code;
      double key;
    };
    std::vector<Cat> cats;
    int64_t n_tot = miss[2];
    for (int64_t b = 0; b < p_.max_bins; ++b) n_tot += hf[b * kHistStats + 2];
    if (h_tot <= 0) return;  // no hessian to measure support by (scikit-learn keeps no category)
    // Support (scikit-learn's): the category's hessian sum in units of the node's mean hessian,
    // H_c * n / H >= kMinCatSupport, compared exactly on the integer sums (128-bit products). With
    // constant hessians H_c * n / H is the category's row count.
    auto add = [&](int64_t b, const int64_t* cell) {
      if (static_cast<__int128>(cell[1]) * n_tot < static_cast<__int128>(h_tot) * kMinCatSupport) return;
      const double G = static_cast<double>(cell[0]) * g_->unit, H = static_cast<double>(cell[1]) * h_->unit;
      cats.push_back({static_cast<int32_t>(b), G / (H + kCatSmooth)});
    };
    for (int64_t b = 0; b < p_.max_bins; ++b) add(b, hf + b * kHistStats);
    add(kMissingBin, miss);
    if (cats.size() < 2) return;  // one category alone only splits from those below the support
    std::sort(cats.begin(), cats.end(),
              [](const Cat& a, const Cat& b) { return a.key < b.key || (a.key == b.key && a.code < b.code); });
    const int64_t m = static_cast<int64_t>(cats.size());
    for (int dir = 0; dir < 2; ++dir) {
      // scikit-learn's scan: the left set holds at most half of the kept categories, so the
      // categories below the support go to the child with at least the other half.
      const int64_t longest = dir == 0 ? (m + 1) / 2 : (m + 1) / 2 - 1;
      int64_t G = 0, H = 0, N = 0;
      bool miss_in = false;
      for (int64_t i = 0; i < longest; ++i) {
        const int32_t code = cats[dir == 0 ? i : m - 1 - i].code;
        const int64_t* cell = hf + code * kHistStats;
        G += cell[0];
        H += cell[1];
        N += cell[2];
        miss_in = miss_in || code == kMissingBin;
        double gain = 0.0;  // other features' constraints bound the node's values
        if (!candidate_gain(G, H, N, g_tot, h_tot, n_tot, parent, lo, hi, 0, gain)) continue;
        if (gain > best.gain) {
          best.gain = gain;
          best.feature = static_cast<int32_t>(f);
          best.bin = 0;
          best.categorical = true;
          for (uint64_t& w : best.cat_left) w = 0;
          for (int64_t j = 0; j <= i; ++j) {
            const int32_t c = cats[dir == 0 ? j : m - 1 - j].code;
            if (c != kMissingBin) best.cat_left[c / 64] |= uint64_t{1} << (c % 64);
          }
          // Without missing values in the node, NaN follows the larger child (ties: left).
          best.default_left = miss[2] > 0 ? miss_in : (N >= n_tot - N);
        }
      }
    }
  }

  // Stable partition of the positions [begin, end) of the list of nodes at `depth` (and of the
  // gathered pairs) by the split into the same positions of the other list, where the children
  // (depth + 1) live; *gl, *hl receive the left child's sums. Large nodes run blocked on `pool`
  // (row_partition.h).
  int64_t partition(int64_t begin, int64_t end, int64_t depth, const SplitInfo& s, int64_t* gl, int64_t* hl,
                    ThreadPool& pool) {
    uint8_t goes_left[kHistBins];
    for (int64_t b = 0; b < kHistBins; ++b) {
      goes_left[b] = s.categorical ? static_cast<uint8_t>((s.cat_left[b / 64] >> (b % 64)) & 1u) : (b <= s.bin ? 1 : 0);
    }
    goes_left[kMissingBin] = s.default_left ? 1 : 0;
    const bool has_h = !h_->constant;
    const int from = static_cast<int>(depth & 1), to = 1 - from;
    RowPartitionArrays a{rows_[from].data(), row_g_[from].data(), has_h ? row_h_[from].data() : nullptr,
                         rows_[to].data(),   row_g_[to].data(),   has_h ? row_h_[to].data() : nullptr};
    const uint8_t* column = bins_by_column_.data() + static_cast<int64_t>(s.feature) * n_rows_;
    uint64_t gs = 0, hs = 0;
    const int64_t nl = partition_rows(column, goes_left, a, begin, end, &gs, &hs, pool, PartitionTo::scratch);
    *gl = static_cast<int64_t>(gs);
    *hl = has_h ? static_cast<int64_t>(hs) : nl * h_->constant_q;
    return begin + nl;
  }

  const BoostParams& p_;
  const BinMapper& mapper_;
  const std::vector<uint8_t>& bins_;
  int64_t d_;
  const HistogramBuilder& hb_;
  const Quantized* g_ = nullptr;
  const Quantized* h_ = nullptr;
  const std::vector<char>* allowed_ = nullptr;
  // Two row lists with their gathered pairs (row_h_ empty: constant hessians): the nodes at depth
  // t have their rows at their positions in list t % 2, and a partition writes the children into
  // the other list (no copy back).
  std::vector<int32_t> rows_[2];
  std::vector<int64_t> row_g_[2], row_h_[2];
  std::vector<int64_t> node_begin_, node_end_;  // each node's positions (last grown tree)
  std::vector<int64_t> node_depth_;             // each node's depth: its list is node_depth_ % 2
  std::vector<int64_t> node_g_, node_h_;        // each node's sums (grow)
  bool constrained_ = false;                    // a monotonic constraint is set
  std::vector<double> node_lo_, node_hi_, node_v_;  // each node's bounds and value (constrained grow)
  std::vector<std::vector<char>> groups_;              // interaction groups: [group][feature] membership
  std::vector<std::vector<char>> node_groups_, node_features_;  // each node's groups and features
  std::vector<uint8_t> bins_by_column_;          // [d, n]
  int64_t n_rows_ = 0;
  std::vector<std::vector<int64_t>> spare_;
  std::vector<uint64_t> unseen_;  // [d * 4] per categorical feature the codes absent at fit
  ThreadPool serial_pool_;  // one thread: work inside another pool task runs on its caller
};

// Softmax of one row of k raw scores into p (max-shifted, sum in ascending class order).
void softmax_row(const float* raw, int64_t k, float* p) {
  float m = raw[0];
  for (int64_t j = 1; j < k; ++j) m = bl::max(m, raw[j]);
  float s = 0.0f;
  for (int64_t j = 0; j < k; ++j) {
    p[j] = bl::exp(bl::sub(raw[j], m));
    s = bl::add(s, p[j]);
  }
  for (int64_t j = 0; j < k; ++j) p[j] = bl::div(p[j], s);
}

// The initial raw scores; with weights (non-null) the weighted mean / class shares (binary64 sums in
// row order).
std::vector<float> initial_scores(const BoostParams& p, int64_t n, const float* y_value,
                                  const int32_t* y_class, const float* weight) {
  auto w = [&](int64_t i) { return weight ? static_cast<double>(weight[i]) : 1.0; };
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += w(i);
  if (boost_ranking(p.loss)) return {0.0f};  // scores are compared within a query only
  if (p.loss != BoostLoss::squared_error && p.loss != BoostLoss::logistic && p.loss != BoostLoss::softmax) {
    return {regression_initial_score(p, y_value, weight, n)};
  }
  if (p.loss == BoostLoss::squared_error) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += weight ? w(i) * y_value[i] : y_value[i];
    return {static_cast<float>(s / total)};
  }
  const int64_t k = p.loss == BoostLoss::logistic ? 2 : p.n_classes;
  std::vector<double> counts(static_cast<size_t>(k), 0.0);
  for (int64_t i = 0; i < n; ++i) counts[y_class[i]] += w(i);
  auto prior = [&](int64_t c) {
    double q = counts[c] / total;
    return static_cast<float>(std::min(std::max(q, 1e-7), 1.0 - 1e-7));
  };
  if (p.loss == BoostLoss::logistic) {
    float q = prior(1);
    return {bl::sub(bl::log(q), bl::log(bl::sub(1.0f, q)))};
  }
  std::vector<float> base(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c) base[c] = bl::log(prior(c));
  return base;
}

// DART: which earlier iterations iteration `it` drops. Word 0 of Philox (seed, kDartStreamTag | it)
// decides skip_drop, word 1 + j drops iteration j with probability rate_drop; with one_drop and
// nothing dropped, word it + 1 picks one iteration.
std::vector<char> dart_drops(const BoostParams& p, int64_t it) {
  std::vector<char> drop(static_cast<size_t>(it), 0);
  const uint64_t stream = kDartStreamTag | static_cast<uint64_t>(it);
  if (p.skip_drop > 0.0 && uniform_co(random_u32_element(p.seed, stream, 0)) < static_cast<float>(p.skip_drop)) {
    return drop;
  }
  bool any = false;
  for (int64_t j = 0; j < it; ++j) {
    drop[j] = uniform_co(random_u32_element(p.seed, stream, static_cast<uint64_t>(1 + j))) < static_cast<float>(p.rate_drop);
    any = any || drop[j];
  }
  if (p.one_drop && !any) {
    drop[random_below(p.seed, stream, static_cast<uint64_t>(it + 1), static_cast<uint32_t>(it))] = 1;
  }
  return drop;
}

// DART normalization (XGBoost's): with k iterations dropped, normalize_type=tree scales the new
// trees by 1 / (k + lr) and the dropped ones by k / (k + lr); forest scales both by 1 / (1 + lr).
// Weights are float64; each tree's leaf values are its unscaled values times its weight, rounded once.
void dart_rescale(const BoostParams& p, int64_t it, int64_t K, const std::vector<char>& dropped,
                  const std::vector<std::vector<float>>& values, std::vector<double>& weight, std::vector<Tree>& trees) {
  int64_t k_drop = 0;
  for (int64_t j = 0; j < it; ++j) k_drop += dropped.empty() ? 0 : dropped[j];
  const double lr = p.learning_rate / static_cast<double>(K);  // XGBoost: per new tree
  double new_weight = 1.0, drop_factor = 1.0;
  if (k_drop > 0) {
    if (p.normalize_forest) {
      new_weight = drop_factor = 1.0 / (1.0 + lr);
    } else {
      new_weight = 1.0 / (static_cast<double>(k_drop) + lr);
      drop_factor = static_cast<double>(k_drop) / (static_cast<double>(k_drop) + lr);
    }
  }
  for (int64_t k = 0; k < K; ++k) weight.push_back(new_weight);
  auto apply = [&](int64_t t) {
    for (size_t v = 0; v < values[t].size(); ++v) {
      trees[t].value[v] = static_cast<float>(static_cast<double>(values[t][v]) * weight[t]);
    }
  };
  for (int64_t j = 0; j < it; ++j) {
    if (dropped.empty() || !dropped[j]) continue;
    for (int64_t k = 0; k < K; ++k) {
      weight[j * K + k] *= drop_factor;
      apply(j * K + k);
    }
  }
  for (int64_t k = 0; k < K; ++k) apply(it * K + k);
}

}  // namespace

void raw_to_probability(std::vector<float>& raw, int64_t n, int64_t k) {
  if (k == 1) {
    for_row_chunks(n, [&](int64_t i) { raw[i] = bl::sigmoid(raw[i]); });
    return;
  }
  for_row_chunks(n, [&](int64_t i) {
    std::vector<float> p(static_cast<size_t>(k));
    softmax_row(&raw[i * k], k, p.data());
    std::copy(p.begin(), p.end(), raw.begin() + i * k);
  });
}

void check_category_codes(const BoostParams& p, const float* X, int64_t n, int64_t d, const char* row_name) {
  for (int32_t f : p.categorical) {  // codes: NaN or integers in [0, max_bins)
    if (f < 0 || f >= d) continue;    // fit_boosting names such a feature
    for (int64_t i = 0; i < n; ++i) {
      const float x = X[i * d + f];
      BL_CHECK(x != x || (x >= 0.0f && x < static_cast<float>(p.max_bins) && x == std::floor(x)),
               "hist_gradient_boosting: categorical feature ", f, " has value ", x, " at ", row_name, " ", i,
               "; expected NaN or an integer category code in [0, ", p.max_bins, ") (max_bins)");
    }
  }
}

BoostModel fit_boosting(const float* X, int64_t n, int64_t d, const float* y_value,
                        const int32_t* y_class, const BoostParams& p, const float* weight,
                        const BoostValidation* validation) {
  BL_CHECK(n >= 1 && d >= 1, "hist_gradient_boosting: empty data");
  BL_CHECK(n < (int64_t{1} << 31), "hist_gradient_boosting: at most 2^31 - 1 rows");
  BL_CHECK(p.max_bins >= 2 && p.max_bins <= 255, "hist_gradient_boosting: max_bins must be in [2, 255]");
  std::vector<char> is_cat(static_cast<size_t>(d), 0);
  for (int32_t f : p.categorical) {
    BL_CHECK(f >= 0 && f < d, "hist_gradient_boosting: categorical_features names feature ", f, ", expected 0 .. ",
             d - 1);
    BL_CHECK(!is_cat[f], "hist_gradient_boosting: categorical_features names feature ", f, " twice");
    is_cat[f] = 1;
    BL_CHECK(static_cast<int64_t>(p.monotonic.size()) <= f || p.monotonic[f] == 0, "hist_gradient_boosting: feature ", f,
             " is categorical and cannot have a monotonic constraint (monotonic_cst)");
  }
  BL_CHECK(p.categorical.empty() || !p.symmetric,
           "hist_gradient_boosting: categorical_features is not supported with grow_policy=symmetric");
  check_category_codes(p, X, n, d, "row");
  // The validation rows get the same check: an invalid code there would silently take the
  // unseen-category path and bias the early-stopping score.
  if (validation) check_category_codes(p, validation->X, validation->n, d, "validation row");
  const BinMapper mapper = fit_bins(X, n, d, p.max_bins, p.categorical.empty() ? nullptr : &is_cat);
  const std::vector<uint8_t> bins = apply_bins(mapper, X, n, d);
  HistogramBuilder hb(bins, n, d, p.use_cuda);
  BoostModel model;
  const int64_t K = p.loss == BoostLoss::softmax ? p.n_classes : 1;
  model.n_groups = K;
  model.base = initial_scores(p, n, y_value, y_class, weight);
  std::vector<float> raw(static_cast<size_t>(n * K));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < K; ++k) raw[i * K + k] = model.base[k];
  }
  std::vector<std::vector<float>> grad(static_cast<size_t>(K), std::vector<float>(static_cast<size_t>(n)));
  std::vector<std::vector<float>> hess = grad;
  std::vector<float> prob(p.loss != BoostLoss::softmax ? 0 : static_cast<size_t>(n * K));
  std::vector<float> shifted(p.loss == BoostLoss::softmax ? static_cast<size_t>(n * K) : 0);
  const int64_t n_cols = std::max<int64_t>(
      1, std::min<int64_t>(d, static_cast<int64_t>(std::ceil(p.colsample_bytree * static_cast<double>(d)))));
  const bool regression_loss = p.loss != BoostLoss::squared_error && p.loss != BoostLoss::logistic &&
                               p.loss != BoostLoss::softmax && !boost_ranking(p.loss);
  if (boost_ranking(p.loss)) {
    BL_CHECK(p.query_start.size() >= 2 && p.query_start.front() == 0 && p.query_start.back() == n,
             "hist_gradient_boosting: a ranking loss needs query groups covering the ", n, " rows");
    BL_CHECK(!validation || (validation->query_start.size() >= 2 && validation->query_start.front() == 0 &&
                             validation->query_start.back() == validation->n),
             "hist_gradient_boosting: ranking early stopping needs query groups covering the ", validation->n,
             " validation rows");
  }
  std::vector<float> scratch;
  BL_CHECK(p.monotonic.empty() || static_cast<int64_t>(p.monotonic.size()) == d,
           "hist_gradient_boosting: monotonic_cst has ", p.monotonic.size(), " entries, expected one per feature (", d,
           ")");
  bool any_constraint = false;
  for (int8_t c : p.monotonic) any_constraint = any_constraint || c != 0;
  BL_CHECK(!(any_constraint && p.symmetric),
           "hist_gradient_boosting: monotonic_cst is not supported with grow_policy=symmetric");
  BL_CHECK(!(!p.interaction.empty() && p.symmetric),
           "hist_gradient_boosting: interaction_cst is not supported with grow_policy=symmetric");
  for (const auto& g : p.interaction) {
    for (int32_t f : g) {
      BL_CHECK(f >= 0 && f < d, "hist_gradient_boosting: interaction_cst names feature ", f, ", expected 0 .. ", d - 1);
    }
  }
  BL_CHECK(!(any_constraint && p.loss == BoostLoss::softmax),
           "hist_gradient_boosting: monotonic_cst is not supported for multiclass classification");
  // Early stopping: the scores before the first iteration; validation raw scores follow the trees.
  BL_CHECK(!(p.early_stopping && p.dart), "hist_gradient_boosting: early_stopping is not supported with booster=dart");
  std::vector<float> val_raw;
  // Ranking scores the mean NDCG@ndcg_at over the queries (weighted by the mean row weight of each
  // query when the fit has weights); the other losses -(weighted mean loss).
  auto score_of = [&](const float* r, const float* yv, const int32_t* yc, const float* w, int64_t m,
                      const std::vector<int64_t>& qs) {
    return boost_ranking(p.loss) ? mean_query_ndcg(r, yv, qs, p.ndcg_at, w) : boost_score(p, K, r, yv, yc, w, m);
  };
  auto record_scores = [&]() {
    model.train_score.push_back(score_of(raw.data(), y_value, y_class, weight, n, p.query_start));
    if (validation) {
      model.validation_score.push_back(score_of(val_raw.data(), validation->y_value, validation->y_class,
                                                validation->weight, validation->n, validation->query_start));
    }
  };
  if (p.early_stopping) {
    if (validation) {
      val_raw.resize(static_cast<size_t>(validation->n * K));
      for (int64_t i = 0; i < validation->n; ++i) {
        for (int64_t k = 0; k < K; ++k) val_raw[i * K + k] = model.base[k];
      }
    }
    record_scores();
  }
  TreeGrower grower(p, mapper, bins, d, hb);
  Quantized gq, hq;  // buffers reused by every tree
  std::vector<int32_t> split_bin;
  // DART state: per tree its unscaled leaf values, its weight (float64) and every row's leaf.
  std::vector<std::vector<float>> dart_values;
  std::vector<double> dart_weight;
  std::vector<std::vector<int32_t>> dart_leaf;
  std::vector<char> dropped;
  for (int64_t it = 0; it < p.max_iter; ++it) {
    if (p.dart && it > 0) {
      dropped = dart_drops(p, it);
      // Raw scores without the dropped iterations: base + the kept trees in tree order.
      for_row_chunks(n, [&](int64_t i) {
        for (int64_t k = 0; k < K; ++k) {
          float r = model.base[k];
          for (int64_t j = 0; j < it; ++j) {
            if (dropped[j]) continue;
            const Tree& t = model.trees[j * K + k];
            r = bl::add(r, t.value[dart_leaf[j * K + k][i]]);
          }
          raw[i * K + k] = r;
        }
      });
    }
    // Gradients and hessians of the loss at the current raw scores (float32, contract ops; the
    // softmax's exp runs through math_map_cpu and the logistic pass through logistic_gradients,
    // which give bl::exp / bl::sigmoid bits).
    if (p.loss == BoostLoss::softmax) {
      for_row_chunks(n, [&](int64_t i) {  // max-shifted scores
        float m = raw[i * K];
        for (int64_t k = 1; k < K; ++k) m = bl::max(m, raw[i * K + k]);
        for (int64_t k = 0; k < K; ++k) shifted[i * K + k] = bl::sub(raw[i * K + k], m);
      });
      dispatch::math_map(Device::cpu(), MathFn::exp, shifted.data(), prob.data(), n * K);
    }
    if (p.loss == BoostLoss::logistic) {
      logistic_gradients(raw.data(), y_class, n, kMinHessian, grad[0].data(), hess[0].data(), default_pool());
    } else if (boost_ranking(p.loss)) {
      ranking_gradients(p, raw.data(), y_value, grad[0].data(), hess[0].data());
    } else if (regression_loss) {
      regression_gradients(p, raw.data(), y_value, n, grad[0].data(), hess[0].data(), scratch);
    } else for_row_chunks(n, [&](int64_t i) {
      if (p.loss == BoostLoss::squared_error) {
        grad[0][i] = bl::sub(raw[i], y_value[i]);
        hess[0][i] = 1.0f;
      } else {
        float* e = &prob[i * K];
        float s = 0.0f;
        for (int64_t k = 0; k < K; ++k) s = bl::add(s, e[k]);
        for (int64_t k = 0; k < K; ++k) {
          const float pk = bl::div(e[k], s);
          grad[k][i] = bl::sub(pk, y_class[i] == k ? 1.0f : 0.0f);
          hess[k][i] = bl::max(bl::mul(pk, bl::sub(1.0f, pk)), kMinHessian);
        }
      }
    });
    if (weight) for_row_chunks(n, [&](int64_t i) {
      for (int64_t k = 0; k < K; ++k) {
        grad[k][i] = bl::mul(grad[k][i], weight[i]);
        hess[k][i] = bl::mul(hess[k][i], weight[i]);
      }
    });
    std::vector<int32_t> rows;
    if (p.subsample >= 1.0) {
      rows.resize(static_cast<size_t>(n));
      std::iota(rows.begin(), rows.end(), 0);
    } else {
      rows.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        if (uniform_co(random_u32_element(p.seed, kRowStreamTag | static_cast<uint64_t>(it), static_cast<uint64_t>(i))) <
            static_cast<float>(p.subsample)) {
          rows.push_back(static_cast<int32_t>(i));
        }
      }
    }
    if (rows.empty()) rows.push_back(0);
    const bool all_rows = static_cast<int64_t>(rows.size()) == n;
    for (int64_t k = 0; k < K; ++k) {
      std::vector<char> allowed(static_cast<size_t>(d), 1);
      if (n_cols < d) {  // Fisher-Yates over features; the first n_cols are used
        std::vector<int64_t> order(static_cast<size_t>(d));
        for (int64_t f = 0; f < d; ++f) order[f] = f;
        const uint64_t stream = kColumnStreamTag | static_cast<uint64_t>(it * K + k);
        for (int64_t i = d - 1; i > 0; --i) {
          std::swap(order[i], order[random_below(p.seed, stream, static_cast<uint64_t>(i),
                                                 static_cast<uint32_t>(i + 1))]);
        }
        std::fill(allowed.begin(), allowed.end(), 0);
        for (int64_t f = 0; f < n_cols; ++f) allowed[order[f]] = 1;
      }
      quantize(grad[k], rows, n, gq);
      quantize(hess[k], rows, n, hq);
      hb.set_gradients(gq.q, hq.q);
      // The last group's tree takes the row list itself (the others get a copy).
      std::vector<int32_t> tree_rows = k + 1 == K ? std::move(rows) : rows;
      Tree tree = p.symmetric ? grower.grow_symmetric(std::move(tree_rows), gq, hq, allowed, split_bin)
                              : grower.grow(std::move(tree_rows), gq, hq, allowed, split_bin);
      if (boost_updates_leaves(p.loss)) {
        grower.set_leaf_quantiles(tree, raw.data(), y_value, weight, p.loss == BoostLoss::quantile ? p.quantile : 0.5);
      }
      // Training scores follow the tree on the bins (bin <= split bin <=> x <= threshold).
      std::vector<int32_t> leaf_of_row(p.dart ? static_cast<size_t>(n) : 0);
      if (all_rows) {  // every row is in a leaf's row range
        if (p.dart) grower.add_leaf_values(tree, nullptr, K, k, leaf_of_row.data());
        else grower.add_leaf_values(tree, raw.data(), K, k, nullptr);
      } else for_row_chunks(n, [&](int64_t i) {
        int32_t node = 0;
        while (tree.feature[node] >= 0) {
          const uint8_t b = bins[i * d + tree.feature[node]];
          const bool go_left = b == kMissingBin         ? tree.default_left[node] != 0
                               : tree.is_categorical(node) ? tree.goes_left(node, static_cast<float>(b))
                                                           : b <= split_bin[node];
          node = go_left ? tree.left[node] : tree.right[node];
        }
        if (p.dart) leaf_of_row[i] = node;
        else raw[i * K + k] = bl::add(raw[i * K + k], tree.value[node]);
      });
      if (p.dart) {
        dart_values.push_back(tree.value);
        dart_leaf.push_back(std::move(leaf_of_row));
      }
      model.trees.push_back(std::move(tree));
    }
    if (p.dart) dart_rescale(p, it, K, dropped, dart_values, dart_weight, model.trees);
    report_progress("boosting rounds", it + 1, p.max_iter);
    if (p.early_stopping) {
      if (validation) for_row_chunks(validation->n, [&](int64_t i) {
        for (int64_t k = 0; k < K; ++k) {
          const Tree& t = model.trees[it * K + k];
          val_raw[i * K + k] = bl::add(val_raw[i * K + k], t.value[t.leaf_of(validation->X + i * d)]);
        }
      });
      record_scores();
      if (boost_should_stop(validation ? model.validation_score : model.train_score, p.n_iter_no_change, p.tol)) break;
    }
  }
  return model;
}

std::vector<float> boosting_raw(const BoostModel& model, const float* X, int64_t n, int64_t d) {
  const int64_t K = model.n_groups;
  std::vector<float> raw(static_cast<size_t>(n * K));
  // Rows in blocks of whole row chunks, a progress report after each block; every row's sum is the
  // same whatever the block (each row is computed on its own), so the blocks change no bit.
  const int64_t block = 64 * kBoostRowChunk;
  for (int64_t b0 = 0; b0 < n; b0 += block) {
    const int64_t b1 = std::min(n, b0 + block);
    for_row_chunks(b1 - b0, [&](int64_t j) {
      const int64_t i = b0 + j;
      for (int64_t k = 0; k < K; ++k) raw[i * K + k] = model.base[k];
      for (size_t t = 0; t < model.trees.size(); ++t) {
        const Tree& tree = model.trees[t];
        const int64_t k = static_cast<int64_t>(t) % K;
        raw[i * K + k] = bl::add(raw[i * K + k], tree.value[tree.leaf_of(X + i * d)]);
      }
    });
    if (n > block) report_progress("boosting predict rows", b1, n);
  }
  return raw;
}

}  // namespace bl::ml
