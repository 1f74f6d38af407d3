// cart_builder.cpp: CART growth with a fixed split-search order (see cart_builder.h).
#include "ml/tree/cart_builder.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {

constexpr double kNoSplit = -std::numeric_limits<double>::infinity();

struct Split {
  double proxy = kNoSplit;  // larger is better
  float threshold = 0.0f;
  bool constant = false;
};

// Node totals: weight, class counts or the sum of weighted targets. W is int64_t for integer
// weights (bootstrap counts; exact) and double for real sample weights (sums in a fixed order).
template <typename W>
struct Totals {
  W w = 0;
  std::vector<W> counts;
  double sum = 0.0;
};

template <typename W>
double xlogx(W c) {
  if (c <= 0) return 0.0;
  return static_cast<double>(c) * static_cast<double>(bl::log(static_cast<float>(c)));
}

float midpoint(float a, float b) {
  float m = static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5);
  return (m >= b) ? a : m;
}

template <typename W>
class CartBuilder {
 public:
  CartBuilder(const CartData& data, const CartParams& params) : data_(data), p_(params) {
    classify_ = params.criterion != Criterion::squared_error;
    k_ = classify_ ? data.n_classes : 1;
    tree_.n_values = k_;
  }

  Tree build() {
    rows_.reserve(static_cast<size_t>(data_.n));
    for (int64_t i = 0; i < data_.n; ++i) {
      if (weight(i) > 0) rows_.push_back(static_cast<uint32_t>(i));
    }
    BL_CHECK(!rows_.empty(), "tree: every sample weight is zero");
    scratch_.resize(rows_.size());
    struct Item {
      int32_t node;
      int64_t begin, end, depth;
    };
    std::vector<Item> stack;
    stack.push_back({tree_.add_node(), 0, static_cast<int64_t>(rows_.size()), 0});
    while (!stack.empty()) {
      Item it = stack.back();
      stack.pop_back();
      Totals<W> tot = totals(it.begin, it.end);
      set_value(it.node, tot);
      int64_t n = it.end - it.begin;
      bool leaf = (p_.max_depth >= 0 && it.depth >= p_.max_depth) || n < p_.min_samples_split ||
                  n < 2 * p_.min_samples_leaf || pure(tot, it.begin, it.end);
      if (leaf) continue;
      int32_t feature = -1;
      float threshold = 0.0f;
      find_split(it.node, it.begin, it.end, tot, &feature, &threshold);
      if (feature < 0) continue;
      int64_t mid = partition(it.begin, it.end, feature, threshold);
      if (mid == it.begin || mid == it.end) continue;  // cannot happen for a valid split
      int32_t l = tree_.add_node();
      int32_t r = tree_.add_node();
      tree_.feature[it.node] = feature;
      tree_.threshold[it.node] = threshold;
      tree_.left[it.node] = l;
      tree_.right[it.node] = r;
      // Training data has no NaN: a missing value follows the larger child (ties: left).
      tree_.default_left[it.node] = (mid - it.begin) >= (it.end - mid) ? 1 : 0;
      stack.push_back({r, mid, it.end, it.depth + 1});
      stack.push_back({l, it.begin, mid, it.depth + 1});
    }
    return std::move(tree_);
  }

 private:
  // The row's weight: its bootstrap count (1 without) times its sample weight (real weights only).
  W weight(int64_t row) const {
    const W count = data_.weight ? static_cast<W>(data_.weight[row]) : W{1};
    if constexpr (std::is_same_v<W, double>) {
      return data_.sample_weight ? count * static_cast<double>(data_.sample_weight[row]) : count;
    } else {
      return count;
    }
  }
  float x(int64_t row, int64_t f) const { return data_.X[row * data_.d + f]; }

  Totals<W> totals(int64_t begin, int64_t end) const {
    Totals<W> t;
    t.counts.assign(static_cast<size_t>(k_), 0);
    for (int64_t i = begin; i < end; ++i) {
      uint32_t r = rows_[i];
      W w = weight(r);
      t.w += w;
      if (classify_) t.counts[data_.y_class[r]] += w;
      else t.sum += static_cast<double>(w) * static_cast<double>(data_.y_value[r]);
    }
    return t;
  }

  void set_value(int32_t node, const Totals<W>& t) {
    // The node's cover for TreeSHAP: the weight of the training rows reaching it.
    tree_.cover.resize(static_cast<size_t>(tree_.n_nodes()), 0.0);
    tree_.cover[node] = static_cast<double>(t.w);
    float* v = &tree_.value[static_cast<size_t>(node) * k_];
    if (classify_) {
      for (int64_t c = 0; c < k_; ++c) {
        v[c] = static_cast<float>(static_cast<double>(t.counts[c]) / static_cast<double>(t.w));
      }
    } else {
      v[0] = static_cast<float>(t.sum / static_cast<double>(t.w));
    }
  }

  bool pure(const Totals<W>& t, int64_t begin, int64_t end) const {
    if (classify_) {
      for (W c : t.counts) {
        if (c == t.w) return true;
      }
      return false;
    }
    float first = data_.y_value[rows_[begin]];
    for (int64_t i = begin + 1; i < end; ++i) {
      if (data_.y_value[rows_[i]] != first) return false;
    }
    return true;
  }

  // Impurity proxy of a two-way split from left totals (class counts or sum) and the node's.
  double proxy_classes(const std::vector<W>& cl, W wl, const Totals<W>& tot) const {
    W wr = tot.w - wl;
    if (p_.criterion == Criterion::entropy) {
      double s = -xlogx(wl) - xlogx(wr);
      for (int64_t c = 0; c < k_; ++c) s += xlogx(cl[c]) + xlogx(tot.counts[c] - cl[c]);
      return s;
    }
    W sl = 0, sr = 0;
    for (int64_t c = 0; c < k_; ++c) {
      sl += cl[c] * cl[c];
      W rc = tot.counts[c] - cl[c];
      sr += rc * rc;
    }
    return static_cast<double>(sl) / static_cast<double>(wl) +
           static_cast<double>(sr) / static_cast<double>(wr);
  }
  static double proxy_sum(double sl, W wl, const Totals<W>& tot) {
    double sr = tot.sum - sl;
    W wr = tot.w - wl;
    return sl * sl / static_cast<double>(wl) + sr * sr / static_cast<double>(wr);
  }

  // Best split of one feature over the node's rows.
  Split search_feature(uint64_t node_stream, int64_t f, int64_t begin, int64_t end,
                       const Totals<W>& tot) const {
    Split best;
    const int64_t n = end - begin;
    if (p_.random_thresholds) {
      float lo = x(rows_[begin], f), hi = lo;
      for (int64_t i = begin + 1; i < end; ++i) {
        float v = x(rows_[i], f);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      if (lo == hi) {
        best.constant = true;
        return best;
      }
      float u = uniform_co(random_u32_element(p_.seed, node_stream,
                                              static_cast<uint64_t>(data_.d + f)));
      float t = static_cast<float>(static_cast<double>(lo) +
                                   static_cast<double>(u) * (static_cast<double>(hi) - lo));
      if (!(t >= lo && t < hi)) t = lo;
      std::vector<W> cl(static_cast<size_t>(k_), 0);
      W wl = 0;
      int64_t nl = 0;
      double sl = 0.0;
      for (int64_t i = begin; i < end; ++i) {
        uint32_t r = rows_[i];
        if (x(r, f) <= t) {
          W w = weight(r);
          wl += w;
          ++nl;
          if (classify_) cl[data_.y_class[r]] += w;
          else sl += static_cast<double>(w) * static_cast<double>(data_.y_value[r]);
        }
      }
      if (nl < p_.min_samples_leaf || n - nl < p_.min_samples_leaf) return best;
      best.proxy = classify_ ? proxy_classes(cl, wl, tot) : proxy_sum(sl, wl, tot);
      best.threshold = t;
      return best;
    }
    std::vector<uint64_t> keys(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      uint32_t r = rows_[begin + i];
      keys[i] = (static_cast<uint64_t>(total_order_key(x(r, f))) << 32) | r;
    }
    std::sort(keys.begin(), keys.end());
    auto row_of = [](uint64_t key) { return static_cast<uint32_t>(key); };
    if (x(row_of(keys.front()), f) == x(row_of(keys.back()), f)) {
      best.constant = true;
      return best;
    }
    std::vector<W> cl(static_cast<size_t>(k_), 0);
    W wl = 0, sumsq_l = 0;
    double sl = 0.0;
    const bool gini = p_.criterion == Criterion::gini;
    W sumsq_total = 0;
    if (gini) {
      for (W c : tot.counts) sumsq_total += c * c;
    }
    W sumsq_r = sumsq_total;
    for (int64_t i = 0; i + 1 < n; ++i) {
      uint32_t r = row_of(keys[i]);
      W w = weight(r);
      wl += w;
      if (classify_) {
        int32_t c = data_.y_class[r];
        if (gini) {
          W rc = tot.counts[c] - cl[c];
          sumsq_l += 2 * cl[c] * w + w * w;
          sumsq_r -= 2 * rc * w - w * w;
        }
        cl[c] += w;
      } else {
        sl += static_cast<double>(w) * static_cast<double>(data_.y_value[r]);
      }
      int64_t nl = i + 1;
      if (nl < p_.min_samples_leaf) continue;
      if (n - nl < p_.min_samples_leaf) break;
      float a = x(r, f), b = x(row_of(keys[i + 1]), f);
      if (!(a < b)) continue;
      double proxy;
      if (!classify_) {
        proxy = proxy_sum(sl, wl, tot);
      } else if (gini) {
        proxy = static_cast<double>(sumsq_l) / static_cast<double>(wl) +
                static_cast<double>(sumsq_r) / static_cast<double>(tot.w - wl);
      } else {
        proxy = proxy_classes(cl, wl, tot);
      }
      if (proxy > best.proxy) {
        best.proxy = proxy;
        best.threshold = midpoint(a, b);
      }
    }
    return best;
  }

  void find_split(int32_t node, int64_t begin, int64_t end, const Totals<W>& tot, int32_t* feature,
                  float* threshold) {
    const int64_t d = data_.d;
    const uint64_t node_stream = (p_.stream << 32) | static_cast<uint32_t>(node);
    const bool sample = p_.max_features > 0 && p_.max_features < d;
    std::vector<int64_t> order(static_cast<size_t>(d));
    for (int64_t f = 0; f < d; ++f) order[f] = f;
    if (sample) {  // Fisher-Yates, word i of the node's stream for position i
      for (int64_t i = d - 1; i > 0; --i) {
        int64_t j = random_below(p_.seed, node_stream, static_cast<uint64_t>(i),
                                 static_cast<uint32_t>(i + 1));
        std::swap(order[i], order[j]);
      }
    }
    const int64_t want = sample ? p_.max_features : d;
    const int64_t n = end - begin;
    double best_proxy = kNoSplit;
    int64_t found = 0, next = 0;
    while (found < want && next < d) {
      int64_t batch = std::min(want - found, d - next);
      std::vector<Split> res(static_cast<size_t>(batch));
      auto task = [&](int64_t t) { res[t] = search_feature(node_stream, order[next + t], begin, end, tot); };
      if (p_.parallel && batch > 1 && n * batch >= (int64_t{1} << 15)) {
        default_pool().parallel_for(batch, task);
      } else {
        for (int64_t t = 0; t < batch; ++t) task(t);
      }
      for (int64_t t = 0; t < batch; ++t) {
        if (res[t].constant) continue;
        ++found;
        if (res[t].proxy > best_proxy) {
          best_proxy = res[t].proxy;
          *feature = static_cast<int32_t>(order[next + t]);
          *threshold = res[t].threshold;
        }
      }
      next += batch;
    }
  }

  int64_t partition(int64_t begin, int64_t end, int32_t f, float t) {
    int64_t nl = 0, nr = 0;
    const int64_t n = end - begin;
    for (int64_t i = begin; i < end; ++i) {
      uint32_t r = rows_[i];
      if (x(r, f) <= t) rows_[begin + nl++] = r;
      else scratch_[nr++] = r;
    }
    std::copy(scratch_.begin(), scratch_.begin() + nr, rows_.begin() + begin + nl);
    (void)n;
    return begin + nl;
  }

  const CartData& data_;
  CartParams p_;
  bool classify_ = true;
  int64_t k_ = 1;
  Tree tree_;
  std::vector<uint32_t> rows_, scratch_;
};

}  // namespace

Tree build_cart(const CartData& data, const CartParams& params) {
  BL_CHECK(data.n >= 1 && data.d >= 1, "tree: empty data");
  BL_CHECK(data.n < (int64_t{1} << 31), "tree: at most 2^31 - 1 rows are supported");
  if (data.sample_weight) return CartBuilder<double>(data, params).build();
  return CartBuilder<int64_t>(data, params).build();
}

Criterion criterion_from_name(const std::string& est, const std::string& name) {
  if (name == "gini") return Criterion::gini;
  if (name == "entropy" || name == "log_loss") return Criterion::entropy;
  if (name == "squared_error") return Criterion::squared_error;
  throw Error(est + ": parameter criterion=" + name +
              ": expected gini, entropy, log_loss or squared_error");
}

const char* criterion_name(Criterion c) {
  switch (c) {
    case Criterion::gini: return "gini";
    case Criterion::entropy: return "entropy";
    default: return "squared_error";
  }
}

}  // namespace bl::ml
