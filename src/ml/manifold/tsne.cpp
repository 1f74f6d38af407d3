// tsne.cpp: tsne (scikit-learn's TSNE with method=exact), t-distributed stochastic neighbor
// embedding by gradient descent on the exact Kullback-Leibler divergence.
//
// All in binary64 on the host (at most 4096 rows), rounded to binary32 at the end. Squared Euclidean
// distances of the rows (ml/manifold/neighbor_graph.h); P by tsne::joint_probabilities (tsne.h: a
// binary search of each row's precision for entropy ln(perplexity), then symmetrized and normalized).
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
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace tsne {

namespace {
constexpr double kEps = std::numeric_limits<double>::epsilon();

// The sum of v[0..n) in index order.
double fold(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s;
}
}  // namespace

std::vector<double> joint_probabilities(const std::vector<double>& sq, int64_t n, double perplexity) {
  std::vector<double> c(static_cast<size_t>(n * n), 0.0);
  const double target = log64(perplexity);
  default_pool().parallel_for(n, [&](int64_t i) {
    std::vector<double> d(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) d[j] = static_cast<double>(static_cast<float>(sq[i * n + j]));
    double* p = &c[i * n];
    const double inf = std::numeric_limits<double>::infinity();
    double lo = -inf, hi = inf, beta = 1.0;
    for (int step = 0; step < 100; ++step) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        p[j] = j == i ? 0.0 : exp64(-d[j] * beta);
        sum += p[j];
      }
      if (sum == 0.0) sum = 1e-8;
      double mean_d = 0.0;
      for (int64_t j = 0; j < n; ++j) {
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
  const int64_t dof = std::max<int64_t>(k - 1, 1), half = (dof + 1) / 2;
  const bool odd = (dof + 1) % 2 != 0;
  w.assign(static_cast<size_t>(n * n), 0.0);
  grad.assign(static_cast<size_t>(n * k), 0.0);
  std::vector<double> row(static_cast<size_t>(n));
  // w_ij = base^(-(dof + 1) / 2): 1 / (base^half), times 1 / sqrt(base) when dof + 1 is odd.
  default_pool().parallel_for(n, [&](int64_t i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double q = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        const double v = y[i * k + t] - y[j * k + t];
        q += v * v;
      }
      const double base = 1.0 + q / static_cast<double>(dof);
      double pw = 1.0;
      for (int64_t e = 0; e < half; ++e) pw *= base;
      if (odd) pw *= std::sqrt(base);
      w[i * n + j] = 1.0 / pw;
      s += w[i * n + j];
    }
    row[i] = s;
  });
  const double sum_w = fold(row);
  const double c = 2.0 * static_cast<double>(dof + 1) / static_cast<double>(dof);
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

}  // namespace tsne

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;
namespace dd = density_detail;

constexpr int64_t kMaxSamples = 4096;
constexpr int64_t kExplorationIters = 250, kCheckEvery = 50;

struct Stage {
  int64_t first = 0, end = 0, without_progress = 0;
  double momentum = 0.0, exaggeration = 1.0;
};

class TSNE final : public lin::ParamEstimator {
 public:
  TSNE()
      : lin::ParamEstimator("tsne", {{"early_exaggeration", K::number, "12", 1.0},
                                     {"init", K::choice, "pca", 0, {"pca", "random"}},
                                     {"learning_rate", K::number_or_word, "auto", 0.0, {"auto"}, true},
                                     {"max_iter", K::integer, "1000", 250},
                                     {"method", K::choice, "exact", 0, {"exact"}},
                                     {"metric", K::choice, "euclidean", 0, {"euclidean"}},
                                     {"min_grad_norm", K::number, "1e-07", 0.0},
                                     {"n_components", K::integer, "2", 1},
                                     {"n_iter_without_progress", K::integer, "300", -1},
                                     {"perplexity", K::number, "3e+01", 0.0, {}, true},
                                     {"random_state", K::integer, "0", 0}}) {}

  void set_params(const Params& p) override {
    const auto m = p.find("method");
    BL_CHECK(m == p.end() || m->second != "barnes_hut", name_,
             ": method=barnes_hut (the Barnes-Hut approximation) is not available; only method=exact");
    BL_CHECK(p.find("angle") == p.end(), name_,
             ": angle is a parameter of method=barnes_hut, which is not available; only method=exact");
    params_.set(p);
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1), k = params_.integer("n_components");
    BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need dense ", n, " x ", n,
             " probability matrices on the host; at most ", kMaxSamples, " rows");
    const double perplexity = params_.number("perplexity"), ee = params_.number("early_exaggeration");
    BL_CHECK(perplexity < static_cast<double>(n), name_, ": perplexity=", perplexity,
             " must be less than n_samples=", n);
    rows_.x = X.to(Device::cpu()).contiguous().to_vector<float>();
    rows_.n = n;
    rows_.d = d;
    const std::vector<double> P = tsne::joint_probabilities(graph::sq_distances(rows_.x, n, d), n, perplexity);
    std::vector<double> emb = params_.text("init") == "pca" ? pca_start(X, k) : random_start(n, k);
    learning_rate_ = params_.text("learning_rate") == "auto"
                         ? std::max(static_cast<double>(n) / ee / 4.0, 50.0)
                         : params_.number("learning_rate");
    const int64_t max_iter = params_.integer("max_iter");
    double error = 0.0;
    int64_t it = descend(P, emb, n, k, {0, kExplorationIters, kExplorationIters, 0.5, ee}, &error);
    if (it < kExplorationIters || max_iter > kExplorationIters)
      it = descend(P, emb, n, k, {it + 1, max_iter, params_.integer("n_iter_without_progress"), 0.8, 1.0}, &error);
    k_ = k;
    n_iter_ = it;
    kl_divergence_ = error;
    embedding_.assign(emb.begin(), emb.end());
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, rows_.d);
    std::vector<int64_t> order(static_cast<size_t>(rows_.n));
    std::iota(order.begin(), order.end(), int64_t{0});
    const std::vector<int64_t> near = dd::nearest_row_labels(rows_, order, X);
    const int64_t m = X.dim(0);
    std::vector<float> out;
    out.reserve(static_cast<size_t>(m * k_));
    for (int64_t r = 0; r < m; ++r)
      out.insert(out.end(), embedding_.begin() + near[r] * k_, embedding_.begin() + (near[r] + 1) * k_);
    return Tensor::from_vector(out, {m, k_}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_embedding_sizes(state, {rows_.d, rows_.n, k_});
    lin::put_ints(state, {{"n_iter", n_iter_}});
    lin::put_f32s(state, {{"training_rows", rows_.x}, {"embedding", embedding_}});
    state["kl_divergence"] = dd::f64_to_hex({kl_divergence_});
    state["learning_rate_used"] = dd::f64_to_hex({learning_rate_});
  }

  void load_state(const nlohmann::json& state) override {
    const dec::EmbeddingSizes sizes = dec::get_embedding_sizes(state, name_, kMaxSamples);
    BL_CHECK(sizes.d <= (int64_t{1} << 40) / sizes.n, name_,
             ": model state: n_samples x n_features is more than 2^40");
    rows_.n = sizes.n;
    rows_.d = sizes.d;
    k_ = sizes.k;
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    rows_.x = lin::get_f32(state, "training_rows", rows_.n * rows_.d, name_);
    embedding_ = lin::get_f32(state, "embedding", rows_.n * k_, name_);
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
  int64_t descend(const std::vector<double>& P, std::vector<double>& emb, int64_t n, int64_t k, const Stage& s,
                  double* error) const {
    const double min_grad_norm = params_.number("min_grad_norm");
    std::vector<double> update(emb.size(), 0.0), gains(emb.size(), 1.0), grad, w;
    double best = std::numeric_limits<double>::max();
    int64_t best_iter = s.first, i = s.first;
    for (; i < s.end; ++i) {
      const bool check = (i + 1) % kCheckEvery == 0;
      const double err = tsne::kl_gradient(P, s.exaggeration, emb, n, k, check || i == s.end - 1, grad, w);
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

  dd::HostRows rows_;
  std::vector<float> embedding_;
  double kl_divergence_ = 0.0, learning_rate_ = 0.0;
  int64_t k_ = 0, n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_tsne() { return std::make_unique<TSNE>(); }

}  // namespace bl::ml
