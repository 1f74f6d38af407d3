// tree_shap.cpp: exact path-dependent TreeSHAP (see tree_shap.h).
//
// The recursion keeps, for the path from the root to the current node, one entry per distinct
// split feature: its feature, the fraction of the cover that reaches the node when the feature is
// outside the coalition ("zero" fraction), whether the row itself reaches it when the feature is in
// the coalition ("one" fraction, 0 or 1), and the permutation weights: weight[i] is the total weight
// of the coalitions holding i of the path's features, each weighted by |S|! (m - |S| - 1)! / m!.
// Extending the path by one feature updates those weights in place (newest to oldest); unwinding
// removes a feature's factor again, which is how a feature split on twice along a path is merged
// and how each leaf's contribution is split among the path's features.
#include "ml/tree/tree_shap.h"

#include <algorithm>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {

using PathEntry = ShapPathEntry;

// Appends (feature, zero, one) to the path path[0 .. depth) and updates the weights.
void extend(PathEntry* path, int depth, double zero, double one, int32_t feature) {
  path[depth] = {feature, zero, one, depth == 0 ? 1.0 : 0.0};
  const double denom = static_cast<double>(depth + 1);
  for (int i = depth - 1; i >= 0; --i) {
    path[i + 1].weight += one * path[i].weight * static_cast<double>(i + 1) / denom;
    path[i].weight = zero * path[i].weight * static_cast<double>(depth - i) / denom;
  }
}

// Removes entry k from the path path[0 .. depth] (depth: index of its last entry).
void unwind(PathEntry* path, int depth, int k) {
  const double one = path[k].one, zero = path[k].zero;
  const double denom = static_cast<double>(depth + 1);
  double carry = path[depth].weight;
  for (int i = depth - 1; i >= 0; --i) {
    if (one != 0.0) {
      const double old = path[i].weight;
      path[i].weight = carry * denom / (static_cast<double>(i + 1) * one);
      carry = old - path[i].weight * zero * static_cast<double>(depth - i) / denom;
    } else {
      path[i].weight = path[i].weight * denom / (zero * static_cast<double>(depth - i));
    }
  }
  for (int i = k; i < depth; ++i) {
    path[i].feature = path[i + 1].feature;
    path[i].zero = path[i + 1].zero;
    path[i].one = path[i + 1].one;
  }
}

// The sum of the weights the path would have after unwind(path, depth, k), without changing it.
double unwound_sum(const PathEntry* path, int depth, int k) {
  const double one = path[k].one, zero = path[k].zero;
  const double denom = static_cast<double>(depth + 1);
  double carry = path[depth].weight, total = 0.0;
  for (int i = depth - 1; i >= 0; --i) {
    if (one != 0.0) {
      const double w = carry * denom / (static_cast<double>(i + 1) * one);
      total += w;
      carry = path[i].weight - w * zero * static_cast<double>(depth - i) / denom;
    } else {
      total += path[i].weight * denom / (zero * static_cast<double>(depth - i));
    }
  }
  return total;
}

struct Walker {
  const ShapTree& tree;
  const uint8_t* goes_left;
  double* phi;

  // parent: the path of the caller (depth entries); this level's copy starts right after it.
  void recurse(int32_t node, PathEntry* parent, int depth, double zero, double one, int32_t feature) const {
    PathEntry* path = parent + depth;
    std::copy(parent, parent + depth, path);
    extend(path, depth, zero, one, feature);
    const int32_t split = tree.feature[node];
    if (split < 0) {
      const double v = tree.value[node];
      for (int i = 1; i <= depth; ++i) {
        const double w = unwound_sum(path, depth, i);
        phi[path[i].feature] += w * (path[i].one - path[i].zero) * v;
      }
      return;
    }
    const int32_t hot = goes_left[node] ? tree.left[node] : tree.right[node];
    const int32_t cold = goes_left[node] ? tree.right[node] : tree.left[node];
    double in_zero = 1.0, in_one = 1.0;
    int k = 0;
    while (k <= depth && path[k].feature != split) ++k;
    if (k <= depth) {  // the feature is already on the path: merge the two splits
      in_zero = path[k].zero;
      in_one = path[k].one;
      unwind(path, depth, k);
      --depth;
    }
    const double c = tree.cover[node];
    recurse(hot, path, depth + 1, in_zero * (tree.cover[hot] / c), in_one, split);
    const double cold_zero = in_zero * (tree.cover[cold] / c);
    // A branch no coalition reaches (no cover, not the row's) adds exactly zero: skipped.
    if (cold_zero != 0.0) recurse(cold, path, depth + 1, cold_zero, 0.0, split);
  }
};

}  // namespace

void check_shap_tree(const ShapTree& t, int64_t d, const std::string& what) {
  const size_t n = t.feature.size();
  BL_CHECK(n >= 1 && t.left.size() == n && t.right.size() == n && t.cover.size() == n && t.value.size() == n,
           what, ": tree arrays are empty or of different lengths");
  for (size_t i = 0; i < n; ++i) {
    if (t.feature[i] < 0) {
      BL_CHECK(t.cover[i] >= 0.0, what, ": node ", i, " has a negative or NaN cover");
      continue;
    }
    BL_CHECK(t.feature[i] < d, what, ": node ", i, " splits on feature ", t.feature[i], " of ", d);
    BL_CHECK(t.left[i] > static_cast<int64_t>(i) && t.right[i] > static_cast<int64_t>(i) &&
                 static_cast<size_t>(t.left[i]) < n && static_cast<size_t>(t.right[i]) < n && t.left[i] != t.right[i],
             what, ": children of node ", i, " are out of range");
    BL_CHECK(t.cover[i] > 0.0, what, ": node ", i, " has no cover (TreeSHAP needs the training cover of every split)");
  }
}

double shap_expected_value(const ShapTree& t) {
  if (t.feature[0] < 0) return t.value[0];
  const double total = t.cover[0];
  double e = 0.0;
  for (size_t i = 0; i < t.feature.size(); ++i) {
    if (t.feature[i] < 0) e += (t.cover[i] / total) * t.value[i];
  }
  return e;
}

int64_t shap_tree_depth(const ShapTree& tree) {
  const size_t n = tree.feature.size();
  std::vector<int64_t> level(n, 0);
  int64_t depth = 0;
  for (size_t i = 0; i < n; ++i) {  // children come after their parent
    if (tree.feature[i] >= 0) {
      level[tree.left[i]] = level[i] + 1;
      level[tree.right[i]] = level[i] + 1;
      depth = std::max(depth, level[i] + 1);
    }
  }
  return depth;
}

void tree_shap_add(const ShapTree& tree, const uint8_t* goes_left, double* phi,
                   std::vector<ShapPathEntry>& scratch, int64_t depth) {
  if (tree.feature[0] < 0) return;
  if (depth < 0) depth = shap_tree_depth(tree);
  // The recursion at depth k keeps its copy of the path (k + 1 entries) after its caller's, so
  // (D + 1) (D + 2) / 2 entries cover a tree of depth D; one level more is kept as a margin.
  const size_t entries = static_cast<size_t>((depth + 2) * (depth + 3) / 2);
  if (scratch.size() < entries) scratch.resize(entries);
  Walker{tree, goes_left, phi}.recurse(0, scratch.data(), 0, 1.0, 1.0, -1);
}

std::vector<double> ensemble_shap(const std::vector<ShapTree>& trees, int64_t n_groups,
                                  const std::vector<double>& base, int64_t n, int64_t d,
                                  const std::function<void(size_t, int64_t, uint8_t*)>& decide) {
  BL_CHECK(n_groups >= 1 && static_cast<int64_t>(base.size()) == n_groups, "TreeSHAP: one base margin per group");
  const int64_t cols = n_groups * (d + 1);
  std::vector<double> out(static_cast<size_t>(n * cols), 0.0);
  std::vector<double> expected(static_cast<size_t>(n_groups));
  for (int64_t k = 0; k < n_groups; ++k) expected[k] = base[k];
  for (size_t t = 0; t < trees.size(); ++t) expected[t % n_groups] += shap_expected_value(trees[t]);
  size_t max_nodes = 1;
  std::vector<int64_t> depth(trees.size());
  for (size_t t = 0; t < trees.size(); ++t) {
    max_nodes = std::max(max_nodes, trees[t].feature.size());
    depth[t] = shap_tree_depth(trees[t]);
  }
  // Tasks of a fixed number of rows: each row's values depend on that row alone.
  const int64_t rows_per_task = 16;
  const int64_t tasks = (n + rows_per_task - 1) / rows_per_task;
  default_pool().parallel_for(tasks, [&](int64_t task) {
    std::vector<uint8_t> goes_left(max_nodes);
    std::vector<ShapPathEntry> scratch;
    const int64_t end = std::min(n, (task + 1) * rows_per_task);
    for (int64_t i = task * rows_per_task; i < end; ++i) {
      double* row = out.data() + i * cols;
      for (size_t t = 0; t < trees.size(); ++t) {
        decide(t, i, goes_left.data());
        tree_shap_add(trees[t], goes_left.data(), row + (t % n_groups) * (d + 1), scratch, depth[t]);
      }
      for (int64_t k = 0; k < n_groups; ++k) row[k * (d + 1) + d] = expected[k];
    }
  });
  return out;
}

std::vector<double> estimator_shap_values(const Estimator& est, const Tensor& X, int64_t* n_cols) {
  const auto* ex = dynamic_cast<const ShapExplainer*>(&est);
  BL_CHECK(ex != nullptr, est.name(), ": SHAP values are not supported (only the imported tree models ",
           "xgboost_model and lightgbm_model explain their margins)");
  return ex->shap_values(X, n_cols);
}

}  // namespace bl::ml
