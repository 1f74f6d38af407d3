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
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/boosting/boosting_estimators.h"

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

std::vector<double> own_trees_shap(const std::vector<Tree>& trees, int64_t n_groups, const std::vector<double>& base,
                                   double divisor, const Tensor& X, int64_t d, const std::string& what) {
  BL_CHECK(!trees.empty(), what, ": SHAP values need a fitted model");
  std::vector<ShapTree> shap;
  std::vector<size_t> source;  // the tree each ShapTree comes from
  for (size_t t = 0; t < trees.size(); ++t) {
    const Tree& tree = trees[t];
    const size_t m = static_cast<size_t>(tree.n_nodes());
    BL_CHECK(tree.cover.size() == m, what, ": tree ", t, " has no training cover (the model file was written ",
             "before bitlearn recorded it); refit the model to get SHAP values");
    for (int64_t c = 0; c < tree.n_values; ++c) {
      ShapTree s;
      s.feature = tree.feature;
      s.left = tree.left;
      s.right = tree.right;
      s.cover = tree.cover;
      s.value.assign(m, 0.0);
      for (size_t i = 0; i < m; ++i) {
        if (tree.feature[i] < 0) s.value[i] = static_cast<double>(tree.value[i * tree.n_values + c]) / divisor;
      }
      check_shap_tree(s, d, what + ": tree " + std::to_string(t));
      shap.push_back(std::move(s));
      source.push_back(t);
    }
  }
  BL_CHECK(shap.size() % static_cast<size_t>(n_groups) == 0, what, ": ", shap.size(),
           " tree outputs do not divide into ", n_groups, " groups");
  Tensor hx = host_f32(X);
  const float* px = hx.data<float>();
  const int64_t n = hx.dim(0);
  return ensemble_shap(shap, n_groups, base, n, d, [&](size_t s, int64_t i, uint8_t* left) {
    const Tree& tree = trees[source[s]];
    const float* row = px + i * d;
    for (int64_t node = 0; node < tree.n_nodes(); ++node) {
      if (tree.feature[node] < 0) continue;
      const float x = row[tree.feature[node]];
      left[node] = tree.goes_left(static_cast<int32_t>(node), x) ? 1 : 0;
    }
  });
}

std::vector<double> estimator_shap_values(const Estimator& est, const Tensor& X, int64_t* n_cols) {
  if (const auto* ex = dynamic_cast<const ShapExplainer*>(&est)) return ex->shap_values(X, n_cols);
  const std::string what = est.name();
  if (what.rfind("hist_gradient_boosting_", 0) == 0) {
    // The raw margin is base + the sum of the trees (float32 in predict); it is read from the
    // model state, which holds exactly what predict uses.
    BL_CHECK(est.fitted(), what, ": SHAP values before fit");
    nlohmann::json state;
    est.save_state(state);
    BL_CHECK(state.contains("n_features") && state["n_features"].is_number_integer(), what,
             ": SHAP values need the model state's n_features");
    const int64_t d = state["n_features"].get<int64_t>();
    const BoostModel model = load_boost_model(state, d, what);
    check_X(what, X, /*allow_nan=*/true);
    BL_CHECK(X.dim(1) == d, what, ": X has ", X.dim(1), " features, the model was fitted on ", d);
    *n_cols = model.n_groups * (d + 1);
    const std::vector<double> base(model.base.begin(), model.base.end());
    return own_trees_shap(model.trees, model.n_groups, base, 1.0, X, d, what);
  }
  throw Error(what + ": SHAP values are not supported (the tree models explain their margins: decision and extra "
              "trees, random forests, extra trees ensembles, hist_gradient_boosting_*, xgboost_model and "
              "lightgbm_model)");
}

}  // namespace bl::ml
