// metric_neighbors.h: the k nearest training rows under a distance metric, shared by
// kneighbors_classifier, kneighbors_regressor and nearest_neighbors.
//
//   euclidean (also minkowski with p = 2): nearest_rows.h (the squared distances of
//     ml/cluster/distances.h, fused on the CPU or GEMM on the device, the same bits); the distance
//     reported is bl::sqrt of the binary32 squared distance.
//   manhattan (minkowski p = 1), chebyshev, minkowski (p >= 1), cosine, haversine: on the host in
//     binary64 from the binary32 rows, features in order:
//       manhattan  sum |q_a - t_a|;     chebyshev  max |q_a - t_a|;
//       minkowski  (sum |q_a - t_a|^p)^(1/p), the powers as exp64(p log64 |.|) and the root as
//                  exp64(log64(s) / p) (ml/host_math.h; a zero difference adds 0);
//       cosine     1 - (q.t) / (sqrt(q.q) sqrt(t.t)), clipped to [0, 2]; 1 when either norm is 0;
//       haversine  2 asin(sqrt(min(1, sin^2(dlat/2) + cos(lat_q) cos(lat_t) sin^2(dlon/2)))) with
//                  column 0 the latitude and column 1 the longitude in radians (sin64, cos64,
//                  asin64 of ml/host_math.h);
//     each query's list keeps the k smallest binary64 distances (a row enters only below the
//     current k-th, so equal distances keep the lower training index), rounded once to binary32.
// One task per query, training rows in ascending index: the same bits at every thread count and
// on every device (the queries are read to the host for the host metrics).
//
// The search (scikit-learn's algorithm and leaf_size parameters) never changes a bit: brute scans
// every training row as above; kd_tree (and ball_tree, which runs the same kd-tree) searches the
// euclidean metric with the exact kd-tree of kd_tree.h on the host (the queries are read to the
// host), the other metrics by brute force; auto takes the kd-tree for the euclidean metric on CPU
// queries when d <= kAutoKdMaxDims, n >= kAutoKdMinRows and k < n / 2, else brute force.
#pragma once

#include <string>
#include <vector>

#include "bitlearn/tensor.h"
#include "ml/linear/common.h"
#include "ml/neighbors/nearest_rows.h"

namespace bl::ml {

enum class Metric { euclidean, manhattan, chebyshev, minkowski, cosine, haversine };

enum class NeighborAlgorithm { automatic, brute, kd_tree, ball_tree };

struct NeighborSearch {
  NeighborAlgorithm algorithm = NeighborAlgorithm::brute;
  int64_t leaf_size = 30;
};

constexpr int64_t kAutoKdMaxDims = 6;
constexpr int64_t kAutoKdMinRows = 2048;

// The names accepted by the algorithm parameter ("auto" first) and the value of one.
const std::vector<std::string>& algorithm_names();
NeighborAlgorithm algorithm_of(const std::string& name);

// The algorithm ("auto") and leaf_size (30, >= 1) parameters appended to specs, and their values.
std::vector<lin::ParamSpec> with_search_specs(std::vector<lin::ParamSpec> specs);
NeighborSearch search_of(const lin::ParamSet& params);

// The names accepted by the metric parameter, "minkowski" (with p) first.
const std::vector<std::string>& metric_names();

// The metric of a parameter pair (minkowski with p = 2 is euclidean, p = 1 manhattan); throws
// naming est unless p >= 1 and haversine has 2 features (d, when known: > 0).
Metric metric_of(const std::string& est, const std::string& name, double p, int64_t d);

// The k nearest rows of train [n, d] (host) for the rows of X (any device) with their distances
// (not squared); needs 1 <= k <= n.
NeighborLists metric_neighbors(const Tensor& X, const std::vector<float>& train, int64_t n, int64_t d, int64_t k,
                               Metric metric, double p, const std::string& est, const NeighborSearch& search = {});

// The euclidean case alone with the squared distances (the brute force of nearest_rows.h or the
// kd-tree, by search).
NeighborLists euclidean_sq_neighbors(const Tensor& X, const std::vector<float>& train, int64_t n, int64_t d,
                                     int64_t k, const std::string& est, const NeighborSearch& search = {});

}  // namespace bl::ml
