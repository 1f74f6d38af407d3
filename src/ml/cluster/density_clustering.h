// density_clustering.h: the host-side helpers of the cluster family's exact host clusterers
// (optics, hdbscan, affinity_propagation, birch; mean_shift, agglomerative_clustering and
// spectral_clustering use the distance and nearest-row pieces, agglomerative_clustering also the
// merge-tree union-find, defined here), defined in optics.cpp, internal to the library and its
// tests.
//
// Distances. Rows are copied to the host as binary32 and converted exactly to binary64; the
// euclidean distance of rows a and b is sqrt(sum_f (x_af - x_bf)^2), the sum in feature order from
// +0, every operation a correctly rounded binary64 add, sub, mul or sqrt. Each distance is computed
// by one task on its own, so neither the thread count nor the device reaches the bits.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "ml/linear/common.h"

namespace bl::ml {

namespace density_detail {

// Host rows x [n, d] (row-major binary32). host_rows also fills xd (the rows in binary64) and
// panel: the rows in blocks of four (the last block padded with the last row), feature-major inside
// a block, panel[(b d + f) 4 + u] = x[4 b + u, f], so that four distances run in vector lanes.
struct HostRows {
  std::vector<float> x;
  std::vector<double> xd, panel;
  int64_t n = 0, d = 0;
  const float* row(int64_t i) const { return x.data() + i * d; }
};

HostRows host_rows(const Tensor& X);

// sum_f (a_f - b_f)^2 in binary64 (binary32 entries widened exactly), feature order from +0.
template <class A, class B>
inline double sq_distance(const A* a, const B* b, int64_t d) {
  double s = 0.0;
  for (int64_t f = 0; f < d; ++f) {
    const double t = static_cast<double>(a[f]) - static_cast<double>(b[f]);
    s += t * t;
  }
  return s;
}

// The lowest j in [0, k) with the smallest dist(j) (0 when none is below +inf) and that value.
template <class Dist>
inline std::pair<int64_t, double> nearest_index(int64_t k, Dist&& dist) {
  double best = std::numeric_limits<double>::infinity();
  int64_t arg = 0;
  for (int64_t j = 0; j < k; ++j) {
    const double v = dist(j);
    if (v < best) {
      best = v;
      arg = j;
    }
  }
  return {arg, best};
}

// sq_distance of a to the four rows b[0..3] at once (four independent sums, each in feature order:
// the same bits as four sq_distance calls, in a form the compiler can vectorize).
inline void sq_distance4(const float* a, const float* const b[4], int64_t d, double out[4]) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (int64_t f = 0; f < d; ++f) {
    const double x = static_cast<double>(a[f]);
    const double t0 = x - static_cast<double>(b[0][f]), t1 = x - static_cast<double>(b[1][f]);
    const double t2 = x - static_cast<double>(b[2][f]), t3 = x - static_cast<double>(b[3][f]);
    s0 += t0 * t0;
    s1 += t1 * t1;
    s2 += t2 * t2;
    s3 += t3 * t3;
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// sq_distance of the binary64 row a to the four rows of a panel block (the same bits as
// sq_distance: each lane sums its squared differences in feature order).
inline void sq_distance_panel(const double* a, const double* p, int64_t d, double out[4]) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  for (int64_t f = 0; f < d; ++f)
    for (int u = 0; u < 4; ++u) {
      const double t = a[f] - p[f * 4 + u];
      s[u] += t * t;
    }
  for (int u = 0; u < 4; ++u) out[u] = s[u];
}

// out[j] = the euclidean distance of row i to row j, for every j in [0, n) with !skip[j] (skip
// null: every j; where skip[j], out[j] may be left as it is or set). Pool tasks over blocks of j,
// each value computed alone.
void distances_from(const HostRows& r, int64_t i, std::vector<double>& out, const std::vector<char>* skip = nullptr);

// The distance of each row to its k-th nearest row, the row itself counted first (k = 1 gives 0):
// the k-th smallest squared distance of the row's n values, then its sqrt. One pool task per row.
std::vector<double> kth_neighbor_distances(const HostRows& r, int64_t k);

// For each row of X [m, d]: labels[j] of the training row j with the smallest squared distance
// (the lowest j on ties). One pool task per query row.
std::vector<int64_t> nearest_row_labels(const HostRows& train, const std::vector<int64_t>& labels, const Tensor& X);

// A clusterer that keeps its training rows and their labels, and whose predict (an extension: the
// scikit-learn twins have none) gives each row of X the label of its nearest training row
// (nearest_row_labels): optics, hdbscan and spectral_clustering.
class NearestLabelClusterer : public lin::ParamEstimator {
 public:
  using lin::ParamEstimator::ParamEstimator;
  Tensor predict(const Tensor& X) const override;

 protected:
  // Model state: n_features, n_samples, labels (in [-1, n_samples)) and train_rows.
  void save_labelled_rows(nlohmann::json& state) const;
  // Reads n_features (d), n_samples (n >= min_n, n x d at most 2^40) and labels_; the subclass
  // reads its own fields next, then load_train_rows fills rows_.
  void load_labels(const nlohmann::json& state, int64_t min_n, int64_t& n, int64_t& d);
  void load_train_rows(const nlohmann::json& state, int64_t n, int64_t d);

  HostRows rows_;
  std::vector<int64_t> labels_;
};

// The union-find of a merge tree over n points (agglomerative_clustering, hdbscan's single
// linkage): nodes 0..n-1 are the points, merge k makes node n + k the parent of the two roots it
// joins. find returns a node's root and points every node on the walked path at it.
class MergeForest {
 public:
  explicit MergeForest(int64_t n) : parent_(static_cast<size_t>(2 * n - 1), -1) {}
  int64_t find(int64_t v) {
    int64_t root = v;
    while (parent_[root] != -1) root = parent_[root];
    while (v != root) {
      const int64_t p = parent_[v];
      parent_[v] = root;
      v = p;
    }
    return root;
  }
  void join(int64_t a, int64_t b, int64_t node) { parent_[a] = parent_[b] = node; }

 private:
  std::vector<int64_t> parent_;
};

// x rounded to 15 decimals as numpy's around: rint(x * 1e15) / 1e15 (ties to even; inf stays inf).
double round_15_decimals(double x);

// binary64 vectors in model files: hex of their little-endian bytes.
std::string f64_to_hex(const std::vector<double>& v);
std::vector<double> f64_from_state(const nlohmann::json& state, const std::string& key, int64_t size,
                                   const std::string& est);
// An array of `size` integers in [lo, hi) (size < 0: any length).
std::vector<int64_t> ints_from_state(const nlohmann::json& state, const std::string& key, int64_t size, int64_t lo,
                                     int64_t hi, const std::string& est);

// A size parameter given as an integer >= 2 or as a fraction in (0, 1] of the n rows (value <= 1):
// the fraction becomes max(2, floor(value * n)). Throws when the result exceeds n.
int64_t size_or_fraction(double value, int64_t n, const std::string& est, const std::string& key,
                         const std::string& text);

}  // namespace density_detail

}  // namespace bl::ml
