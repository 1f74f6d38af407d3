// weighted_tree.cpp: classification tree on real sample weights (see weighted_tree.h).
#include "ml/ensemble/weighted_tree.h"

#include <algorithm>
#include <limits>

#include "contract/arith.h"
#include "core/error.h"

namespace bl::ml {

namespace {

struct Best {
  double proxy = -std::numeric_limits<double>::infinity();
  int32_t feature = -1;
  float threshold = 0.0f;
};

float midpoint(float a, float b) {
  float m = static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5);
  return (m >= b) ? a : m;
}

}  // namespace

Tree build_weighted_tree(const float* X, int64_t n, int64_t d, const int32_t* y, int64_t k,
                         const std::vector<double>& w, int64_t max_depth, int64_t min_samples_leaf) {
  Tree tree;
  tree.n_values = k;
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) {
    if (w[i] > 0.0) rows.push_back(i);
  }
  BL_CHECK(!rows.empty(), "weighted tree: every sample weight is zero");
  struct Item {
    int32_t node;
    int64_t begin, end, depth;
  };
  std::vector<Item> stack{{tree.add_node(), 0, static_cast<int64_t>(rows.size()), 0}};
  std::vector<uint64_t> keys;
  std::vector<double> total(static_cast<size_t>(k)), left(static_cast<size_t>(k));
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    std::fill(total.begin(), total.end(), 0.0);
    double wsum = 0.0;
    for (int64_t r = it.begin; r < it.end; ++r) {
      total[y[rows[r]]] += w[rows[r]];
      wsum += w[rows[r]];
    }
    int64_t nonzero = 0;
    for (int64_t c = 0; c < k; ++c) {
      tree.value[it.node * k + c] = static_cast<float>(total[c] / wsum);
      nonzero += total[c] > 0.0;
    }
    const int64_t count = it.end - it.begin;
    if ((max_depth >= 0 && it.depth >= max_depth) || nonzero <= 1 || count < 2 * min_samples_leaf) continue;
    Best best;
    for (int64_t f = 0; f < d; ++f) {
      keys.clear();
      for (int64_t r = it.begin; r < it.end; ++r) {
        keys.push_back((static_cast<uint64_t>(total_order_key(X[rows[r] * d + f])) << 32) |
                       static_cast<uint32_t>(rows[r]));
      }
      std::sort(keys.begin(), keys.end());
      std::fill(left.begin(), left.end(), 0.0);
      double wl = 0.0;
      for (int64_t i = 0; i + 1 < count; ++i) {
        const int64_t row = static_cast<uint32_t>(keys[i]);
        left[y[row]] += w[row];
        wl += w[row];
        if (i + 1 < min_samples_leaf) continue;
        if (count - i - 1 < min_samples_leaf) break;
        const float a = X[row * d + f], b = X[static_cast<int64_t>(static_cast<uint32_t>(keys[i + 1])) * d + f];
        if (!(a < b)) continue;
        const double wr = wsum - wl;
        if (wl <= 0.0 || wr <= 0.0) continue;
        double sl = 0.0, sr = 0.0;
        for (int64_t c = 0; c < k; ++c) {
          sl += left[c] * left[c];
          const double rc = total[c] - left[c];
          sr += rc * rc;
        }
        const double proxy = sl / wl + sr / wr;
        if (proxy > best.proxy) {
          best.proxy = proxy;
          best.feature = static_cast<int32_t>(f);
          best.threshold = midpoint(a, b);
        }
      }
    }
    if (best.feature < 0) continue;
    std::vector<int64_t> right;
    int64_t mid = it.begin;
    for (int64_t r = it.begin; r < it.end; ++r) {
      if (X[rows[r] * d + best.feature] <= best.threshold) rows[mid++] = rows[r];
      else right.push_back(rows[r]);
    }
    std::copy(right.begin(), right.end(), rows.begin() + mid);
    const int32_t l = tree.add_node(), rn = tree.add_node();
    tree.feature[it.node] = best.feature;
    tree.threshold[it.node] = best.threshold;
    tree.left[it.node] = l;
    tree.right[it.node] = rn;
    tree.default_left[it.node] = (mid - it.begin) >= (it.end - mid) ? 1 : 0;
    stack.push_back({rn, mid, it.end, it.depth + 1});
    stack.push_back({l, it.begin, mid, it.depth + 1});
  }
  return tree;
}

}  // namespace bl::ml
