// birch.cpp: birch, clustering through a clustering-feature tree (scikit-learn's Birch). The tree
// is built on the host in binary64, row by row in order, so neither X's device nor the thread count
// reaches the result.
//
// 1. The tree. A subcluster holds n, the linear sum LS, the square sum SS, its centroid and the
//    centroid's squared norm (sums over features in order from +0). A row enters at the root: in
//    each node the subcluster with the smallest -2 c.x + |c|^2 (the first on ties) is followed down
//    to a leaf, where the row merges into it when the merged radius^2 = SS'/n' - |LS'/n'|^2
//    (centroid formed as (1 / n') LS') is <= threshold^2, else becomes a new subcluster. A node with
//    more than branching_factor subclusters splits: the farthest pair of its centroids (squared
//    distances, the first in row-major order) seeds two nodes, every subcluster going to the seed
//    strictly nearer to it (ties to the second seed; the first seed to itself), each new node's
//    parent entry summing its subclusters (centroid LS / n); the parent's entry is replaced by the
//    first and the second appended, and the split climbs while parents overflow; a root split makes
//    a new root. On a way down without a split the entries passed take the row's sums. These are
//    scikit-learn's rules; its floating-point rounding (BLAS dot products) can differ, so rows
//    within rounding of a threshold or a tie may go their own way.
// 2. subcluster_centers_: the leaves' centroids, leaves from left to right (split leaves replaced
//    in place by their two halves).
// 3. Global step. n_clusters none: each subcluster its own cluster. An integer: the project's
//    agglomerative_clustering (ward) on the centers (rounded to binary32) with that many clusters;
//    fewer subclusters than n_clusters: each its own, with a warning (scikit-learn's
//    ConvergenceWarning). labels_ = predict(X).
// predict: the label of the nearest subcluster center (squared binary64 distances, the first on
// ties). transform: the euclidean distances to the subcluster centers (binary64, rounded once).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
namespace dd = density_detail;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t f = 0; f < a.size(); ++f) s += a[f] * b[f];
  return s;
}

struct Sub {
  int64_t n = 0;
  std::vector<double> ls, centroid;
  double ss = 0.0, sqn = 0.0;
  int64_t child = -1;

  // Adds another subcluster's sums (a parent entry): centroid LS / n.
  void update(const Sub& o) {
    if (ls.empty()) ls.assign(o.ls.size(), 0.0);
    n += o.n;
    for (size_t f = 0; f < ls.size(); ++f) ls[f] += o.ls[f];
    ss += o.ss;
    centroid.resize(ls.size());
    for (size_t f = 0; f < ls.size(); ++f) centroid[f] = ls[f] / static_cast<double>(n);
    sqn = dot(centroid, centroid);
  }
};

struct Node {
  bool leaf = true;
  std::vector<Sub> subs;
  int64_t prev = -1, next = -1;
};

class Tree {
 public:
  Tree(double threshold, int64_t branching) : t2_(threshold * threshold), bf_(branching) {
    nodes_.push_back(Node{});
  }

  void insert_row(const float* x, int64_t d) {
    Sub s;
    s.n = 1;
    s.ls.resize(static_cast<size_t>(d));
    for (int64_t f = 0; f < d; ++f) s.ls[f] = static_cast<double>(x[f]);
    s.centroid = s.ls;
    s.ss = s.sqn = dot(s.ls, s.ls);
    if (insert(root_, s)) {
      auto [a, b] = split(root_);
      Node r;
      r.leaf = false;
      r.subs = {a, b};
      nodes_.push_back(std::move(r));
      root_ = static_cast<int64_t>(nodes_.size()) - 1;
    }
  }

  // The leaves' centroids, leaves from left to right.
  std::vector<double> centers(int64_t& k) const {
    std::vector<double> out;
    k = 0;
    for (int64_t l = first_leaf_; l >= 0; l = nodes_[l].next)
      for (const Sub& s : nodes_[l].subs) {
        out.insert(out.end(), s.centroid.begin(), s.centroid.end());
        ++k;
      }
    return out;
  }

 private:
  // Inserts s under node id; true when the node now overflows.
  bool insert(int64_t id, const Sub& s) {
    if (nodes_[id].subs.empty()) {
      nodes_[id].subs.push_back(s);
      return false;
    }
    int64_t best = 0;
    double best_v = 0.0;
    for (size_t k = 0; k < nodes_[id].subs.size(); ++k) {
      const Sub& c = nodes_[id].subs[k];
      const double v = dot(c.centroid, s.centroid) * -2.0 + c.sqn;
      if (k == 0 || v < best_v) best_v = v, best = static_cast<int64_t>(k);
    }
    const int64_t child = nodes_[id].subs[best].child;
    if (child >= 0) {
      if (!insert(child, s)) {
        nodes_[id].subs[best].update(s);
        return false;
      }
      auto [a, b] = split(child);
      nodes_[id].subs[best] = std::move(a);
      nodes_[id].subs.push_back(std::move(b));
      return static_cast<int64_t>(nodes_[id].subs.size()) > bf_;
    }
    if (merge(nodes_[id].subs[best], s)) return false;
    nodes_[id].subs.push_back(s);
    return static_cast<int64_t>(nodes_[id].subs.size()) > bf_;
  }

  // The merged sums go to scratch vectors first and are swapped in when the merge is taken.
  bool merge(Sub& c, const Sub& s) {
    const int64_t n = c.n + s.n;
    const double ss = c.ss + s.ss, inv = 1.0 / static_cast<double>(n);
    ls_.resize(c.ls.size());
    cen_.resize(c.ls.size());
    for (size_t f = 0; f < ls_.size(); ++f) {
      ls_[f] = c.ls[f] + s.ls[f];
      cen_[f] = inv * ls_[f];
    }
    const double sqn = dot(cen_, cen_);
    if (!(ss / static_cast<double>(n) - sqn <= t2_)) return false;
    c.n = n;
    c.ss = ss;
    c.ls.swap(ls_);
    c.centroid.swap(cen_);
    c.sqn = sqn;
    return true;
  }

  // Splits node id into two new nodes; returns their parent entries.
  std::pair<Sub, Sub> split(int64_t id) {
    const bool leaf = nodes_[id].leaf;
    const int64_t n1 = static_cast<int64_t>(nodes_.size()), n2 = n1 + 1;
    nodes_.push_back(Node{});
    nodes_.push_back(Node{});
    nodes_[n1].leaf = nodes_[n2].leaf = leaf;
    if (leaf) {
      const int64_t prev = nodes_[id].prev, next = nodes_[id].next;
      nodes_[n1].prev = prev;
      if (prev >= 0) nodes_[prev].next = n1;
      else first_leaf_ = n1;
      nodes_[n1].next = n2;
      nodes_[n2].prev = n1;
      nodes_[n2].next = next;
      if (next >= 0) nodes_[next].prev = n2;
    }
    const std::vector<Sub> subs = std::move(nodes_[id].subs);
    nodes_[id].subs.clear();
    const size_t m = subs.size();
    std::vector<double> dist(m * m, 0.0);
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < m; ++j)
        if (i != j)
          dist[i * m + j] = dd::sq_distance(subs[i].centroid.data(), subs[j].centroid.data(),
                                            static_cast<int64_t>(subs[i].centroid.size()));
    const size_t far = static_cast<size_t>(std::max_element(dist.begin(), dist.end()) - dist.begin());
    const size_t r = far / m, c = far % m;
    Sub a, b;
    a.child = n1;
    b.child = n2;
    for (size_t k = 0; k < m; ++k) {
      const bool first = k == r || dist[r * m + k] < dist[c * m + k];
      (first ? a : b).update(subs[k]);
      nodes_[first ? n1 : n2].subs.push_back(subs[k]);
    }
    return {std::move(a), std::move(b)};
  }

  double t2_;
  int64_t bf_;
  std::vector<double> ls_, cen_;
  std::vector<Node> nodes_;
  int64_t root_ = 0, first_leaf_ = 0;
};

class Birch final : public lin::ParamEstimator {
 public:
  Birch()
      : lin::ParamEstimator("birch", {{"branching_factor", K::integer, "50", 2},
                                      {"compute_labels", K::boolean, "true"},
                                      {"n_clusters", K::number_or_word, "3", 1.0, {"none"}},
                                      {"threshold", K::number, "0.5", 0.0, {}, true}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const std::string& nc_text = params_.text("n_clusters");
    int64_t nc = 0;
    if (nc_text != "none") {
      const double v = params_.number("n_clusters");
      BL_CHECK(v == std::floor(v) && v < 1e9, name_, ": parameter n_clusters=", nc_text,
               ": expected an integer >= 1 or none");
      nc = static_cast<int64_t>(v);
    }
    const dd::HostRows rows = dd::host_rows(X);
    d_ = rows.d;
    Tree tree(params_.number("threshold"), params_.integer("branching_factor"));
    for (int64_t i = 0; i < rows.n; ++i) {
      tree.insert_row(rows.row(i), rows.d);
      if ((i + 1) % 1024 == 0 || i + 1 == rows.n) report_progress("birch tree", i + 1, rows.n);
    }
    centers_ = tree.centers(k_);
    sub_labels_.resize(static_cast<size_t>(k_));
    for (int64_t i = 0; i < k_; ++i) sub_labels_[i] = i;
    if (nc > 0 && k_ < nc) {
      report_warning(name_ + ": the number of subclusters found (" + std::to_string(k_) + ") is less than n_clusters=" +
                     std::to_string(nc) + "; decrease the threshold");
    } else if (nc == 1) {
      std::fill(sub_labels_.begin(), sub_labels_.end(), 0);
    } else if (nc > 1) {
      std::vector<float> c32(centers_.begin(), centers_.end());
      auto agg = make_estimator("agglomerative_clustering", {{"n_clusters", std::to_string(nc)}});
      agg->fit(Tensor::from_vector(c32, {k_, d_}));
      nlohmann::json st;
      agg->save_state(st);
      sub_labels_ = st["labels"].get<std::vector<int64_t>>();
    }
    labels_.clear();
    if (params_.boolean("compute_labels")) labels_ = nearest(rows);
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    return Tensor::from_vector(nearest(dd::host_rows(X)), {X.dim(0)}, X.device());
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const dd::HostRows q = dd::host_rows(X);
    std::vector<float> out(static_cast<size_t>(q.n * k_));
    default_pool().parallel_for(q.n, [&](int64_t i) {
      for (int64_t j = 0; j < k_; ++j) out[i * k_ + j] = static_cast<float>(std::sqrt(sq(q.row(i), j)));
    });
    return Tensor::from_vector(out, {q.n, k_}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_subclusters", k_},
                          {"n_samples", static_cast<int64_t>(labels_.size())}});
    state["labels"] = labels_;
    state["subcluster_labels"] = sub_labels_;
    state["subcluster_centers_f64"] = dd::f64_to_hex(centers_);
    lin::put_f32(state, "subcluster_centers", std::vector<float>(centers_.begin(), centers_.end()));
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_subclusters", 1, name_);
    BL_CHECK(k_ <= (int64_t{1} << 40) / d_, name_, ": model state: n_subclusters x n_features is too large");
    sub_labels_ = dd::ints_from_state(state, "subcluster_labels", k_, 0, k_, name_);
    const int64_t n = lin::get_int(state, "n_samples", 1, name_);
    labels_ = dd::ints_from_state(state, "labels", n, 0, k_, name_);
    centers_ = dd::f64_from_state(state, "subcluster_centers_f64", k_ * d_, name_);
    // The binary32 copy Python reads as subcluster_centers_: present, of the right size, and the
    // rounding of the binary64 centers.
    const std::vector<float> c32 = lin::get_f32(state, "subcluster_centers", k_ * d_, name_);
    for (int64_t i = 0; i < k_ * d_; ++i)
      BL_CHECK(c32[i] == static_cast<float>(centers_[i]), name_,
               ": model state: subcluster_centers does not match subcluster_centers_f64 at ", i);
    fitted_ = true;
  }

 private:
  // The squared distance of x to subcluster center j.
  double sq(const float* x, int64_t j) const { return dd::sq_distance(x, centers_.data() + j * d_, d_); }

  std::vector<int64_t> nearest(const dd::HostRows& q) const {
    std::vector<int64_t> out(static_cast<size_t>(q.n));
    default_pool().parallel_for(q.n, [&](int64_t i) {
      const float* x = q.row(i);
      out[i] = sub_labels_[dd::nearest_index(k_, [&](int64_t j) { return sq(x, j); }).first];
    });
    return out;
  }

  std::vector<double> centers_;
  std::vector<int64_t> labels_, sub_labels_;
  int64_t d_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_birch() { return std::make_unique<Birch>(); }

}  // namespace bl::ml
