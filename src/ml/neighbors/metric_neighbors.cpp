// metric_neighbors.cpp: see metric_neighbors.h.
#include "ml/neighbors/metric_neighbors.h"

#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/matmul_packed.h"
#include "ml/cluster/distances.h"
#include "ml/host_math.h"
#include "ml/neighbors/kd_tree.h"

namespace bl::ml {

namespace {

double pow64(double x, double p) { return x == 0.0 ? 0.0 : exp64(p * log64(x)); }

double sq_norm64(const float* v, int64_t d) {
  double s = 0.0;
  for (int64_t a = 0; a < d; ++a) s += static_cast<double>(v[a]) * static_cast<double>(v[a]);
  return s;
}

// qq, tt: the squared norms of q and t (cosine only).
double distance64(const float* q, const float* t, int64_t d, Metric metric, double p, double qq, double tt) {
  switch (metric) {
    case Metric::manhattan: {
      double s = 0.0;
      for (int64_t a = 0; a < d; ++a) s += std::fabs(static_cast<double>(q[a]) - static_cast<double>(t[a]));
      return s;
    }
    case Metric::chebyshev: {
      double s = 0.0;
      for (int64_t a = 0; a < d; ++a) s = std::max(s, std::fabs(static_cast<double>(q[a]) - static_cast<double>(t[a])));
      return s;
    }
    case Metric::minkowski: {
      double s = 0.0;
      for (int64_t a = 0; a < d; ++a) s += pow64(std::fabs(static_cast<double>(q[a]) - static_cast<double>(t[a])), p);
      return s == 0.0 ? 0.0 : exp64(log64(s) / p);
    }
    case Metric::cosine: {
      double dot = 0.0;
      for (int64_t a = 0; a < d; ++a) dot += static_cast<double>(q[a]) * static_cast<double>(t[a]);
      if (qq == 0.0 || tt == 0.0) return 1.0;
      const double c = 1.0 - dot / (std::sqrt(qq) * std::sqrt(tt));
      return std::min(2.0, std::max(0.0, c));
    }
    default: {  // haversine
      const double lat_q = q[0], lat_t = t[0];
      const double s_lat = sin64(0.5 * (lat_q - lat_t)), s_lon = sin64(0.5 * (static_cast<double>(q[1]) - t[1]));
      const double h = s_lat * s_lat + cos64(lat_q) * cos64(lat_t) * (s_lon * s_lon);
      return 2.0 * asin64(std::sqrt(std::min(1.0, h)));
    }
  }
}

}  // namespace

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = {"minkowski", "euclidean", "manhattan", "chebyshev", "cosine",
                                                 "haversine"};
  return names;
}

Metric metric_of(const std::string& est, const std::string& name, double p, int64_t d) {
  if (name == "minkowski") {
    BL_CHECK(p >= 1.0 && std::isfinite(p), est, ": parameter p=", p, ": expected a finite number >= 1");
    if (p == 2.0) return Metric::euclidean;
    if (p == 1.0) return Metric::manhattan;
    return Metric::minkowski;
  }
  if (name == "manhattan") return Metric::manhattan;
  if (name == "chebyshev") return Metric::chebyshev;
  if (name == "cosine") return Metric::cosine;
  if (name == "haversine") {
    BL_CHECK(d <= 0 || d == 2, est, ": metric=haversine needs 2 features (latitude, longitude in radians), got ", d);
    return Metric::haversine;
  }
  return Metric::euclidean;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = {"auto", "brute", "kd_tree", "ball_tree"};
  return names;
}

NeighborAlgorithm algorithm_of(const std::string& name) {
  if (name == "brute") return NeighborAlgorithm::brute;
  if (name == "kd_tree") return NeighborAlgorithm::kd_tree;
  if (name == "ball_tree") return NeighborAlgorithm::ball_tree;
  return NeighborAlgorithm::automatic;
}

std::vector<lin::ParamSpec> with_search_specs(std::vector<lin::ParamSpec> specs) {
  specs.push_back({"algorithm", lin::ParamSpec::Kind::choice, "auto", 0, algorithm_names()});
  specs.push_back({"leaf_size", lin::ParamSpec::Kind::integer, "30", 1});
  return specs;
}

NeighborSearch search_of(const lin::ParamSet& params) {
  return {algorithm_of(params.text("algorithm")), params.integer("leaf_size")};
}

NeighborLists euclidean_sq_neighbors(const Tensor& X, const std::vector<float>& train, int64_t n, int64_t d,
                                     int64_t k, const std::string& est, const NeighborSearch& search) {
  BL_CHECK(k >= 1 && k <= n, est, ": n_neighbors=", k, " is more than the ", n, " training rows");
  const int64_t m = X.dim(0);
  bool tree = search.algorithm == NeighborAlgorithm::kd_tree || search.algorithm == NeighborAlgorithm::ball_tree;
  if (search.algorithm == NeighborAlgorithm::automatic)
    tree = X.device().is_cpu() && d <= kAutoKdMaxDims && n >= kAutoKdMinRows && k < n / 2;
  NeighborLists lists;
  if (tree) {
    // The norms as the brute force takes them (row_sq_norms on the host; the same bits anywhere).
    Tensor Q = X.to(Device::cpu()).contiguous();
    std::vector<float> qq = row_sq_norms(Q).to_vector<float>();
    std::vector<float> tt = row_sq_norms(Tensor::from_vector(train, {n, d})).to_vector<float>();
    KdTree kd(train.data(), n, d, search.leaf_size);
    lists = kd.search(Q.data<float>(), m, qq.data(), tt.data(), k);
  } else {
    Tensor T = Tensor::from_vector(train, {n, d}, X.device());
    std::vector<float> tt = row_sq_norms(T).to(Device::cpu()).to_vector<float>();
    // The fused host pass is the default GEMM profile's product; the exact-integer profile takes the
    // Tensor matmul on every device (docs/contract.md, section 4.1).
    if (X.device().is_cpu() && gemm_profile() == GemmProfile::contract) {
      Tensor Q = X.contiguous();
      std::vector<float> qq = row_sq_norms(Q).to_vector<float>();
      PackedMatrix packed = matmul_pack_b_cpu(train.data(), d, n, d, true);
      lists = nearest_rows_cpu(Q.data<float>(), m, qq.data(), packed, tt.data(), k);
    } else {
      lists = nearest_rows_gemm(X, T, tt, k);
    }
  }
  report_progress(est + " neighbors", m, m);
  return lists;
}

NeighborLists metric_neighbors(const Tensor& X, const std::vector<float>& train, int64_t n, int64_t d, int64_t k,
                               Metric metric, double p, const std::string& est, const NeighborSearch& search) {
  BL_CHECK(k >= 1 && k <= n, est, ": n_neighbors=", k, " is more than the ", n, " training rows");
  const int64_t m = X.dim(0);
  NeighborLists lists;
  if (metric == Metric::euclidean) {
    lists = euclidean_sq_neighbors(X, train, n, d, k, est, search);
    for (float& v : lists.dist) v = bl::sqrt(v);
    return lists;
  }
  const std::vector<float> q = X.to(Device::cpu()).contiguous().to_vector<float>();
  lists.k = k;
  lists.idx.assign(static_cast<size_t>(m * k), 0);
  lists.dist.assign(static_cast<size_t>(m * k), 0.0f);
  std::vector<double> tt(metric == Metric::cosine ? static_cast<size_t>(n) : 0);
  for (size_t j = 0; j < tt.size(); ++j) tt[j] = sq_norm64(&train[j * d], d);
  default_pool().parallel_for(m, [&](int64_t i) {
    const double qq = metric == Metric::cosine ? sq_norm64(&q[i * d], d) : 0.0;
    std::vector<double> best(static_cast<size_t>(k));
    int64_t* idx = &lists.idx[i * k];
    int64_t filled = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double dd = distance64(&q[i * d], &train[j * d], d, metric, p, qq, tt.empty() ? 0.0 : tt[j]);
      if (filled == k && !(dd < best[k - 1])) continue;
      int64_t pos = filled < k ? filled++ : k - 1;
      while (pos > 0 && dd < best[pos - 1]) {
        best[pos] = best[pos - 1];
        idx[pos] = idx[pos - 1];
        --pos;
      }
      best[pos] = dd;
      idx[pos] = j;
    }
    for (int64_t r = 0; r < k; ++r) lists.dist[i * k + r] = static_cast<float>(best[r]);
  });
  report_progress(est + " neighbors", m, m);
  return lists;
}

}  // namespace bl::ml
