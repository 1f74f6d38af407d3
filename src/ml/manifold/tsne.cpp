// tsne.cpp: tsne (scikit-learn's TSNE with method=exact, the default here, or method=barnes_hut),
// t-distributed stochastic neighbor embedding by gradient descent on the Kullback-Leibler divergence,
// exact or with the Barnes-Hut approximation of the repulsion.
//
// All in binary64 on the host, rounded to binary32 at the end. method=exact (at most 4096 rows):
// squared Euclidean distances of the rows (ml/manifold/neighbor_graph.h); P by
// tsne::joint_probabilities (tsne.h: a binary search of each row's precision for entropy
// ln(perplexity), then symmetrized and normalized); the dense divergence and step (kl_gradient).
// method=barnes_hut (n_components <= 3): P over the min(n - 1, 3 perplexity + 1) exact nearest rows
// (tsne::neighbor_probabilities, sparse), the attraction over those entries and the repulsion from a
// tree of the embedding rebuilt at every iteration (tsne::bh_gradient; angle is the opening criterion).
// Each point's sums are taken by one task in a fixed order and the normalizer Z is folded in point
// order, so the bits do not depend on the thread count.
// Start: init=pca, the project's pca (n_components components) applied to X, divided by the
// population standard deviation of its first column and multiplied by 1e-4; init=random, 1e-4 times
// Philox standard normals (normal_element(random_state, stream 1, i * n_components + t)).
// Descent, as scikit-learn's: two stages of plain gradient steps with per-coordinate gains (gain + 0.2
// where update * grad < 0, else gain * 0.8, at least 0.01), update = momentum * update - learning_rate
// * gains * grad, the update and the gains reset between the stages. Stage one: iterations 0..249 at
// momentum 0.5 against early_exaggeration * P; stage two: from there to max_iter - 1 at momentum 0.8
// against P. Every 50th iteration (and the last of a stage) the divergence is computed; a stage ends
// early when it did not improve for more than n_iter_without_progress iterations (250 in stage one)
// or the gain-scaled gradient's norm is at most min_grad_norm. learning_rate=auto is
// max(n_samples / early_exaggeration / 4, 50). kl_divergence_ is the divergence of the last
// evaluation (kept in binary64, as learning_rate_), n_iter_ the index of the last iteration.
// scikit-learn's TSNE has no transform (the Python class has none either); the library's transform
// gives a new row the embedding of its nearest training row, as spectral_embedding's.
#include "ml/manifold/tsne.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/manifold/neighbor_graph.h"
#include "ml/manifold/training_embedding.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace tsne {

namespace {
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxTreeDepth = 64;  // below, distinct points share a leaf (their widths are 2^-64 of the root's)

// The sum of v[0..n) in index order.
double fold(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s;
}

// p[0..m) = the conditional probabilities exp(-beta d_j) / sum of one row from its squared distances
// d[0..m) (binary32 values), entry `skip` (-1: none) zero, beta by the bisection for entropy `target`.
void conditional_row(const double* d, int64_t m, int64_t skip, double target, double* p) {
  const double inf = std::numeric_limits<double>::infinity();
  double lo = -inf, hi = inf, beta = 1.0;
  for (int step = 0; step < 100; ++step) {
    double sum = 0.0;
    for (int64_t j = 0; j < m; ++j) {
      p[j] = j == skip ? 0.0 : exp64(-d[j] * beta);
      sum += p[j];
    }
    if (sum == 0.0) sum = 1e-8;
    double mean_d = 0.0;
    for (int64_t j = 0; j < m; ++j) {
      p[j] /= sum;
      mean_d += d[j] * p[j];
    }
    const double diff = log64(sum) + beta * mean_d - target;
    if (std::fabs(diff) <= 1e-5) break;
    if (diff > 0.0) {
      lo = beta;
      beta = hi == inf ? beta * 2.0 : (beta + hi) / 2.0;
    } else {
      hi = beta;
      beta = lo == -inf ? beta / 2.0 : (beta + lo) / 2.0;
    }
  }
}

// The Student-t kernel (1 + q / dof)^(-(dof + 1) / 2): 1 / base^half, times 1 / sqrt(base) when
// dof + 1 is odd.
struct Kernel {
  int64_t dof, half;
  bool odd;
  explicit Kernel(int64_t k) : dof(std::max<int64_t>(k - 1, 1)), half((dof + 1) / 2), odd((dof + 1) % 2 != 0) {}
  double operator()(double q) const {
    const double base = 1.0 + q / static_cast<double>(dof);
    double pw = 1.0;
    for (int64_t e = 0; e < half; ++e) pw *= base;
    if (odd) pw *= std::sqrt(base);
    return 1.0 / pw;
  }
  double step_factor() const { return 2.0 * static_cast<double>(dof + 1) / static_cast<double>(dof); }
};

// The Barnes-Hut tree of y [n, k] (k <= 3): the root cell spans [min, max] of each coordinate; a cell
// is split at its centre into 2^k children (child bit t set where y_t >= centre_t). Points are inserted
// in index order on one thread; a leaf holds one point, or several where they coincide (or lie
// kMaxTreeDepth levels deep). Every cell keeps the count and the sum of its points (added in insertion
// order) and its barycenter sum / count.
class SpaceTree {
 public:
  SpaceTree(const std::vector<double>& y, int64_t n, int64_t k) : y_(y), k_(k), fan_(int64_t{1} << k) {
    next_.assign(static_cast<size_t>(n), -1);
    Cell root;
    for (int64_t t = 0; t < k; ++t) {
      double lo = y[t], hi = y[t];
      for (int64_t i = 0; i < n; ++i) lo = std::min(lo, y[i * k + t]), hi = std::max(hi, y[i * k + t]);
      root.centre[t] = lo + (hi - lo) / 2.0;
      root.half[t] = (hi - lo) / 2.0;
    }
    cells_.push_back(root);
    for (int64_t p = 0; p < n; ++p) insert(p);
    for (Cell& c : cells_) {
      for (int64_t t = 0; t < k; ++t) {
        c.bary[t] = c.sum[t] / static_cast<double>(c.count);
        c.width2 = std::max(c.width2, 4.0 * c.half[t] * c.half[t]);
      }
    }
  }

  // F_i (force[0..k)) and Z_i (*z) of point i: the cells depth first, children in index order.
  void repulsion(int64_t i, double theta2, const Kernel& kernel, double* force, double* z) const {
    for (int64_t t = 0; t < k_; ++t) force[t] = 0.0;
    *z = 0.0;
    visit(0, i, theta2, kernel, force, z);
  }

 private:
  struct Cell {
    double centre[3] = {0, 0, 0}, half[3] = {0, 0, 0}, sum[3] = {0, 0, 0}, bary[3] = {0, 0, 0};
    double width2 = 0.0;
    int64_t count = 0, first = -1, depth = 0;
    int64_t child[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    bool leaf = true;
  };

  const double* at(int64_t p) const { return y_.data() + p * k_; }

  int64_t octant(const Cell& c, const double* v) const {
    int64_t o = 0;
    for (int64_t t = 0; t < k_; ++t)
      if (v[t] >= c.centre[t]) o |= int64_t{1} << t;
    return o;
  }

  void add(Cell& c, const double* v) const {
    for (int64_t t = 0; t < k_; ++t) c.sum[t] += v[t];
    ++c.count;
  }

  // A new leaf below cell `parent` in octant o (no points yet).
  int64_t new_child(int64_t parent, int64_t o) {
    Cell c;
    const Cell& up = cells_[parent];
    for (int64_t t = 0; t < k_; ++t) {
      c.half[t] = up.half[t] / 2.0;
      c.centre[t] = (o >> t) & 1 ? up.centre[t] + c.half[t] : up.centre[t] - c.half[t];
    }
    c.depth = up.depth + 1;
    cells_.push_back(c);
    const int64_t id = static_cast<int64_t>(cells_.size()) - 1;
    cells_[parent].child[o] = id;
    return id;
  }

  void insert(int64_t p) {
    const double* v = at(p);
    int64_t c = 0;
    for (;;) {
      if (cells_[c].leaf && cells_[c].count == 0) {  // the empty root or a new leaf
        add(cells_[c], v);
        cells_[c].first = p;
        return;
      }
      if (cells_[c].leaf) {
        const int64_t q = cells_[c].first;
        bool same = true;
        for (int64_t t = 0; t < k_; ++t) same = same && at(q)[t] == v[t];
        if (same || cells_[c].depth >= kMaxTreeDepth) {  // one more point of this leaf
          add(cells_[c], v);
          next_[p] = next_[q];
          next_[q] = p;
          return;
        }
        // Split: the leaf's points move together into their child, which takes the count and sum.
        const int64_t ch = new_child(c, octant(cells_[c], at(q)));
        Cell& moved = cells_[ch];
        const Cell& from = cells_[c];
        moved.count = from.count;
        moved.first = q;
        for (int64_t t = 0; t < k_; ++t) moved.sum[t] = from.sum[t];
        cells_[c].leaf = false;
        cells_[c].first = -1;
      }
      add(cells_[c], v);
      const int64_t o = octant(cells_[c], v);
      if (cells_[c].child[o] < 0) {
        const int64_t ch = new_child(c, o);
        add(cells_[ch], v);
        cells_[ch].first = p;
        return;
      }
      c = cells_[c].child[o];
    }
  }

  void visit(int64_t c, int64_t i, double theta2, const Kernel& kernel, double* force, double* z) const {
    const Cell& cell = cells_[c];
    const double* yi = at(i);
    double diff[3], d2 = 0.0;
    if (cell.leaf) {
      for (int64_t q = cell.first; q >= 0; q = next_[q]) {
        if (q == i) continue;
        d2 = 0.0;
        for (int64_t t = 0; t < k_; ++t) {
          diff[t] = yi[t] - at(q)[t];
          d2 += diff[t] * diff[t];
        }
        const double w = kernel(d2);
        *z += w;
        for (int64_t t = 0; t < k_; ++t) force[t] += w * w * diff[t];
      }
      return;
    }
    for (int64_t t = 0; t < k_; ++t) {
      diff[t] = yi[t] - cell.bary[t];
      d2 += diff[t] * diff[t];
    }
    if (cell.width2 < theta2 * d2) {  // far enough: the cell as one body at its barycenter
      const double w = kernel(d2), cnt = static_cast<double>(cell.count);
      *z += cnt * w;
      for (int64_t t = 0; t < k_; ++t) force[t] += cnt * w * w * diff[t];
      return;
    }
    for (int64_t o = 0; o < fan_; ++o)
      if (cell.child[o] >= 0) visit(cell.child[o], i, theta2, kernel, force, z);
  }

  const std::vector<double>& y_;
  int64_t k_, fan_;
  std::vector<Cell> cells_;
  std::vector<int64_t> next_;  // the next point of the same leaf, -1 at the end
};
}  // namespace

std::vector<double> joint_probabilities(const std::vector<double>& sq, int64_t n, double perplexity) {
  std::vector<double> c(static_cast<size_t>(n * n), 0.0);
  const double target = log64(perplexity);
  default_pool().parallel_for(n, [&](int64_t i) {
    std::vector<double> d(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) d[j] = static_cast<double>(static_cast<float>(sq[i * n + j]));
    conditional_row(d.data(), n, i, target, &c[i * n]);
  });
  std::vector<double> P(static_cast<size_t>(n * n), 0.0), row(static_cast<size_t>(n));
  default_pool().parallel_for(n, [&](int64_t i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      P[i * n + j] = c[i * n + j] + c[j * n + i];
      s += P[i * n + j];
    }
    row[i] = s;
  });
  const double total = std::max(fold(row), kEps);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) P[i * n + j] = j == i ? 0.0 : std::max(P[i * n + j] / total, kEps);
  return P;
}

double kl_gradient(const std::vector<double>& P, double exaggeration, const std::vector<double>& y, int64_t n,
                   int64_t k, bool want_error, std::vector<double>& grad, std::vector<double>& w) {
  const Kernel kernel(k);
  w.assign(static_cast<size_t>(n * n), 0.0);
  grad.assign(static_cast<size_t>(n * k), 0.0);
  std::vector<double> row(static_cast<size_t>(n));
  default_pool().parallel_for(n, [&](int64_t i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double q = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        const double v = y[i * k + t] - y[j * k + t];
        q += v * v;
      }
      w[i * n + j] = kernel(q);
      s += w[i * n + j];
    }
    row[i] = s;
  });
  const double sum_w = fold(row);
  const double c = kernel.step_factor();
  default_pool().parallel_for(n, [&](int64_t i) {
    double err = 0.0;
    double* g = &grad[i * k];
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double p = exaggeration * P[i * n + j], wij = w[i * n + j];
      const double q = std::max(wij / sum_w, kEps);
      if (want_error) err += p * log64(std::max(p, kEps) / q);
      const double f = (p - q) * wij;
      for (int64_t t = 0; t < k; ++t) g[t] += f * (y[i * k + t] - y[j * k + t]);
    }
    for (int64_t t = 0; t < k; ++t) g[t] *= c;
    row[i] = err;
  });
  return want_error ? fold(row) : 0.0;
}

int64_t bh_neighbors(int64_t n, double perplexity) {
  return std::min(n - 1, static_cast<int64_t>(3.0 * perplexity + 1.0));
}

SparseP neighbor_probabilities(const std::vector<float>& x, int64_t n, int64_t d, double perplexity,
                               int64_t neighbors) {
  const int64_t m = neighbors;
  std::vector<int64_t> idx(static_cast<size_t>(n * m));
  std::vector<double> cond(static_cast<size_t>(n * m));
  const double target = log64(perplexity);
  default_pool().parallel_for(n, [&](int64_t i) {
    std::vector<double> sq(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) sq[j] = density_detail::sq_distance(x.data() + i * d, x.data() + j * d, d);
    const std::vector<int64_t> near = graph::k_nearest(sq.data(), n, m, i);
    std::vector<double> dn(static_cast<size_t>(m));
    for (int64_t r = 0; r < m; ++r) {
      idx[i * m + r] = near[r];
      dn[r] = static_cast<double>(static_cast<float>(sq[near[r]]));
    }
    conditional_row(dn.data(), m, -1, target, &cond[i * m]);
  });
  // C + C^T, columns ascending in each row; then the row sums in column order, folded in row order.
  manifold::DirectedEntries out_rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < m; ++r) out_rows[i].emplace_back(idx[i * m + r], cond[i * m + r]);
  SparseP P = manifold::symmetrize(std::move(out_rows), [](double a, double b) { return a + b; });
  std::vector<double> row(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t e = P.row_ptr[i]; e < P.row_ptr[i + 1]; ++e) row[i] += P.val[e];
  const double total = std::max(fold(row), kEps);
  for (double& v : P.val) v /= total;
  return P;
}

double bh_gradient(const SparseP& P, double exaggeration, const std::vector<double>& y, int64_t k, double angle,
                   bool want_error, std::vector<double>& grad) {
  const int64_t n = P.n;
  const Kernel kernel(k);
  const SpaceTree tree(y, n, k);
  grad.assign(static_cast<size_t>(n * k), 0.0);
  std::vector<double> force(static_cast<size_t>(n * k)), zrow(static_cast<size_t>(n));
  const double theta2 = angle * angle;
  default_pool().parallel_for(n, [&](int64_t i) { tree.repulsion(i, theta2, kernel, &force[i * k], &zrow[i]); });
  const double sum_w = fold(zrow);
  const double c = kernel.step_factor();
  std::vector<double> row(static_cast<size_t>(n), 0.0);
  default_pool().parallel_for(n, [&](int64_t i) {
    double err = 0.0;
    double* g = &grad[i * k];
    for (int64_t e = P.row_ptr[i]; e < P.row_ptr[i + 1]; ++e) {
      const int64_t j = P.col[e];
      double q = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        const double v = y[i * k + t] - y[j * k + t];
        q += v * v;
      }
      const double wij = kernel(q), p = exaggeration * P.val[e];
      if (want_error) err += p * log64(std::max(p, kEps) / std::max(wij / sum_w, kEps));
      for (int64_t t = 0; t < k; ++t) g[t] += p * wij * (y[i * k + t] - y[j * k + t]);
    }
    for (int64_t t = 0; t < k; ++t) g[t] = c * (g[t] - force[i * k + t] / sum_w);
    row[i] = err;
  });
  return want_error ? fold(row) : 0.0;
}

}  // namespace tsne

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
namespace dd = density_detail;

constexpr int64_t kMaxSamples = 4096;                  // method=exact: dense n x n matrices
constexpr int64_t kMaxBarnesHutSamples = int64_t{1} << 20;  // method=barnes_hut: n x neighbors entries
constexpr int64_t kExplorationIters = 250, kCheckEvery = 50;

// The divergence (when asked) and the step at an embedding, against exaggeration * P.
using Gradient = std::function<double(double exaggeration, const std::vector<double>& y, bool want_error,
                                      std::vector<double>& grad)>;

struct Stage {
  int64_t first = 0, end = 0, without_progress = 0;
  double momentum = 0.0, exaggeration = 1.0;
};

class TSNE final : public lin::ParamEstimator {
 public:
  TSNE()
      : lin::ParamEstimator("tsne", {{"angle", K::number, "0.5", 0.0},
                                     {"early_exaggeration", K::number, "12", 1.0},
                                     {"init", K::choice, "pca", 0, {"pca", "random"}},
                                     {"learning_rate", K::number_or_word, "auto", 0.0, {"auto"}, true},
                                     {"max_iter", K::integer, "1000", 250},
                                     {"method", K::choice, "exact", 0, {"exact", "barnes_hut"}},
                                     {"metric", K::choice, "euclidean", 0, {"euclidean"}},
                                     {"min_grad_norm", K::number, "1e-07", 0.0},
                                     {"n_components", K::integer, "2", 1},
                                     {"n_iter_without_progress", K::integer, "300", -1},
                                     {"perplexity", K::number, "3e+01", 0.0, {}, true},
                                     {"random_state", K::integer, "0", 0}}) {}

  void set_params(const Params& p) override {
    lin::ParamSet next = params_;
    next.set(p);
    BL_CHECK(next.number("angle") <= 1.0, name_, ": angle=", next.number("angle"), " must be in [0, 1]");
    params_ = next;
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1), k = params_.integer("n_components");
    const bool bh = params_.text("method") == "barnes_hut";
    if (bh) {
      BL_CHECK(k <= 3, name_, ": method=barnes_hut builds a binary tree, quadtree or octree of the embedding: ",
               "n_components=", k, " must be at most 3 (use method=exact)");
      BL_CHECK(n <= kMaxBarnesHutSamples, name_, ": method=barnes_hut: at most ", kMaxBarnesHutSamples,
               " rows (exact neighbors), got ", n);
    } else {
      BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need dense ", n, " x ", n,
               " probability matrices on the host; at most ", kMaxSamples, " rows (method=barnes_hut takes more)");
    }
    const double perplexity = params_.number("perplexity"), ee = params_.number("early_exaggeration");
    BL_CHECK(perplexity < static_cast<double>(n), name_, ": perplexity=", perplexity,
             " must be less than n_samples=", n);
    kept_.keep_rows(X);
    const std::vector<float>& x = kept_.rows.x;
    Gradient gradient;
    std::vector<double> P, w;
    tsne::SparseP sparse;
    if (bh) {
      sparse = tsne::neighbor_probabilities(x, n, d, perplexity, tsne::bh_neighbors(n, perplexity));
      const double angle = params_.number("angle");
      gradient = [&sparse, angle, k](double ex, const std::vector<double>& y, bool want, std::vector<double>& g) {
        return tsne::bh_gradient(sparse, ex, y, k, angle, want, g);
      };
    } else {
      P = tsne::joint_probabilities(graph::sq_distances(x, n, d), n, perplexity);
      gradient = [&P, &w, n, k](double ex, const std::vector<double>& y, bool want, std::vector<double>& g) {
        return tsne::kl_gradient(P, ex, y, n, k, want, g, w);
      };
    }
    std::vector<double> emb = params_.text("init") == "pca" ? pca_start(X, k) : random_start(n, k);
    learning_rate_ = params_.text("learning_rate") == "auto"
                         ? std::max(static_cast<double>(n) / ee / 4.0, 50.0)
                         : params_.number("learning_rate");
    const int64_t max_iter = params_.integer("max_iter");
    double error = 0.0;
    int64_t it = descend(gradient, emb, {0, kExplorationIters, kExplorationIters, 0.5, ee}, &error);
    if (it < kExplorationIters || max_iter > kExplorationIters)
      it = descend(gradient, emb, {it + 1, max_iter, params_.integer("n_iter_without_progress"), 0.8, 1.0}, &error);
    n_iter_ = it;
    kl_divergence_ = error;
    kept_.keep_embedding(emb, k);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    const dd::HostRows& rows = kept_.rows;
    check_transform_X(X, rows.d);
    std::vector<int64_t> order(static_cast<size_t>(rows.n));
    std::iota(order.begin(), order.end(), int64_t{0});
    const std::vector<int64_t> near = dd::nearest_row_labels(rows, order, X);
    const int64_t m = X.dim(0), k = kept_.k;
    const std::vector<float>& emb = kept_.embedding;
    std::vector<float> out;
    out.reserve(static_cast<size_t>(m * k));
    for (int64_t r = 0; r < m; ++r) out.insert(out.end(), emb.begin() + near[r] * k, emb.begin() + (near[r] + 1) * k);
    return Tensor::from_vector(out, {m, k}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    kept_.save(state);
    lin::put_ints(state, {{"n_iter", n_iter_}});
    state["kl_divergence"] = dd::f64_to_hex({kl_divergence_});
    state["learning_rate_used"] = dd::f64_to_hex({learning_rate_});
  }

  void load_state(const nlohmann::json& state) override {
    kept_.load(state, name_, kMaxBarnesHutSamples);
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    kl_divergence_ = dd::f64_from_state(state, "kl_divergence", 1, name_)[0];
    learning_rate_ = dd::f64_from_state(state, "learning_rate_used", 1, name_)[0];
    fitted_ = true;
  }

 private:
  // The project's pca of X (k components), / the population std of its first column, * 1e-4.
  std::vector<double> pca_start(const Tensor& X, int64_t k) const {
    BL_CHECK(k <= X.dim(1), name_, ": init=pca needs n_components=", k, " at most n_features=", X.dim(1),
             " (use init=random)");
    auto pca = make_pca();
    pca->set_params({{"n_components", std::to_string(k)}});
    pca->fit(X, Tensor());
    const std::vector<float> z = pca->transform(X).to(Device::cpu()).contiguous().to_vector<float>();
    const int64_t n = X.dim(0);
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += z[i * k];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) var += (z[i * k] - mean) * (z[i * k] - mean);
    const double sd = std::sqrt(var / static_cast<double>(n));
    BL_CHECK(sd > 0.0, name_, ": init=pca: the first principal component of X is constant (use init=random)");
    std::vector<double> out(z.size());
    for (size_t i = 0; i < z.size(); ++i) out[i] = static_cast<double>(z[i]) / sd * 1e-4;
    return out;
  }

  std::vector<double> random_start(int64_t n, int64_t k) const {
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    std::vector<double> out(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n * k; ++i)
      out[i] = 1e-4 * static_cast<double>(normal_element(seed, 1, static_cast<uint64_t>(i)));
    return out;
  }

  // One stage of iterations s.first .. s.end - 1 on emb; returns the last iteration's index and sets
  // *error to the divergence of the last evaluation.
  int64_t descend(const Gradient& gradient, std::vector<double>& emb, const Stage& s, double* error) const {
    const double min_grad_norm = params_.number("min_grad_norm");
    std::vector<double> update(emb.size(), 0.0), gains(emb.size(), 1.0), grad;
    double best = std::numeric_limits<double>::max();
    int64_t best_iter = s.first, i = s.first;
    for (; i < s.end; ++i) {
      const bool check = (i + 1) % kCheckEvery == 0;
      const double err = gradient(s.exaggeration, emb, check || i == s.end - 1, grad);
      if (check || i == s.end - 1) *error = err;
      for (size_t t = 0; t < emb.size(); ++t) {
        gains[t] = update[t] * grad[t] < 0.0 ? gains[t] + 0.2 : gains[t] * 0.8;
        gains[t] = std::max(gains[t], 0.01);
        grad[t] *= gains[t];
        update[t] = s.momentum * update[t] - learning_rate_ * grad[t];
        emb[t] += update[t];
      }
      if (!check) continue;
      if (err < best) {
        best = err;
        best_iter = i;
      } else if (i - best_iter > s.without_progress) {
        break;
      }
      double norm = 0.0;
      for (double g : grad) norm += g * g;
      if (std::sqrt(norm) <= min_grad_norm) break;
    }
    return std::min(i, s.end - 1);
  }

  manifold::TrainingEmbedding kept_;  // the training rows and their embedding
  double kl_divergence_ = 0.0, learning_rate_ = 0.0;
  int64_t n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_tsne() { return std::make_unique<TSNE>(); }

}  // namespace bl::ml
