// umap.cpp: umap (umap-learn 0.5's UMAP, McInnes, Healy and Melville 2018), uniform manifold
// approximation and projection: a fuzzy graph of the rows' nearest neighbors laid out by stochastic
// gradient descent against a smooth low-dimensional similarity curve.
//
// All in binary64 on the host, the embedding rounded to binary32 at the end. Steps:
//   graph:  exact n_neighbors nearest rows (Euclidean, the row itself first), per-row rho and sigma
//           (smooth_knn_dist), memberships exp(-(d - rho) / sigma) joined by the fuzzy union
//           (ml/manifold/umap.h);
//   prune:  entries below max / n_epochs dropped (max / 500 or 200 where n_epochs <= 10);
//   start:  init=spectral, the n_components eigenvectors after the first of the normalized
//           Laplacian I - D^-1/2 W D^-1/2 of the pruned graph (its largest of D^-1/2 W D^-1/2; dense
//           symmetric_eigen64 up to 512 rows, above by subspace iteration on (I + D^-1/2 W D^-1/2) / 2
//           with a Rayleigh-Ritz step), scaled so that the largest magnitude is 10, plus 1e-4 times
//           Philox normals of random_state. A pruned graph of several connected components starts
//           as umap-learn's multi_component_layout (UMAP::multi_component_start): each component
//           laid out alone about a meta point of its own, the result scaled and noised the same way;
//           init=random, Philox uniforms in [-10, 10). Then each
//           column rescaled to [0, 10];
//   layout: n_epochs epochs (none: 500 up to 10000 rows, else 200). Edge e (the pruned graph's
//           entries in row-major order, both directions) is sampled every epochs_per_sample_e =
//           max_w / w_e epochs; at a sample its head moves by clip(-2ab d^(2(b-1)) / (1 + a d^(2b))
//           (y_h - y_t)) * alpha and its tail by the opposite, then (epoch - next_negative) /
//           (epochs_per_sample_e / negative_sample_rate) negative rows (Philox words keyed by
//           random_state, epoch, edge and sample) push the head by clip(2b / ((0.001 + d^2) (1 + a
//           d^(2b))) (y_h - y_k)) * alpha; clip at +-4, alpha = learning_rate (1 - epoch / n_epochs).
//           Edges are taken one at a time in that fixed order (umap-learn's single-threaded
//           schedule), so the layout is a pure function of (X, parameters, random_state).
// The state keeps the training rows, the embedding, a, b and the fuzzy graph before pruning
// (umap-learn's graph_). transform places new rows as umap-learn's: their n_neighbors nearest
// training rows, memberships with rho = 0, the membership-weighted mean of those rows' embeddings
// as the start, then the layout (n_epochs / 3 epochs, none: 100; learning_rate / 4) moving only the
// new rows against the fitted embedding, with negative samples from the training rows.
#include "ml/manifold/umap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/manifold/neighbor_graph.h"
#include "ml/manifold/training_embedding.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace umap {

double pow64(double x, double y) { return x > 0.0 ? exp64(y * log64(x)) : 0.0; }

namespace {
// The lists of the m rows of q [m, d] among the n rows of x [n, d]: with self, row i itself first and
// k - 1 others (q is x); without, k rows.
Knn nearest_lists(const std::vector<float>& x, int64_t n, int64_t d, const std::vector<float>& q, int64_t m,
                  int64_t k, bool self) {
  Knn out;
  out.n = m;
  out.k = k;
  out.idx.assign(static_cast<size_t>(m * k), 0);
  out.dist.assign(static_cast<size_t>(m * k), 0.0);
  const int64_t first = self ? 1 : 0;
  default_pool().parallel_for(m, [&](int64_t i) {
    std::vector<double> sq(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) sq[j] = density_detail::sq_distance(q.data() + i * d, x.data() + j * d, d);
    const std::vector<int64_t> near = graph::k_nearest(sq.data(), n, k - first, self ? i : -1);
    if (self) out.idx[i * k] = i;
    for (int64_t r = first; r < k; ++r) {
      out.idx[i * k + r] = near[r - first];
      out.dist[i * k + r] = std::sqrt(sq[near[r - first]]);
    }
  });
  return out;
}
}  // namespace

Knn exact_knn(const std::vector<float>& x, int64_t n, int64_t d, int64_t k) {
  return nearest_lists(x, n, d, x, n, k, true);
}

Knn query_knn(const std::vector<float>& x, int64_t n, int64_t d, const std::vector<float>& q, int64_t m, int64_t k) {
  return nearest_lists(x, n, d, q, m, k, false);
}

Bandwidths smooth_knn_dist(const Knn& knn, bool zero_rho) {
  constexpr double kTol = 1e-5, kMinScale = 1e-3;
  const int64_t n = knn.n, k = knn.k;
  const double target = log64(static_cast<double>(k)) / log64(2.0);
  double mean_all = 0.0;
  for (double v : knn.dist) mean_all += v;
  mean_all /= static_cast<double>(knn.dist.size());
  Bandwidths out;
  out.sigma.assign(static_cast<size_t>(n), 0.0);
  out.rho.assign(static_cast<size_t>(n), 0.0);
  default_pool().parallel_for(n, [&](int64_t i) {
    const double* di = &knn.dist[i * k];
    double rho = 0.0, mean = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      if (!zero_rho && rho == 0.0 && di[j] > 0.0) rho = di[j];
      mean += di[j];
    }
    mean /= static_cast<double>(k);
    double lo = 0.0, hi = std::numeric_limits<double>::infinity(), mid = 1.0;
    for (int it = 0; it < 64; ++it) {
      double psum = 0.0;
      for (int64_t j = 1; j < k; ++j) {
        const double v = di[j] - rho;
        psum += v > 0.0 ? exp64(-(v / mid)) : 1.0;
      }
      if (std::fabs(psum - target) < kTol) break;
      if (psum > target) {
        hi = mid;
        mid = (lo + hi) / 2.0;
      } else {
        lo = mid;
        mid = hi == std::numeric_limits<double>::infinity() ? mid * 2.0 : (lo + hi) / 2.0;
      }
    }
    out.sigma[i] = std::max(mid, kMinScale * (rho > 0.0 ? mean : mean_all));
    out.rho[i] = rho;
  });
  return out;
}

Graph fuzzy_simplicial_set(const Knn& knn, const Bandwidths& bw) {
  const int64_t n = knn.n, k = knn.k;
  // Directed memberships of each row, joined by the fuzzy union.
  manifold::DirectedEntries out_rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < k; ++r) {
      const int64_t j = knn.idx[i * k + r];
      if (j == i) continue;
      const double v = knn.dist[i * k + r] - bw.rho[i];
      const double w = v <= 0.0 || bw.sigma[i] == 0.0 ? 1.0 : exp64(-(v / bw.sigma[i]));
      if (w == 0.0) continue;
      out_rows[i].emplace_back(j, w);
    }
  }
  // symmetric in x and y: the graph is exactly symmetric
  return manifold::symmetrize(std::move(out_rows), [](double x, double y) { return (x + y) - x * y; });
}

CurveAB find_ab_params(double spread, double min_dist) {
  constexpr int kPoints = 300;
  std::vector<double> xs(kPoints), ys(kPoints), lx(kPoints);
  const double step = spread * 3.0 / (kPoints - 1);
  for (int i = 0; i < kPoints; ++i) {
    xs[i] = i == kPoints - 1 ? spread * 3.0 : static_cast<double>(i) * step;
    ys[i] = xs[i] < min_dist ? 1.0 : exp64(-(xs[i] - min_dist) / spread);
    lx[i] = xs[i] > 0.0 ? log64(xs[i]) : 0.0;
  }
  // Residuals, the sum of their squares and the Jacobian's normal equations at (a, b).
  auto eval = [&](double a, double b, double* jtj, double* jtr) {
    double sse = 0.0;
    if (jtj) std::fill(jtj, jtj + 3, 0.0), std::fill(jtr, jtr + 2, 0.0);
    for (int i = 0; i < kPoints; ++i) {
      const double u = xs[i] > 0.0 ? exp64(2.0 * b * lx[i]) : 0.0, den = 1.0 + a * u;
      const double r = 1.0 / den - ys[i];
      sse += r * r;
      if (!jtj) continue;
      const double ga = -u / (den * den), gb = -a * u * 2.0 * lx[i] / (den * den);
      jtj[0] += ga * ga;
      jtj[1] += ga * gb;
      jtj[2] += gb * gb;
      jtr[0] += ga * r;
      jtr[1] += gb * r;
    }
    return sse;
  };
  double a = 1.0, b = 1.0, lambda = 1e-3, jtj[3], jtr[2];
  double sse = eval(a, b, jtj, jtr);
  for (int it = 0; it < 500; ++it) {
    const double m00 = jtj[0] * (1.0 + lambda), m11 = jtj[2] * (1.0 + lambda), m01 = jtj[1];
    const double det = m00 * m11 - m01 * m01;
    const double da = -(m11 * jtr[0] - m01 * jtr[1]) / det, db = -(m00 * jtr[1] - m01 * jtr[0]) / det;
    const double na = a + da, nb = b + db, nsse = eval(na, nb, nullptr, nullptr);
    if (nsse <= sse) {
      const bool done = std::fabs(da) <= 1e-15 * std::fabs(a) && std::fabs(db) <= 1e-15 * std::fabs(b);
      a = na;
      b = nb;
      sse = eval(a, b, jtj, jtr);
      lambda = std::max(lambda / 10.0, 1e-12);
      if (done) break;
    } else {
      lambda *= 10.0;
      if (lambda > 1e12) break;
    }
  }
  return {a, b};
}

}  // namespace umap

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
namespace dd = density_detail;

constexpr int64_t kMaxSamples = int64_t{1} << 22;
constexpr int64_t kDenseSpectralRows = 512, kSubspaceIters = 300;
constexpr uint64_t kNoiseStream = 1, kRandomInitStream = 2, kSubspaceStream = 3, kComponentStream = 4,
                   kNegativeStream = 16;
constexpr uint64_t kTransformStream = uint64_t{1} << 40;

// The graph's entries below max / limit dropped.
umap::Graph prune(const umap::Graph& g, int64_t limit) {
  double mx = 0.0;
  for (double v : g.val) mx = std::max(mx, v);
  const double cut = mx / static_cast<double>(limit);
  umap::Graph out;
  out.n = g.n;
  out.row_ptr.assign(1, 0);
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e)
      if (g.val[e] >= cut) {
        out.col.push_back(g.col[e]);
        out.val.push_back(g.val[e]);
      }
    out.row_ptr.push_back(static_cast<int64_t>(out.col.size()));
  }
  return out;
}

// y = S^-1/2 W S^-1/2 v for the [n, m] row-major block v (inv_s = 1 / sqrt(degree)).
void normalized_product(const umap::Graph& g, const std::vector<double>& inv_s, const std::vector<double>& v,
                        int64_t m, std::vector<double>& y) {
  y.assign(v.size(), 0.0);
  default_pool().parallel_for(g.n, [&](int64_t i) {
    for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e) {
      const double w = g.val[e] * inv_s[i] * inv_s[g.col[e]];
      for (int64_t t = 0; t < m; ++t) y[i * m + t] += w * v[g.col[e] * m + t];
    }
  });
}

// Modified Gram-Schmidt on the columns of v [n, m] in column order.
void orthonormalize(std::vector<double>& v, int64_t n, int64_t m) {
  for (int64_t t = 0; t < m; ++t) {
    for (int64_t s = 0; s < t; ++s) {
      double dot = 0.0;
      for (int64_t i = 0; i < n; ++i) dot += v[i * m + s] * v[i * m + t];
      for (int64_t i = 0; i < n; ++i) v[i * m + t] -= dot * v[i * m + s];
    }
    double norm = 0.0;
    for (int64_t i = 0; i < n; ++i) norm += v[i * m + t] * v[i * m + t];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < n; ++i) v[i * m + t] = norm > 0.0 ? v[i * m + t] / norm : 0.0;
  }
}

// The m = k + 1 largest eigenvectors of S^-1/2 W S^-1/2, rows of the result [m, n] in descending
// eigenvalue order, each with its entry of largest magnitude positive.
std::vector<double> top_eigenvectors(const umap::Graph& g, int64_t m, uint64_t seed) {
  const int64_t n = g.n;
  std::vector<double> inv_s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double deg = 0.0;
    for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e) deg += g.val[e];
    inv_s[i] = deg > 0.0 ? 1.0 / std::sqrt(deg) : 0.0;
  }
  if (n <= kDenseSpectralRows) {
    std::vector<double> M(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e)
        M[i * n + g.col[e]] = g.val[e] * inv_s[i] * inv_s[g.col[e]];
    return symmetric_eigen64(M, n, m, "umap").vectors;
  }
  // Subspace iteration on B = (I + M) / 2 (eigenvalues in [0, 1], M's order), the first column
  // started at sqrt(degree), then Rayleigh-Ritz.
  std::vector<double> v(static_cast<size_t>(n * m)), y;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < m; ++t)
      v[i * m + t] = t == 0 ? (inv_s[i] > 0.0 ? 1.0 / inv_s[i] : 0.0)
                            : static_cast<double>(
                                  normal_element(seed, kSubspaceStream, static_cast<uint64_t>(i * m + t)));
  orthonormalize(v, n, m);
  for (int64_t it = 0; it < kSubspaceIters; ++it) {
    normalized_product(g, inv_s, v, m, y);
    for (size_t t = 0; t < v.size(); ++t) v[t] = (v[t] + y[t]) / 2.0;
    orthonormalize(v, n, m);
  }
  normalized_product(g, inv_s, v, m, y);
  std::vector<double> H(static_cast<size_t>(m * m), 0.0);
  for (int64_t s = 0; s < m; ++s)
    for (int64_t t = 0; t < m; ++t)
      for (int64_t i = 0; i < n; ++i) H[s * m + t] += v[i * m + s] * y[i * m + t];
  for (int64_t s = 0; s < m; ++s)
    for (int64_t t = 0; t < s; ++t) H[s * m + t] = H[t * m + s] = (H[s * m + t] + H[t * m + s]) / 2.0;
  const SymmetricEigen64 small = symmetric_eigen64(H, m, m, "umap");
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t t = 0; t < m; ++t) s += v[i * m + t] * small.vectors[r * m + t];
      out[r * n + i] = s;
    }
  dec::flip_rows_by_largest(out, m, n);
  return out;
}

// Connected components of the symmetric graph g: labels numbered in order of first appearance (the
// lowest row of each component first, as scipy's connected_components numbers them); returns the count.
int64_t connected_components(const umap::Graph& g, std::vector<int64_t>& label) {
  label.assign(static_cast<size_t>(g.n), -1);
  int64_t count = 0;
  std::vector<int64_t> stack;
  for (int64_t s = 0; s < g.n; ++s) {
    if (label[s] >= 0) continue;
    label[s] = count;
    stack.assign(1, s);
    while (!stack.empty()) {
      const int64_t i = stack.back();
      stack.pop_back();
      for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e)
        if (label[g.col[e]] < 0) label[g.col[e]] = count, stack.push_back(g.col[e]);
    }
    ++count;
  }
  return count;
}

// umap-learn's component_layout: the components' centroids (binary64 means of their rows of x [n, d]),
// affinity exp(-|c_a - c_b|^2), its spectral embedding as scikit-learn's SpectralEmbedding with
// affinity="precomputed" (the diagonal ignored, degrees s_a^2 over b != a, s_a = 1 where 0; the
// n_components + 1 largest eigenvectors of S^-1 A S^-1 divided by s, each with its entry of largest
// magnitude positive, the first dropped), divided by its largest entry. [nc, k] row-major.
std::vector<double> component_centroid_layout(const std::vector<float>& x, int64_t d, const std::vector<int64_t>& label,
                                              int64_t nc, int64_t k) {
  const int64_t n = static_cast<int64_t>(label.size());
  std::vector<double> cen(static_cast<size_t>(nc * d), 0.0), cnt(static_cast<size_t>(nc), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    cnt[label[i]] += 1.0;
    for (int64_t f = 0; f < d; ++f) cen[label[i] * d + f] += static_cast<double>(x[i * d + f]);
  }
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t f = 0; f < d; ++f) cen[c * d + f] /= cnt[c];
  std::vector<double> A(static_cast<size_t>(nc * nc), 0.0), s(static_cast<size_t>(nc), 0.0);
  for (int64_t a = 0; a < nc; ++a)
    for (int64_t b = 0; b < nc; ++b) {
      if (a == b) continue;
      double sq = 0.0;
      for (int64_t f = 0; f < d; ++f) sq += (cen[a * d + f] - cen[b * d + f]) * (cen[a * d + f] - cen[b * d + f]);
      A[a * nc + b] = exp64(-sq);
    }
  for (int64_t a = 0; a < nc; ++a) {
    double deg = 0.0;
    for (int64_t b = 0; b < nc; ++b) deg += A[a * nc + b];
    s[a] = deg > 0.0 ? std::sqrt(deg) : 1.0;
  }
  for (int64_t a = 0; a < nc; ++a)
    for (int64_t b = 0; b < nc; ++b) A[a * nc + b] = A[a * nc + b] / (s[a] * s[b]);
  const SymmetricEigen64 eig = symmetric_eigen64(A, nc, k + 1, "umap");
  std::vector<double> v(static_cast<size_t>((k + 1) * nc));
  for (int64_t t = 0; t <= k; ++t)
    for (int64_t c = 0; c < nc; ++c) v[t * nc + c] = eig.vectors[t * nc + c] / s[c];
  dec::flip_rows_by_largest(v, k + 1, nc);
  std::vector<double> meta(static_cast<size_t>(nc * k));
  double mx = -std::numeric_limits<double>::infinity(), amx = 0.0;
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t t = 0; t < k; ++t) {
      meta[c * k + t] = v[(t + 1) * nc + c];
      mx = std::max(mx, meta[c * k + t]);
      amx = std::max(amx, std::fabs(meta[c * k + t]));
    }
  // umap-learn divides by the largest entry; where none is positive (a degenerate affinity), by the
  // largest magnitude, so that the scale stays finite.
  const double div = mx > 0.0 ? mx : (amx > 0.0 ? amx : 1.0);
  for (double& m : meta) m /= div;
  return meta;
}

class UMAP final : public lin::ParamEstimator {
 public:
  UMAP()
      : lin::ParamEstimator("umap", {{"init", K::choice, "spectral", 0, {"spectral", "random"}},
                                     {"learning_rate", K::number, "1", 0.0, {}, true},
                                     {"metric", K::choice, "euclidean", 0, {"euclidean"}},
                                     {"min_dist", K::number, "0.1", 0.0},
                                     {"n_components", K::integer, "2", 1},
                                     {"n_epochs", K::number_or_word, "none", 0.0, {"none"}},
                                     {"n_neighbors", K::integer, "15", 2},
                                     {"negative_sample_rate", K::integer, "5", 0},
                                     {"random_state", K::integer, "0", 0},
                                     {"spread", K::number, "1", 0.0, {}, true}}) {}

  void set_params(const Params& p) override {
    const auto m = p.find("metric");
    BL_CHECK(m == p.end() || m->second == "euclidean", name_, ": metric=", m == p.end() ? "" : m->second,
             " is not available; only metric=euclidean");
    params_.set(p);
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1), k = params_.integer("n_components");
    const int64_t nn = params_.integer("n_neighbors");
    BL_CHECK(n <= kMaxSamples, name_, ": at most ", kMaxSamples, " rows (exact neighbors), got ", n);
    BL_CHECK(nn < n, name_, ": n_neighbors=", nn, " must be less than n_samples=", n);
    BL_CHECK(k < n, name_, ": n_components=", k, " must be less than n_samples=", n);
    const double min_dist = params_.number("min_dist"), spread = params_.number("spread");
    BL_CHECK(min_dist <= spread, name_, ": min_dist=", min_dist, " must be at most spread=", spread);
    const int64_t default_epochs = n <= 10000 ? 500 : 200;
    const int64_t epochs = dec::optional_count(params_, name_, "n_epochs", default_epochs);
    kept_.keep_rows(X);
    const umap::Knn knn = umap::exact_knn(kept_.rows.x, n, d, nn);
    graph_ = umap::fuzzy_simplicial_set(knn, umap::smooth_knn_dist(knn));
    const umap::Graph g = prune(graph_, epochs > 10 ? epochs : default_epochs);
    ab_ = umap::find_ab_params(spread, min_dist);
    std::vector<double> emb = start(g, k);
    layout(g, emb.data(), emb.data(), n, k, epochs, params_.number("learning_rate"), kNegativeStream, true);
    kept_.keep_embedding(emb, k);
    fitted_ = true;
    return *this;
  }

  // New rows as umap-learn's transform: the n_neighbors nearest training rows, bandwidths with rho = 0
  // (local_connectivity 0), memberships exp(-d / sigma); the start is the membership-weighted mean of
  // the neighbors' embeddings, then n_epochs / 3 epochs (none: 100, or 30 above 10000 new rows) of the
  // layout at learning_rate / 4 against the fixed training embedding.
  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, kept_.rows.d);
    const int64_t m = X.dim(0), k = kept_.k, nn = std::min(params_.integer("n_neighbors"), kept_.rows.n);
    const std::vector<float> q = X.to(Device::cpu()).contiguous().to_vector<float>();
    const umap::Knn knn = umap::query_knn(kept_.rows.x, kept_.rows.n, kept_.rows.d, q, m, nn);
    const umap::Bandwidths bw = umap::smooth_knn_dist(knn, true);
    umap::Graph g;
    g.n = m;
    g.row_ptr.assign(1, 0);
    const std::vector<float>& fitted = kept_.embedding;
    std::vector<double> emb(static_cast<size_t>(m * k), 0.0), tail(fitted.begin(), fitted.end());
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0.0;
      const size_t first = g.val.size();
      for (int64_t r = 0; r < nn; ++r) {
        const double dv = knn.dist[i * nn + r];
        const double w = dv <= 0.0 || bw.sigma[i] == 0.0 ? 1.0 : exp64(-(dv / bw.sigma[i]));
        g.col.push_back(knn.idx[i * nn + r]);
        g.val.push_back(w);
        sum += w;
      }
      for (size_t e = first; e < g.val.size(); ++e)
        for (int64_t t = 0; t < k; ++t) emb[i * k + t] += g.val[e] / sum * tail[g.col[e] * k + t];
      g.row_ptr.push_back(static_cast<int64_t>(g.col.size()));
    }
    const std::string text = params_.text("n_epochs");
    const int64_t epochs = text == "none" ? (m <= 10000 ? 100 : 30)
                                          : dec::optional_count(params_, name_, "n_epochs", 0) / 3;
    if (epochs > 0) {
      const umap::Graph pruned = prune(g, epochs);
      layout(pruned, emb.data(), tail.data(), kept_.rows.n, k, epochs, params_.number("learning_rate") / 4.0,
             kTransformStream, false);
    }
    return Tensor::from_vector(std::vector<float>(emb.begin(), emb.end()), {m, k}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    kept_.save(state);
    state["a"] = dd::f64_to_hex({ab_.a});
    state["b"] = dd::f64_to_hex({ab_.b});
    state["graph_indptr"] = graph_.row_ptr;
    state["graph_indices"] = graph_.col;
    state["graph_data"] = dd::f64_to_hex(graph_.val);
  }

  void load_state(const nlohmann::json& state) override {
    kept_.load(state, name_, kMaxSamples);
    ab_.a = dd::f64_from_state(state, "a", 1, name_)[0];
    ab_.b = dd::f64_from_state(state, "b", 1, name_)[0];
    load_graph(state);
    fitted_ = true;
  }

 private:
  // The fuzzy graph of the state: row pointers from 0, non-decreasing, to the entry count; columns in
  // [0, n_samples); as many binary64 values.
  void load_graph(const nlohmann::json& state) {
    const int64_t n = kept_.rows.n;
    auto ints = [&](const char* key, std::vector<int64_t>& out) {
      BL_CHECK(state.contains(key) && state[key].is_array(), name_, ": model state: ", key, " is not an array");
      out.clear();
      for (const auto& v : state[key]) {
        BL_CHECK(v.is_number_integer(), name_, ": model state: ", key, " holds a non-integer");
        out.push_back(v.get<int64_t>());
      }
    };
    umap::Graph g;
    g.n = n;
    ints("graph_indptr", g.row_ptr);
    ints("graph_indices", g.col);
    const int64_t nnz = static_cast<int64_t>(g.col.size());
    BL_CHECK(static_cast<int64_t>(g.row_ptr.size()) == n + 1 && g.row_ptr[0] == 0 && g.row_ptr[n] == nnz, name_,
             ": model state: graph_indptr must have n_samples + 1 entries from 0 to the entry count");
    for (int64_t i = 0; i < n; ++i)
      BL_CHECK(g.row_ptr[i] <= g.row_ptr[i + 1], name_, ": model state: graph_indptr decreases");
    for (int64_t c : g.col) BL_CHECK(c >= 0 && c < n, name_, ": model state: graph_indices out of range");
    g.val = dd::f64_from_state(state, "graph_data", nnz, name_);
    graph_ = std::move(g);
  }

  uint64_t seed() const { return static_cast<uint64_t>(params_.integer("random_state")); }

  // The start of the layout [n, k], each column rescaled to [0, 10].
  std::vector<double> start(const umap::Graph& g, int64_t k) const {
    const int64_t n = g.n;
    std::vector<double> emb(static_cast<size_t>(n * k));
    if (params_.text("init") == "spectral") {
      std::vector<int64_t> label;
      const int64_t nc = connected_components(g, label);
      std::vector<double> raw(static_cast<size_t>(n * k));
      if (nc > 1) {
        raw = multi_component_start(g, label, nc, k);
      } else {
        const std::vector<double> v = top_eigenvectors(g, k + 1, seed());
        for (int64_t i = 0; i < n; ++i)
          for (int64_t t = 0; t < k; ++t) raw[i * k + t] = v[(t + 1) * n + i];
      }
      double mx = 0.0;
      for (int64_t t = 0; t < k; ++t)
        for (int64_t i = 0; i < n; ++i) mx = std::max(mx, std::fabs(raw[i * k + t]));
      const double expansion = mx > 0.0 ? 10.0 / mx : 1.0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < k; ++t)
          emb[i * k + t] = raw[i * k + t] * expansion +
                           1e-4 * static_cast<double>(
                                      normal_element(seed(), kNoiseStream, static_cast<uint64_t>(i * k + t)));
    } else {
      for (int64_t i = 0; i < n * k; ++i)
        emb[i] = static_cast<double>(
            uniform_ab(random_u32_element(seed(), kRandomInitStream, static_cast<uint64_t>(i)), -10.0f, 10.0f));
    }
    for (int64_t t = 0; t < k; ++t) {
      double lo = emb[t], hi = emb[t];
      for (int64_t i = 0; i < n; ++i) lo = std::min(lo, emb[i * k + t]), hi = std::max(hi, emb[i * k + t]);
      const double span = hi > lo ? hi - lo : 1.0;
      for (int64_t i = 0; i < n; ++i) emb[i * k + t] = 10.0 * (emb[i * k + t] - lo) / span;
    }
    return emb;
  }

  // umap-learn's multi_component_layout for a graph of nc > 1 connected components: a meta point per
  // component (more than 2k components: component_centroid_layout; else rows of [I_h 0; -I_h 0],
  // h = ceil(nc / 2)), data_range = half the smallest positive distance from it to the other meta
  // points (1 where all coincide); a component of fewer than 2k rows, or at most k + 1, gets Philox
  // uniforms in [-data_range, data_range) about its meta point, a larger one the eigenvectors 1..k of
  // its own subgraph's normalized Laplacian scaled to largest magnitude data_range about it. [n, k].
  std::vector<double> multi_component_start(const umap::Graph& g, const std::vector<int64_t>& label, int64_t nc,
                                            int64_t k) const {
    const int64_t n = g.n;
    std::vector<double> meta(static_cast<size_t>(nc * k), 0.0);
    if (nc > 2 * k) {
      meta = component_centroid_layout(kept_.rows.x, kept_.rows.d, label, nc, k);
    } else {
      const int64_t h = (nc + 1) / 2;
      for (int64_t c = 0; c < nc; ++c) meta[c * k + (c % h)] = c < h ? 1.0 : -1.0;
    }
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(nc));
    for (int64_t i = 0; i < n; ++i) rows[label[i]].push_back(i);
    std::vector<int64_t> local(static_cast<size_t>(n));
    std::vector<double> out(static_cast<size_t>(n * k), 0.0);
    const uint64_t sd = seed();
    for (int64_t c = 0; c < nc; ++c) {
      const double* mc = &meta[c * k];
      double nearest = std::numeric_limits<double>::infinity();
      for (int64_t o = 0; o < nc; ++o) {
        double sq = 0.0;
        for (int64_t t = 0; t < k; ++t) sq += (mc[t] - meta[o * k + t]) * (mc[t] - meta[o * k + t]);
        const double dist = std::sqrt(sq);
        if (dist > 0.0) nearest = std::min(nearest, dist);
      }
      const double range = nearest < std::numeric_limits<double>::infinity() ? nearest / 2.0 : 1.0;
      const std::vector<int64_t>& members = rows[c];
      const int64_t m = static_cast<int64_t>(members.size());
      if (m < 2 * k || m <= k + 1) {
        for (int64_t i : members)
          for (int64_t t = 0; t < k; ++t) {
            const uint32_t w = random_u32_element(sd, kComponentStream, static_cast<uint64_t>(i * k + t));
            out[i * k + t] = mc[t] + (-range + 2.0 * range * (static_cast<double>(w) / 4294967296.0));
          }
        continue;
      }
      umap::Graph sub;
      sub.n = m;
      sub.row_ptr.assign(1, 0);
      for (int64_t r = 0; r < m; ++r) local[members[r]] = r;
      for (int64_t i : members) {
        for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e) {
          sub.col.push_back(local[g.col[e]]);
          sub.val.push_back(g.val[e]);
        }
        sub.row_ptr.push_back(static_cast<int64_t>(sub.col.size()));
      }
      const std::vector<double> v = top_eigenvectors(sub, k + 1, sd);
      double mx = 0.0;
      for (int64_t t = 0; t < k; ++t)
        for (int64_t r = 0; r < m; ++r) mx = std::max(mx, std::fabs(v[(t + 1) * m + r]));
      const double expansion = mx > 0.0 ? range / mx : 1.0;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t t = 0; t < k; ++t) out[members[r] * k + t] = v[(t + 1) * m + r] * expansion + mc[t];
    }
    return out;
  }

  // The stochastic gradient layout over `epochs` epochs (one thread, edges in the graph's order): the
  // rows of g are rows of head [g.n, k], its columns and the negative samples rows of tail
  // [n_tail, k] (the same array in fit; in transform the training embedding, which stays put).
  void layout(const umap::Graph& g, double* head_emb, double* tail_emb, int64_t n_tail, int64_t k,
              int64_t epochs, double lr, uint64_t stream_base, bool move_other) const {
    const int64_t n = g.n, edges = static_cast<int64_t>(g.col.size());
    const double a = ab_.a, b = ab_.b;
    const double rate = static_cast<double>(params_.integer("negative_sample_rate"));
    const uint64_t sd = seed();
    double wmax = 0.0;
    for (double v : g.val) wmax = std::max(wmax, v);
    std::vector<int64_t> head(static_cast<size_t>(edges));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = g.row_ptr[i]; e < g.row_ptr[i + 1]; ++e) head[e] = i;
    std::vector<double> per_sample(static_cast<size_t>(edges)), per_negative(per_sample.size());
    for (int64_t e = 0; e < edges; ++e) {
      per_sample[e] = static_cast<double>(epochs) / (static_cast<double>(epochs) * (g.val[e] / wmax));
      per_negative[e] = per_sample[e] / rate;
    }
    std::vector<double> next_sample = per_sample, next_negative = per_negative;
    auto clip = [](double v) { return v > 4.0 ? 4.0 : (v < -4.0 ? -4.0 : v); };
    double alpha = lr;
    for (int64_t epoch = 0; epoch < epochs; ++epoch) {
      const double now = static_cast<double>(epoch);
      for (int64_t e = 0; e < edges; ++e) {
        if (next_sample[e] > now) continue;
        const int64_t j = head[e];
        double* cur = head_emb + j * k;
        double* oth = tail_emb + g.col[e] * k;
        double d2 = 0.0;
        for (int64_t t = 0; t < k; ++t) d2 += (cur[t] - oth[t]) * (cur[t] - oth[t]);
        double coeff = 0.0;
        if (d2 > 0.0) {
          const double p = umap::pow64(d2, b);  // d^(2b); d^(2(b - 1)) = d^(2b) / d^2
          coeff = -2.0 * a * b * (p / d2) / (a * p + 1.0);
        }
        for (int64_t t = 0; t < k; ++t) {
          const double gd = clip(coeff * (cur[t] - oth[t]));
          cur[t] += gd * alpha;
          if (move_other) oth[t] += -gd * alpha;
        }
        next_sample[e] += per_sample[e];
        const int64_t negatives = rate > 0.0 ? static_cast<int64_t>((now - next_negative[e]) / per_negative[e]) : 0;
        PhiloxBlock words{};
        for (int64_t p = 0; p < negatives; ++p) {
          // Word p of element (e << 20) + p of the epoch's stream: random_u32_element's bits, each
          // Philox block computed once for its four words.
          if (p % 4 == 0)
            words = philox_block(sd, stream_base + static_cast<uint64_t>(epoch),
                                 (static_cast<uint64_t>(e) << 18) + static_cast<uint64_t>(p / 4));
          const uint32_t word = words.w[p % 4];
          const int64_t kk = static_cast<int64_t>((static_cast<uint64_t>(word) * static_cast<uint64_t>(n_tail)) >> 32);
          const double* neg = tail_emb + kk * k;
          double q2 = 0.0;
          for (int64_t t = 0; t < k; ++t) q2 += (cur[t] - neg[t]) * (cur[t] - neg[t]);
          if (q2 <= 0.0) continue;  // the row itself, or a coincident row: no push
          const double c = 2.0 * b / ((0.001 + q2) * (a * umap::pow64(q2, b) + 1.0));
          for (int64_t t = 0; t < k; ++t) cur[t] += clip(c * (cur[t] - neg[t])) * alpha;
        }
        next_negative[e] += static_cast<double>(negatives) * per_negative[e];
      }
      alpha = lr * (1.0 - now / static_cast<double>(epochs));
    }
  }

  manifold::TrainingEmbedding kept_;  // the training rows and their embedding
  umap::CurveAB ab_;
  umap::Graph graph_;  // the fuzzy graph before pruning (umap-learn's graph_)
};

}  // namespace

std::unique_ptr<Estimator> make_umap() { return std::make_unique<UMAP>(); }

}  // namespace bl::ml
