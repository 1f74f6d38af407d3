// isomap.cpp: isomap (scikit-learn's Isomap), kernel PCA of the geodesic distances of the
// k-nearest-neighbors graph.
//
// All in binary64 on the host (at most 4096 rows). Fit: the Euclidean distances of the rows (sums
// over the features in ascending order, then sqrt); each row's n_neighbors nearest other rows
// (ascending distance, lower index first among equals) give an undirected weighted graph; its
// connected components, if more than one, are joined as scikit-learn joins them (each pair of
// components by an edge between their closest rows). Geodesic distances G by Dijkstra from every
// row (a binary heap of (distance, row), one task per source row; path_method=auto or D) or by
// Floyd-Warshall (path_method=FW: intermediate rows in ascending order, one task per row each step);
// G is made symmetric from its lower triangle (row i's source). K = -G^2 / 2 is centered with its
// column means c, row means and grand mean g and decomposed by top_eigen64 (partial_eigen64.h: block
// Lanczos for n >= 256 and n_components <= n / 8, else symmetric_eigen64; each eigenvector's
// entry of largest magnitude positive, as scikit-learn's svd_flip); embedding = u_t sqrt(max(lambda_t,
// 0)). transform(Y): each row's n_neighbors nearest training rows m, G_Y[j] = min_m (|y - x_m| +
// G[m, j]); K_Y = -G_Y^2 / 2 centered with c, its own row mean and g, times u_t / sqrt(lambda_t).
// The model file keeps the training rows and the eigenvectors; load_state rebuilds G from the rows
// with the same code (the same bits).
#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/decomposition/partial_eigen64.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/linear/common.h"
#include "ml/manifold/neighbor_graph.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr int64_t kMaxSamples = 4096;

// Euclidean distances from row r of a [m, d] to every row of b [n, d] (binary64, sums in order).
void distances_to(const std::vector<double>& a, int64_t r, const std::vector<double>& b, int64_t n, int64_t d,
                  double* out) {
  for (int64_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (int64_t f = 0; f < d; ++f) {
      const double v = a[r * d + f] - b[j * d + f];
      s += v * v;
    }
    out[j] = std::sqrt(s);
  }
}

class Isomap final : public lin::ParamEstimator {
 public:
  Isomap()
      : lin::ParamEstimator("isomap", {{"n_components", K::integer, "2", 1},
                                       {"n_neighbors", K::integer, "5", 1},
                                       {"path_method", K::choice, "auto", 0, {"auto", "D", "FW"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t nn = params_.integer("n_neighbors"), k = params_.integer("n_components");
    BL_CHECK(n >= 2, name_, ": X needs at least 2 rows, got n_samples=", n);
    BL_CHECK(nn < n, name_, ": n_neighbors=", nn, " must be below n_samples=", n);
    BL_CHECK(k <= n, name_, ": n_components=", k, " must be at most n_samples=", n);
    BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need a ", n, " x ", n,
             " geodesic distance matrix on the host; at most ", kMaxSamples, " rows");
    n_ = n;
    d_ = d;
    nn_ = nn;
    x_fit_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    geodesics();
    std::vector<double> km(static_cast<size_t>(n * n));
    for (size_t i = 0; i < km.size(); ++i) km[i] = -0.5 * (geo_[i] * geo_[i]);
    // km is exactly symmetric, so its row means are its column means.
    const std::vector<double> c = dec::column_means(km, n, n);
    const double g = dec::mean64(c);
    dec::center_lower(km, n, c, c, g);
    SymmetricEigen64 e = top_eigen64(km, n, k, "isomap");
    k_ = k;
    embedding_.resize(static_cast<size_t>(n * k));
    alphas_.assign(static_cast<size_t>(k * n), 0.0f);
    eigenvalues_.resize(static_cast<size_t>(k));
    for (int64_t t = 0; t < k; ++t) {
      const double lam = std::max(e.values[t], 0.0), s = std::sqrt(lam);
      eigenvalues_[t] = static_cast<float>(lam);
      for (int64_t i = 0; i < n; ++i) {
        embedding_[i * k + t] = static_cast<float>(e.vectors[t * n + i] * s);
        if (s > 0.0) alphas_[t * n + i] = static_cast<float>(e.vectors[t * n + i] / s);
      }
    }
    col_means_.assign(c.begin(), c.end());
    grand_mean_ = g;
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const int64_t m = X.dim(0), n = n_, k = k_;
    const std::vector<double> xh = dec::to_host64(X), train(x_fit_.begin(), x_fit_.end());
    std::vector<float> out(static_cast<size_t>(m * k));
    default_pool().parallel_for(m, [&](int64_t r) {
      std::vector<double> dist(static_cast<size_t>(n)), kr(static_cast<size_t>(n));
      distances_to(xh, r, train, n, d_, dist.data());
      const std::vector<int64_t> nb = graph::k_nearest(dist.data(), n, nn_, -1);
      double mean = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        double gmin = dist[nb[0]] + geo_[nb[0] * n + j];
        for (size_t q = 1; q < nb.size(); ++q) gmin = std::min(gmin, dist[nb[q]] + geo_[nb[q] * n + j]);
        kr[j] = -0.5 * (gmin * gmin);
        mean += kr[j];
      }
      mean /= static_cast<double>(n);
      for (int64_t t = 0; t < k; ++t) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j) s += (((kr[j] - col_means_[j]) - mean) + grand_mean_) * alphas_[t * n + j];
        out[r * k + t] = static_cast<float>(s);
      }
    });
    return Tensor::from_vector(out, {m, k}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_embedding_sizes(state, {d_, n_, k_});
    lin::put_f32s(state, {{"training_rows", x_fit_}, {"embedding", embedding_}, {"eigenvalues", eigenvalues_},
                          {"dual_vectors", alphas_}});
  }
  void load_state(const nlohmann::json& state) override {
    const dec::EmbeddingSizes sizes = dec::get_embedding_sizes(state, name_, kMaxSamples);
    d_ = sizes.d;
    n_ = sizes.n;
    k_ = sizes.k;
    nn_ = params_.integer("n_neighbors");
    BL_CHECK(nn_ < n_, name_, ": model state: n_neighbors=", nn_, " must be below n_samples=", n_);
    x_fit_ = lin::get_f32(state, "training_rows", n_ * d_, name_);
    embedding_ = lin::get_f32(state, "embedding", n_ * k_, name_);
    eigenvalues_ = lin::get_f32(state, "eigenvalues", k_, name_);
    alphas_ = lin::get_f32(state, "dual_vectors", k_ * n_, name_);
    for (float v : x_fit_) BL_CHECK(std::isfinite(v), name_, ": model state: training_rows holds a non-finite value");
    geodesics();
    // The training column means and grand mean of K follow from G.
    col_means_.assign(static_cast<size_t>(n_), 0.0);
    for (int64_t i = 0; i < n_; ++i)
      for (int64_t j = 0; j < n_; ++j) col_means_[j] += -0.5 * (geo_[i * n_ + j] * geo_[i * n_ + j]);
    grand_mean_ = 0.0;
    for (int64_t j = 0; j < n_; ++j) {
      col_means_[j] /= static_cast<double>(n_);
      grand_mean_ += col_means_[j];
    }
    grand_mean_ /= static_cast<double>(n_);
    fitted_ = true;
  }

 private:
  // geo_ [n, n]: the geodesic distances of the neighbors graph of x_fit_ (components joined).
  void geodesics() {
    const int64_t n = n_, d = d_, nn = nn_;
    const std::vector<double> x(x_fit_.begin(), x_fit_.end());
    std::vector<double> dist(static_cast<size_t>(n * n));
    std::vector<std::vector<int64_t>> nb(static_cast<size_t>(n));
    default_pool().parallel_for(n, [&](int64_t i) {
      distances_to(x, i, x, n, d, &dist[i * n]);
      nb[i] = graph::k_nearest(&dist[i * n], n, nn, i);
    });
    // Undirected adjacency (ascending neighbor index per row), weights the row distances.
    std::vector<std::vector<int64_t>> adj(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j : nb[i]) {
        adj[i].push_back(j);
        adj[j].push_back(i);
      }
    // Connected components (labels in order of their lowest row), joined pairwise by closest rows.
    std::vector<int64_t> comp(static_cast<size_t>(n), -1);
    int64_t nc = 0;
    for (int64_t s = 0; s < n; ++s) {
      if (comp[s] >= 0) continue;
      std::vector<int64_t> stack{s};
      comp[s] = nc;
      while (!stack.empty()) {
        const int64_t u = stack.back();
        stack.pop_back();
        for (int64_t v : adj[u])
          if (comp[v] < 0) {
            comp[v] = nc;
            stack.push_back(v);
          }
      }
      ++nc;
    }
    for (int64_t a = 1; a < nc; ++a)
      for (int64_t b = 0; b < a; ++b) {
        int64_t bi = -1, bj = -1;
        for (int64_t i = 0; i < n; ++i) {
          if (comp[i] != a) continue;
          for (int64_t j = 0; j < n; ++j)
            if (comp[j] == b && (bi < 0 || dist[i * n + j] < dist[bi * n + bj])) bi = i, bj = j;
        }
        adj[bi].push_back(bj);
        adj[bj].push_back(bi);
      }
    for (auto& a : adj) {
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }
    geo_.assign(static_cast<size_t>(n * n), 0.0);
    if (params_.text("path_method") == "FW") {
      const double inf = HUGE_VAL;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) geo_[i * n + j] = i == j ? 0.0 : inf;
        for (int64_t j : adj[i]) geo_[i * n + j] = dist[i * n + j];
      }
      for (int64_t m = 0; m < n; ++m)
        default_pool().parallel_for(n, [&](int64_t i) {
          if (i == m) return;
          const double gim = geo_[i * n + m];
          for (int64_t j = 0; j < n; ++j) geo_[i * n + j] = std::min(geo_[i * n + j], gim + geo_[m * n + j]);
        });
    } else {
      default_pool().parallel_for(n, [&](int64_t s) {
        double* g = &geo_[s * n];
        std::vector<bool> done(static_cast<size_t>(n), false);
        for (int64_t j = 0; j < n; ++j) g[j] = HUGE_VAL;
        g[s] = 0.0;
        using Item = std::pair<double, int64_t>;
        std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
        heap.push({0.0, s});
        while (!heap.empty()) {
          const auto [du, u] = heap.top();
          heap.pop();
          if (done[u]) continue;
          done[u] = true;
          for (int64_t v : adj[u]) {
            const double alt = du + dist[u * n + v];
            if (alt < g[v]) {
              g[v] = alt;
              heap.push({alt, v});
            }
          }
        }
      });
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < i; ++j) geo_[j * n + i] = geo_[i * n + j];
  }

  std::vector<float> x_fit_, embedding_, eigenvalues_, alphas_;
  std::vector<double> geo_, col_means_;
  double grand_mean_ = 0.0;
  int64_t n_ = 0, d_ = 0, k_ = 0, nn_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_isomap() { return std::make_unique<Isomap>(); }

}  // namespace bl::ml
