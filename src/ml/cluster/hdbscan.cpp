// hdbscan.cpp: hdbscan, hierarchical density-based clustering (scikit-learn's HDBSCAN, metric
// euclidean). Everything runs on the host in binary64 (the distances of density_clustering.h), in
// the fixed order below, so neither X's device nor the thread count reaches the result.
//
// 1. Core distances: the distance of each row to its min_samples-th nearest row, the row itself
//    counted (min_samples none: min_cluster_size).
// 2. The minimum spanning tree of the mutual reachability graph, m(i, j) =
//    max(core_i, core_j, dist(i, j) / alpha), by Prim's walk from row 0 over the dense graph, as
//    scikit-learn's tree-based path walks it: at each step every row j not in the tree, ascending,
//    lowers its best reachability by m(current, j) (strict <, remembering the current row as its
//    source) and the first row with the smallest best reachability joins, giving the edge (its
//    source, it). The edges are then sorted by weight, stably (equal weights keep Prim's order;
//    scikit-learn's sort leaves the order of equal weights unspecified), and merged by a union-find
//    into the single-linkage tree: merge k makes node n + k from the current roots of its two ends.
// 3. The condensed tree (lambda = 1 / weight, +inf for a weight of 0), walked breadth-first from the
//    root as scikit-learn condenses it: a split into two parts of at least min_cluster_size rows
//    makes two new clusters (numbered from n + 1 in the order they appear, the root being n); a
//    smaller part falls out of its cluster point by point (breadth-first order) at that lambda.
//    The stability of a cluster is sum over its rows of (lambda - its birth lambda) * size, summed in
//    the condensed tree's order.
// 4. Selection. eom: clusters in descending number (the root only with allow_single_cluster); a
//    cluster whose children's stabilities add (children in tree order, from 0) to more than its own,
//    or that holds more than max_cluster_size rows, is dropped and takes that sum as its stability,
//    else its descendants are dropped. leaf: the clusters without child clusters. With
//    cluster_selection_epsilon > 0 a selected cluster born at a distance below the epsilon is
//    replaced by its nearest ancestor born above it (the root only with allow_single_cluster);
//    these replacements walk the selected clusters in ascending number (scikit-learn walks a set,
//    whose order is unspecified), a cluster already under a replacement being skipped.
// 5. Labels: the selected clusters in ascending number take 0, 1, ...; a row takes the label of the
//    selected cluster it falls out of or lies under, else -1; with allow_single_cluster and the
//    root the only selection, a row directly under the root keeps the label only when its lambda is
//    >= 1 / cluster_selection_epsilon (epsilon 0: the largest lambda under the root). probabilities_:
//    min(lambda, death) / death, death being the largest lambda of the cluster's last run of rows in
//    the condensed tree (scikit-learn's rule), 1 where death is 0 or lambda is +inf, 0 for noise.
// predict (an extension; scikit-learn's HDBSCAN has none): the label of the nearest training row
// (squared distances in binary64, the lowest index on ties).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml/cluster/density_clustering.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
namespace dd = density_detail;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Edge {
  int64_t a, b;
  double w;
};

// Step 2: Prim's walk on the mutual reachability graph.
std::vector<Edge> prim_edges(const dd::HostRows& r, const std::vector<double>& core, double alpha) {
  const int64_t n = r.n;
  std::vector<char> in_tree(static_cast<size_t>(n), 0);
  std::vector<double> best(static_cast<size_t>(n), kInf), dist;
  std::vector<int64_t> source(static_cast<size_t>(n), 1);
  std::vector<Edge> out;
  int64_t cur = 0;
  for (int64_t k = 0; k + 1 < n; ++k) {
    in_tree[cur] = 1;
    dd::distances_from(r, cur, dist, &in_tree);
    double reach = std::numeric_limits<double>::max();
    int64_t src = 0, next = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (in_tree[j]) continue;
      const double m = std::max(std::max(core[cur], core[j]), dist[j] / alpha);
      if (m < best[j]) {
        best[j] = m;
        source[j] = cur;
        if (m < reach) {
          reach = m;
          src = cur;
          next = j;
        }
      } else if (best[j] < reach) {
        reach = best[j];
        src = source[j];
        next = j;
      }
    }
    out.push_back({src, next, reach});
    cur = next;
    report_progress("hdbscan spanning tree", k + 1, n - 1);
  }
  return out;
}

// The single-linkage tree: left, right, weight and size of merge k (node n + k).
struct Linkage {
  std::vector<int64_t> left, right, size;
  std::vector<double> w;
};

Linkage single_linkage(std::vector<Edge> edges, int64_t n) {
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.w < b.w; });
  dd::MergeForest forest(n);
  std::vector<int64_t> sz(static_cast<size_t>(2 * n - 1), 1);
  Linkage t;
  for (int64_t k = 0; k + 1 < n; ++k) {
    const int64_t a = forest.find(edges[k].a), b = forest.find(edges[k].b);
    t.left.push_back(a);
    t.right.push_back(b);
    t.w.push_back(edges[k].w);
    sz[n + k] = sz[a] + sz[b];
    t.size.push_back(sz[n + k]);
    forest.join(a, b, n + k);
  }
  return t;
}

// The nodes under `root` of the single-linkage tree in breadth-first order (left child first).
void bfs_nodes(const Linkage& t, int64_t n, int64_t root, std::vector<int64_t>& out) {
  out.assign(1, root);
  for (size_t q = 0; q < out.size(); ++q)
    if (out[q] >= n) {
      out.push_back(t.left[out[q] - n]);
      out.push_back(t.right[out[q] - n]);
    }
}

struct Condensed {
  std::vector<int64_t> parent, child, size;
  std::vector<double> lambda;
  void add(int64_t p, int64_t c, double l, int64_t s) {
    parent.push_back(p);
    child.push_back(c);
    lambda.push_back(l);
    size.push_back(s);
  }
};

// Step 3.
Condensed condense(const Linkage& t, int64_t n, int64_t min_cluster_size) {
  const int64_t root = 2 * (n - 1);
  std::vector<int64_t> order, sub, relabel(static_cast<size_t>(root + 1), 0);
  bfs_nodes(t, n, root, order);
  std::vector<char> ignore(static_cast<size_t>(root + 1), 0);
  relabel[root] = n;
  int64_t next_label = n + 1;
  Condensed c;
  auto count = [&](int64_t v) { return v >= n ? t.size[v - n] : int64_t{1}; };
  auto fall_out = [&](int64_t from, int64_t node, double lambda) {
    bfs_nodes(t, n, node, sub);
    for (int64_t s : sub) {
      if (s < n) c.add(relabel[from], s, lambda, 1);
      ignore[s] = 1;
    }
  };
  for (int64_t node : order) {
    if (ignore[node] || node < n) continue;
    const int64_t left = t.left[node - n], right = t.right[node - n];
    const double w = t.w[node - n], lambda = w > 0.0 ? 1.0 / w : kInf;
    const int64_t lc = count(left), rc = count(right);
    if (lc >= min_cluster_size && rc >= min_cluster_size) {
      relabel[left] = next_label++;
      c.add(relabel[node], relabel[left], lambda, lc);
      relabel[right] = next_label++;
      c.add(relabel[node], relabel[right], lambda, rc);
    } else if (lc < min_cluster_size && rc < min_cluster_size) {
      fall_out(node, left, lambda);
      fall_out(node, right, lambda);
    } else if (lc < min_cluster_size) {
      relabel[right] = relabel[node];
      fall_out(node, left, lambda);
    } else {
      relabel[left] = relabel[node];
      fall_out(node, right, lambda);
    }
  }
  return c;
}

class Hdbscan final : public dd::NearestLabelClusterer {
 public:
  Hdbscan()
      : dd::NearestLabelClusterer("hdbscan", {{"allow_single_cluster", K::boolean, "false"},
                                              {"alpha", K::number, "1", 0.0, {}, true},
                                              {"cluster_selection_epsilon", K::number, "0", 0.0},
                                              {"cluster_selection_method", K::choice, "eom", 0, {"eom", "leaf"}},
                                              {"max_cluster_size", K::number_or_word, "none", 1.0, {"none"}},
                                              {"metric", K::choice, "euclidean", 0, {"euclidean"}},
                                              {"min_cluster_size", K::integer, "5", 2},
                                              {"min_samples", K::number_or_word, "none", 1.0, {"none"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    rows_ = dd::host_rows(X);
    const int64_t n = rows_.n, mcs = params_.integer("min_cluster_size");
    BL_CHECK(n >= 2, name_, ": needs more than one sample, got n_samples=", n);
    const int64_t min_samples = params_.text("min_samples") == "none" ? mcs : whole("min_samples");
    BL_CHECK(min_samples <= n, name_, ": min_samples (", min_samples, ") must be at most the number of samples (",
             n, ")");
    const int64_t max_size = params_.text("max_cluster_size") == "none" ? n + 1 : whole("max_cluster_size");
    const double eps = params_.number("cluster_selection_epsilon");
    const bool allow_single = params_.boolean("allow_single_cluster");
    const std::vector<double> core = dd::kth_neighbor_distances(rows_, min_samples);
    const Linkage t = single_linkage(prim_edges(rows_, core, params_.number("alpha")), n);
    const Condensed c = condense(t, n, mcs);
    const int64_t rows = static_cast<int64_t>(c.parent.size());
    const int64_t top = *std::max_element(c.parent.begin(), c.parent.end());
    // Stabilities (step 3) of clusters n..top.
    std::vector<double> birth(static_cast<size_t>(std::max(top, *std::max_element(c.child.begin(), c.child.end())) + 1),
                              std::numeric_limits<double>::quiet_NaN());
    for (int64_t k = 0; k < rows; ++k) birth[c.child[k]] = c.lambda[k];
    birth[n] = 0.0;
    std::vector<double> stab(static_cast<size_t>(top + 1), 0.0);
    for (int64_t k = 0; k < rows; ++k)
      stab[c.parent[k]] += (c.lambda[k] - birth[c.parent[k]]) * static_cast<double>(c.size[k]);
    // The cluster tree: rows of size > 1, children of each cluster in tree order.
    std::vector<std::vector<int64_t>> kids(static_cast<size_t>(top + 1));
    std::vector<int64_t> up(static_cast<size_t>(top + 1), -1), csize(static_cast<size_t>(top + 1), 0);
    for (int64_t k = 0; k < rows; ++k)
      if (c.size[k] > 1) {
        kids[c.parent[k]].push_back(c.child[k]);
        up[c.child[k]] = c.parent[k];
        csize[c.child[k]] = c.size[k];
      }
    for (int64_t ch : kids[n]) csize[n] += csize[ch];
    const bool any_split = !kids[n].empty();
    std::vector<char> sel(static_cast<size_t>(top + 1), 0);
    auto descendants = [&](int64_t v, auto&& fn) {
      std::vector<int64_t> st(kids[v].begin(), kids[v].end());
      while (!st.empty()) {
        const int64_t x = st.back();
        st.pop_back();
        fn(x);
        st.insert(st.end(), kids[x].begin(), kids[x].end());
      }
    };
    const int64_t lowest = allow_single ? n : n + 1;
    // Step 4.
    if (params_.text("cluster_selection_method") == "eom") {
      for (int64_t v = lowest; v <= top; ++v) sel[v] = 1;
      for (int64_t v = top; v >= lowest; --v) {
        double sub = 0.0;
        for (int64_t ch : kids[v]) sub += stab[ch];
        if (sub > stab[v] || csize[v] > max_size) {
          sel[v] = 0;
          stab[v] = sub;
        } else {
          descendants(v, [&](int64_t x) { sel[x] = 0; });
        }
      }
      if (eps != 0.0 && any_split) {
        std::vector<int64_t> chosen;
        for (int64_t v = n; v <= top; ++v)
          if (sel[v]) chosen.push_back(v);
        if (chosen.size() == 1 && chosen[0] == n) {
          if (!allow_single) sel[n] = 0;
        } else {
          epsilon_search(chosen, n, top, eps, allow_single, up, birth, descendants, sel);
        }
      }
    } else {
      std::vector<int64_t> leaves;
      if (any_split)
        for (int64_t v = n + 1; v <= top; ++v)
          if (kids[v].empty()) leaves.push_back(v);
      std::fill(sel.begin(), sel.end(), 0);
      if (eps != 0.0) {
        epsilon_search(leaves, n, top, eps, allow_single, up, birth, descendants, sel);
      } else {
        for (int64_t v : leaves) sel[v] = 1;
      }
    }
    // Step 5.
    std::vector<int64_t> label_of(static_cast<size_t>(top + 1), -1);
    int64_t n_sel = 0;
    for (int64_t v = n; v <= top; ++v)
      if (sel[v]) label_of[v] = n_sel++;
    std::vector<int64_t> owner(static_cast<size_t>(top + 1), -1);  // the selected cluster or root above
    owner[n] = n;
    labels_.assign(static_cast<size_t>(n), -1);
    std::vector<double> point_lambda(static_cast<size_t>(n), 0.0);
    double root_max = -kInf;
    for (int64_t k = 0; k < rows; ++k)
      if (c.parent[k] == n) root_max = std::max(root_max, c.lambda[k]);
    for (int64_t k = 0; k < rows; ++k) {  // parents come before their children
      const int64_t p = c.parent[k], ch = c.child[k];
      const int64_t o = owner[p];
      if (ch >= n) {
        owner[ch] = sel[ch] ? ch : o;
        continue;
      }
      point_lambda[ch] = c.lambda[k];
      if (o != n) {
        labels_[ch] = label_of[o];
      } else if (n_sel == 1 && allow_single && sel[n]) {
        const double th = eps != 0.0 ? 1.0 / eps : root_max;
        if (c.lambda[k] >= th) labels_[ch] = label_of[n];
      }
    }
    // probabilities_: deaths from the last run of each parent's rows.
    std::vector<double> death(static_cast<size_t>(top + 1), 0.0);
    for (int64_t k = 0; k < rows;) {
      int64_t e = k;
      double mx = c.lambda[k];
      while (e + 1 < rows && c.parent[e + 1] == c.parent[k]) mx = std::max(mx, c.lambda[++e]);
      death[c.parent[k]] = mx;
      k = e + 1;
    }
    std::vector<int64_t> cluster_of_label;
    for (int64_t v = n; v <= top; ++v)
      if (sel[v]) cluster_of_label.push_back(v);
    prob_.assign(static_cast<size_t>(n), 0.0);
    for (int64_t k = 0; k < rows; ++k) {
      const int64_t pt = c.child[k];
      if (pt >= n || labels_[pt] < 0) continue;
      const double dmax = death[cluster_of_label[labels_[pt]]], l = c.lambda[k];
      prob_[pt] = (dmax == 0.0 || std::isinf(l)) ? 1.0 : std::min(l, dmax) / dmax;
    }
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override {
    save_labelled_rows(state);
    state["probabilities_f64"] = dd::f64_to_hex(prob_);
  }

  void load_state(const nlohmann::json& state) override {
    int64_t n = 0, d = 0;
    load_labels(state, 2, n, d);
    prob_ = dd::f64_from_state(state, "probabilities_f64", n, name_);
    load_train_rows(state, n, d);
    fitted_ = true;
  }

 private:
  int64_t whole(const char* key) const {
    const double v = params_.number(key);
    BL_CHECK(v == std::floor(v) && v < 9.0e15, name_, ": parameter ", key, "=", params_.text(key),
             ": expected an integer or none");
    return static_cast<int64_t>(v);
  }

  // Step 4's epsilon replacement of the selected clusters `chosen` (ascending).
  template <class Desc>
  static void epsilon_search(const std::vector<int64_t>& chosen, int64_t root, int64_t top, double eps,
                             bool allow_single, const std::vector<int64_t>& up, const std::vector<double>& birth,
                             Desc&& descendants, std::vector<char>& sel) {
    std::vector<char> out(static_cast<size_t>(top + 1), 0), done(static_cast<size_t>(top + 1), 0);
    for (int64_t leaf : chosen) {
      if (1.0 / birth[leaf] >= eps) {
        out[leaf] = 1;
        continue;
      }
      if (done[leaf]) continue;
      int64_t v = leaf, pick = leaf;
      for (;;) {
        const int64_t p = up[v];
        if (p == root) {
          pick = allow_single ? p : v;
          break;
        }
        if (1.0 / birth[p] > eps) {
          pick = p;
          break;
        }
        v = p;
      }
      out[pick] = 1;
      descendants(pick, [&](int64_t x) { done[x] = 1; });
    }
    for (int64_t v = root; v <= top; ++v) sel[v] = out[v];
  }

  std::vector<double> prob_;
};

}  // namespace

std::unique_ptr<Estimator> make_hdbscan() { return std::make_unique<Hdbscan>(); }

}  // namespace bl::ml
