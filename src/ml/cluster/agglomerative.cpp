// agglomerative.cpp: agglomerative_clustering, hierarchical clustering without a connectivity
// graph (scikit-learn's AgglomerativeClustering, which builds the tree with scipy's linkage, or its
// own minimum spanning tree for single linkage). Everything runs on the host in binary64, in the
// fixed order below, so the result does not depend on X's device or the thread count.
//
// 1. Distances. X goes to the host; for each pair i < j (condensed, row-major, as scipy's pdist)
//    with x converted exactly to binary64: euclidean sqrt(sum_f (x_if - x_jf)^2), manhattan
//    sum_f |x_if - x_jf|, the sums in feature order from +0. One pool task per row i writes the
//    pairs (i, j > i) only, so the thread count does not reach the bits.
// 2. The merges.
//    ward, complete, average: the nearest-neighbor chain (scipy's nn_chain). Start a chain at the
//    lowest active cluster; extend it by the nearest active cluster of its last element x, scanning
//    the clusters in ascending index with a strict <, starting from the element before x in the
//    chain (so on ties that one wins, else the lowest index); when the nearest is the previous
//    element the two are merged: the lower slot x becomes inactive, the higher slot y holds the new
//    cluster, and for every other active slot i (ascending) D(i, y) becomes the Lance-Williams
//    update of D(i, x), D(i, y), D(x, y) with sizes n_x, n_y, n_i, in binary64 as scipy writes it:
//      complete  max(d_xi, d_yi)
//      average   (n_x d_xi + n_y d_yi) / (n_x + n_y)
//      ward      sqrt(((n_i + n_x) t d_xi d_xi + (n_i + n_y) t d_yi d_yi) - n_i t d_xy d_xy),
//                t = 1 / (n_x + n_y + n_i), products left to right; the radicand is raised to 0
//                where rounding makes it negative (scipy would give NaN there).
//    The merges are then sorted by distance, stably (equal distances keep the chain's order), and
//    numbered by a union-find: merge k makes node n + k and its children are the current roots of
//    its two slots, the smaller first.
//    single (scikit-learn's mst_linkage_core): Prim's tree from row 0; at each step the rows not in
//    the tree, ascending, lower their distance to the tree by the distance to the row just added
//    (strict <) and the first row with the smallest distance joins, giving the edge (row just
//    added, new row). The edges are sorted by distance stably and numbered by a union-find as
//    scikit-learn's single_linkage_label: children (root of the first end, root of the second).
//    Ties: what these orders give (scipy's and scikit-learn's own rules), not a global lowest pair.
// 3. The cut. With distance_threshold, n_clusters_ = 1 + the number of merge distances >=
//    threshold; else n_clusters_ = n_clusters. Labels as scikit-learn's _hc_cut: a heap (Python's
//    heapq on negated node ids) starts with the root; n_clusters_ - 1 times the largest node is
//    replaced by its two children (heappush of the first, heappushpop of the second); the leaves
//    under the node at heap position p get label p.
// predict (an extension; scikit-learn's AgglomerativeClustering has none): a row takes the label
// of its nearest training row under the fit's metric (squared euclidean or manhattan sums in
// binary64, feature order), the lowest index on ties. On the training rows this is the fit labels
// unless two rows coincide with different labels.
// Memory: the condensed distances take n (n - 1) / 2 binary64 values; n is limited to 16384 rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr int64_t kMaxRows = int64_t{1} << 14;

inline int64_t condensed(int64_t n, int64_t i, int64_t j) {
  if (i > j) std::swap(i, j);
  return n * i - i * (i + 1) / 2 + (j - i - 1);
}

// The distance of two host rows in binary64 (step 1): squared euclidean or manhattan sums.
inline double row_distance(const float* a, const float* b, int64_t d, bool manhattan) {
  if (!manhattan) return density_detail::sq_distance(a, b, d);
  double s = 0.0;
  for (int64_t f = 0; f < d; ++f) s += std::fabs(static_cast<double>(a[f]) - static_cast<double>(b[f]));
  return s;
}

std::vector<double> pairwise(const std::vector<float>& x, int64_t n, int64_t d, bool manhattan) {
  std::vector<double> D(static_cast<size_t>(n * (n - 1) / 2));
  default_pool().parallel_for(n, [&](int64_t i) {
    const float* a = x.data() + i * d;
    double* out = D.data() + (n * i - i * (i + 1) / 2);
    for (int64_t j = i + 1; j < n; ++j) {
      const double s = row_distance(a, x.data() + j * d, d, manhattan);
      out[j - i - 1] = manhattan ? s : std::sqrt(s);
    }
  });
  return D;
}

struct Merge {
  int64_t a, b;
  double dist;
};

enum class Linkage { ward, complete, average, single };

// scipy's nn_chain on the condensed D (modified in place): merges in chain order.
std::vector<Merge> nn_chain(std::vector<double>& D, int64_t n, Linkage link) {
  std::vector<int64_t> size(static_cast<size_t>(n), 1), chain(static_cast<size_t>(n));
  std::vector<Merge> out;
  out.reserve(static_cast<size_t>(n - 1));
  int64_t len = 0, y = 0;
  for (int64_t k = 0; k < n - 1; ++k) {
    if (len == 0) {
      len = 1;
      for (int64_t i = 0; i < n; ++i)
        if (size[i] > 0) {
          chain[0] = i;
          break;
        }
    }
    int64_t x = 0;
    double cur = 0.0;
    for (;;) {
      x = chain[len - 1];
      if (len > 1) {
        y = chain[len - 2];
        cur = D[condensed(n, x, y)];
      } else {
        cur = std::numeric_limits<double>::infinity();
      }
      for (int64_t i = 0; i < n; ++i) {
        if (size[i] == 0 || i == x) continue;
        const double dist = D[condensed(n, x, i)];
        if (dist < cur) {
          cur = dist;
          y = i;
        }
      }
      if (len > 1 && y == chain[len - 2]) break;
      chain[len++] = y;
    }
    len -= 2;
    if (x > y) std::swap(x, y);
    const int64_t nx = size[x], ny = size[y];
    out.push_back({x, y, cur});
    size[x] = 0;
    size[y] = nx + ny;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ni = size[i];
      if (ni == 0 || i == y) continue;
      const double dxi = D[condensed(n, i, x)], dyi = D[condensed(n, i, y)];
      double v;
      switch (link) {
        case Linkage::complete:
          v = std::max(dxi, dyi);
          break;
        case Linkage::average:
          v = (static_cast<double>(nx) * dxi + static_cast<double>(ny) * dyi) / static_cast<double>(nx + ny);
          break;
        default: {
          const double t = 1.0 / static_cast<double>(nx + ny + ni);
          const double r = (static_cast<double>(ni + nx) * t * dxi * dxi + static_cast<double>(ni + ny) * t * dyi * dyi) -
                           static_cast<double>(ni) * t * cur * cur;
          v = std::sqrt(std::max(0.0, r));
        }
      }
      D[condensed(n, i, y)] = v;
    }
    report_progress("agglomerative merges", k + 1, n - 1);
  }
  return out;
}

// scikit-learn's mst_linkage_core on the condensed D: edges (row added, new row) in Prim's order.
std::vector<Merge> mst_edges(const std::vector<double>& D, int64_t n) {
  std::vector<char> in_tree(static_cast<size_t>(n), 0);
  std::vector<double> cur(static_cast<size_t>(n), std::numeric_limits<double>::infinity());
  std::vector<Merge> out;
  int64_t node = 0;
  for (int64_t k = 0; k < n - 1; ++k) {
    in_tree[node] = 1;
    double best = std::numeric_limits<double>::infinity();
    int64_t next = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (in_tree[j]) continue;
      const double v = D[condensed(n, node, j)];
      if (v < cur[j]) cur[j] = v;
      if (cur[j] < best) {
        best = cur[j];
        next = j;
      }
    }
    out.push_back({node, next, best});
    node = next;
  }
  return out;
}

// Stable sort by distance, then the union-find numbering (step 2): children [n - 1, 2], distances.
void number_merges(std::vector<Merge> m, int64_t n, bool ordered, std::vector<int64_t>& children,
                   std::vector<double>& dist) {
  std::stable_sort(m.begin(), m.end(), [](const Merge& a, const Merge& b) { return a.dist < b.dist; });
  density_detail::MergeForest forest(n);
  children.assign(static_cast<size_t>(2 * (n - 1)), 0);
  dist.assign(static_cast<size_t>(n - 1), 0.0);
  for (int64_t k = 0; k < n - 1; ++k) {
    int64_t a = forest.find(m[k].a), b = forest.find(m[k].b);
    if (ordered && a > b) std::swap(a, b);
    children[2 * k] = a;
    children[2 * k + 1] = b;
    dist[k] = m[k].dist;
    forest.join(a, b, n + k);
  }
}

// Python's heapq on a list of int64 (step 3).
void sift_down(std::vector<int64_t>& h, size_t start, size_t pos) {
  const int64_t item = h[pos];
  while (pos > start) {
    const size_t parent = (pos - 1) >> 1;
    if (item < h[parent]) {
      h[pos] = h[parent];
      pos = parent;
      continue;
    }
    break;
  }
  h[pos] = item;
}
void sift_up(std::vector<int64_t>& h, size_t pos) {
  const size_t end = h.size(), start = pos;
  const int64_t item = h[pos];
  size_t child = 2 * pos + 1;
  while (child < end) {
    const size_t right = child + 1;
    if (right < end && !(h[child] < h[right])) child = right;
    h[pos] = h[child];
    pos = child;
    child = 2 * pos + 1;
  }
  h[pos] = item;
  sift_down(h, start, pos);
}

std::vector<int64_t> hc_cut(int64_t n_clusters, const std::vector<int64_t>& children, int64_t n) {
  std::vector<int64_t> heap{-(std::max(children[2 * (n - 2)], children[2 * (n - 2) + 1]) + 1)};
  for (int64_t c = 0; c < n_clusters - 1; ++c) {
    const int64_t node = -heap[0] - n;
    heap.push_back(-children[2 * node]);
    sift_down(heap, 0, heap.size() - 1);
    const int64_t item = -children[2 * node + 1];
    if (heap[0] < item) {
      heap[0] = item;
      sift_up(heap, 0);
    }
  }
  std::vector<int64_t> labels(static_cast<size_t>(n), 0), stack;
  for (size_t p = 0; p < heap.size(); ++p) {
    stack.assign(1, -heap[p]);
    while (!stack.empty()) {
      const int64_t v = stack.back();
      stack.pop_back();
      if (v < n) {
        labels[v] = static_cast<int64_t>(p);
      } else {
        stack.push_back(children[2 * (v - n)]);
        stack.push_back(children[2 * (v - n) + 1]);
      }
    }
  }
  return labels;
}

std::string f64_to_hex(const std::vector<double>& v) {
  std::vector<int64_t> bits(v.size());
  if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));
  return i64_to_hex(bits);
}

class AgglomerativeClustering final : public lin::ParamEstimator {
 public:
  AgglomerativeClustering()
      : lin::ParamEstimator("agglomerative_clustering",
                            {{"linkage", K::choice, "ward", 0, {"ward", "complete", "average", "single"}},
                             {"metric", K::choice, "euclidean", 0, {"euclidean", "manhattan"}}}) {}

  // n_clusters and distance_threshold: a number or none, kept apart from the ParamSet for the word.
  Params get_params() const override {
    Params p = params_.all();
    p["n_clusters"] = n_clusters_text_;
    p["distance_threshold"] = threshold_text_;
    return p;
  }
  void set_params(const Params& p) override {
    Params rest = p;
    std::string nc = n_clusters_text_, th = threshold_text_;
    if (auto it = rest.find("n_clusters"); it != rest.end()) {
      if (it->second == "none" || it->second == "None") {
        nc = "none";
      } else {
        const int64_t v = param_int(name_, "n_clusters", it->second);
        BL_CHECK(v >= 1, name_, ": parameter n_clusters=", it->second, ": expected an integer >= 1 or none");
        nc = std::to_string(v);
      }
      rest.erase(it);
    }
    if (auto it = rest.find("distance_threshold"); it != rest.end()) {
      if (it->second == "none" || it->second == "None") {
        th = "none";
      } else {
        const double v = param_double(name_, "distance_threshold", it->second);
        BL_CHECK(std::isfinite(v) && v >= 0.0, name_, ": parameter distance_threshold=", it->second,
                 ": expected a finite number >= 0 or none");
        th = param_text(v);
      }
      rest.erase(it);
    }
    params_.set(rest);
    n_clusters_text_ = nc;
    threshold_text_ = th;
  }

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const int64_t n = X.dim(0), d = X.dim(1);
    const bool has_nc = n_clusters_text_ != "none", has_th = threshold_text_ != "none";
    BL_CHECK(has_nc != has_th, name_, ": exactly one of n_clusters (", n_clusters_text_, ") and distance_threshold (",
             threshold_text_, ") must be set, the other none");
    const std::string& link_text = params_.text("linkage");
    const bool manhattan = params_.text("metric") == "manhattan";
    BL_CHECK(!(link_text == "ward" && manhattan), name_,
             ": linkage=ward needs metric=euclidean, got metric=", params_.text("metric"));
    BL_CHECK(n >= 2, name_, ": needs at least 2 rows, got ", n);
    BL_CHECK(n <= kMaxRows, name_, ": ", n, " rows exceed the limit of ", kMaxRows,
             " (the pairwise distances take n (n - 1) / 2 binary64 values); use fewer rows");
    if (has_nc) {
      const int64_t k = param_int(name_, "n_clusters", n_clusters_text_);
      BL_CHECK(k <= n, name_, ": n_clusters=", k, " exceeds the ", n, " rows (cannot extract more clusters than samples)");
    }
    const Linkage link = link_text == "ward"       ? Linkage::ward
                         : link_text == "complete" ? Linkage::complete
                         : link_text == "average"  ? Linkage::average
                                                   : Linkage::single;
    x_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<double> D = pairwise(x_, n, d, manhattan);
    if (link == Linkage::single) {
      number_merges(mst_edges(D, n), n, false, children_, distances_);
    } else {
      number_merges(nn_chain(D, n, link), n, true, children_, distances_);
    }
    if (has_th) {
      const double th = param_double(name_, "distance_threshold", threshold_text_);
      n_clusters_ = 1 + static_cast<int64_t>(
                            std::count_if(distances_.begin(), distances_.end(), [&](double v) { return v >= th; }));
    } else {
      n_clusters_ = param_int(name_, "n_clusters", n_clusters_text_);
    }
    labels_ = hc_cut(n_clusters_, children_, n);
    n_ = n;
    d_ = d;
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0);
    const bool manhattan = params_.text("metric") == "manhattan";
    std::vector<float> q = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<int64_t> out(static_cast<size_t>(m));
    default_pool().parallel_for(m, [&](int64_t i) {
      const float* a = q.data() + i * d_;
      const auto near = density_detail::nearest_index(
          n_, [&](int64_t j) { return row_distance(a, x_.data() + j * d_, d_, manhattan); });
      out[i] = labels_[near.first];
    });
    return Tensor::from_vector(out, {m}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}, {"n_leaves", n_}});
    state["n_connected_components"] = 1;
    state["n_clusters"] = n_clusters_;
    state["labels"] = labels_;
    state["children"] = children_;
    state["distances_f64"] = f64_to_hex(distances_);
    lin::put_f32(state, "train_rows", x_);
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 2, name_);
    BL_CHECK(n_ <= kMaxRows, name_, ": model state: n_samples ", n_, " exceeds ", kMaxRows);
    // Written for scikit-learn's attributes; without connectivity they are n_samples and 1.
    BL_CHECK(lin::get_int(state, "n_leaves", 1, name_) == n_ && lin::get_int(state, "n_connected_components", 1, name_) == 1,
             name_, ": model state: n_leaves must equal n_samples and n_connected_components must be 1");
    n_clusters_ = lin::get_int(state, "n_clusters", 1, name_);
    BL_CHECK(n_clusters_ <= n_, name_, ": model state: n_clusters exceeds n_samples");
    auto ints = [&](const char* key, size_t size, int64_t lo, int64_t hi) {
      BL_CHECK(state.contains(key) && state[key].is_array() && state[key].size() == size, name_, ": model state: ",
               key, " must be an array of ", size, " integers");
      std::vector<int64_t> v;
      for (const auto& x : state[key]) {
        BL_CHECK(x.is_number_integer(), name_, ": model state: ", key, " must hold integers");
        const int64_t t = x.get<int64_t>();
        BL_CHECK(t >= lo && t < hi, name_, ": model state: ", key, " value ", t, " is out of range");
        v.push_back(t);
      }
      return v;
    };
    labels_ = ints("labels", static_cast<size_t>(n_), 0, n_clusters_);
    children_ = ints("children", static_cast<size_t>(2 * (n_ - 1)), 0, 2 * n_ - 2);
    BL_CHECK(state.contains("distances_f64") && state["distances_f64"].is_string(), name_,
             ": model state: distances_f64 must be a hex string");
    std::vector<int64_t> bits = i64_from_hex(state["distances_f64"].get<std::string>(), "distances_f64");
    BL_CHECK(static_cast<int64_t>(bits.size()) == n_ - 1, name_, ": model state: distances_f64 must have ", n_ - 1,
             " values");
    distances_.resize(bits.size());
    if (!bits.empty()) std::memcpy(distances_.data(), bits.data(), bits.size() * sizeof(double));
    x_ = lin::get_f32(state, "train_rows", n_ * d_, name_);
    fitted_ = true;
  }

 private:
  std::string n_clusters_text_ = "2", threshold_text_ = "none";
  std::vector<float> x_;
  std::vector<int64_t> labels_, children_;
  std::vector<double> distances_;
  int64_t n_ = 0, d_ = 0, n_clusters_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_agglomerative_clustering() { return std::make_unique<AgglomerativeClustering>(); }

}  // namespace bl::ml
