// mds.cpp: mds (scikit-learn's MDS), metric multidimensional scaling by SMACOF. The embedding of the
// training rows is the model; scikit-learn's MDS has no transform for new rows, and the Python class
// has none either. The library's transform (the command line's --output transform) places each new
// row alone against the fixed embedding (below).
//
// All in binary64 on the host. Dissimilarities D: the Euclidean distances of the rows (sums over the
// features in ascending order, then sqrt), or X itself with metric=precomputed (square, symmetric,
// non-negative). Start: init=random, n_init runs, run r from Philox uniforms in [0, 1)
// (uniform_element(random_state, stream 1 + r, i * n_components + t)); init=classical_mds, one run
// from classical scaling: the eigen-decomposition (symmetric_eigen64) of -1/2 J D^2 J, coordinates
// u_t sqrt(max(lambda_t, 0)). Each SMACOF iteration, the Guttman transform X <- B X / n with
// B_ij = -D_ij / dist_ij (dist the current distances, 0 replaced by 1e-5), B_ii = sum_{j != i} D_ij /
// dist_ij; stress = sum over ordered pairs (dist - D)^2 / 2; stop when (old stress - stress) /
// (sum of squared distances / 2) < eps. normalized_stress=true reports sqrt(stress / (sum dist^2 / 2))
// (Stress-1); max_iter without meeting eps ends a run silently, as scikit-learn's. The run of lowest stress is kept (the first among equals). Worker-pool tasks own whole
// rows and per-row partial sums are folded in row order, so the bits do not depend on the thread count.
// transform(Y): each row's dissimilarities delta_j to the training rows (Euclidean, or Y's row itself
// with metric=precomputed); the point starts at the embedding of the nearest training row (lowest
// index among ties) and takes the single-point Guttman update y <- (1/n) sum_j (z_j + delta_j (y -
// z_j) / |y - z_j|) (0 read as 1e-5) until it moves by at most 1e-7 (1 + max |y|), max_iter times at
// most; a training row is a fixed point of a converged embedding (SMACOF keeps it centered).
#include <algorithm>
#include <cmath>

#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr int64_t kMaxSamples = 4096;

// Euclidean distances between the rows of x [n, k] (each pair summed over k in order; a row's
// distances by one task).
std::vector<double> row_distances(const std::vector<double>& x, int64_t n, int64_t k) {
  std::vector<double> out(static_cast<size_t>(n * n));
  default_pool().parallel_for(n, [&](int64_t i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        const double v = x[i * k + t] - x[j * k + t];
        s += v * v;
      }
      out[i * n + j] = std::sqrt(s);
    }
  });
  return out;
}

struct Run {
  std::vector<double> x;
  double stress = 0.0;
  int64_t n_iter = 0;
};

class MDS final : public lin::ParamEstimator {
 public:
  MDS()
      : lin::ParamEstimator("mds", {{"eps", K::number, "1e-06", 0.0},
                                    {"init", K::choice, "random", 0, {"random", "classical_mds"}},
                                    {"max_iter", K::integer, "300", 1},
                                    {"metric", K::choice, "euclidean", 0, {"euclidean", "precomputed"}},
                                    {"n_components", K::integer, "2", 1},
                                    {"n_init", K::integer, "1", 1},
                                    {"normalized_stress", K::boolean, "false"},
                                    {"random_state", K::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need a ", n, " x ", n,
             " dissimilarity matrix on the host; at most ", kMaxSamples, " rows");
    const int64_t k = params_.integer("n_components");
    std::vector<double> xh = dec::to_host64(X);
    std::vector<double> diss;
    if (params_.text("metric") == "precomputed") {
      BL_CHECK(n == d, name_, ": metric=precomputed needs a square dissimilarity matrix, got ", n, " x ", d);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          BL_CHECK(xh[i * n + j] >= 0.0, name_, ": the precomputed dissimilarities hold a negative value");
          BL_CHECK(xh[i * n + j] == xh[j * n + i], name_, ": the precomputed dissimilarity matrix is not symmetric");
        }
      diss = xh;
    } else {
      diss = row_distances(xh, n, d);
    }
    const bool classical = params_.text("init") == "classical_mds";
    const int64_t runs = classical ? 1 : params_.integer("n_init");
    Run best;
    bool have = false;
    for (int64_t r = 0; r < runs; ++r) {
      std::vector<double> x0 = classical ? classical_start(diss, n, k) : random_start(n, k, r);
      Run run = smacof(diss, std::move(x0), n, k);
      if (!have || run.stress < best.stress) {
        best = std::move(run);
        have = true;
      }
    }
    n_ = n;
    k_ = k;
    d_ = d;
    n_iter_ = best.n_iter;
    embedding_.assign(best.x.begin(), best.x.end());
    x_fit_.clear();
    if (params_.text("metric") != "precomputed") x_fit_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    stress_ = static_cast<float>(best.stress);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const int64_t m = X.dim(0), n = n_, k = k_;
    const std::vector<double> xh = dec::to_host64(X);
    const bool pre = params_.text("metric") == "precomputed";
    const int64_t max_iter = params_.integer("max_iter");
    std::vector<float> out(static_cast<size_t>(m * k));
    default_pool().parallel_for(m, [&](int64_t r) {
      std::vector<double> delta(static_cast<size_t>(n)), y(static_cast<size_t>(k)), next(static_cast<size_t>(k));
      int64_t near = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (pre) {
          delta[j] = xh[r * n + j];
        } else {
          double s = 0.0;
          for (int64_t f = 0; f < d_; ++f) {
            const double v = xh[r * d_ + f] - static_cast<double>(x_fit_[j * d_ + f]);
            s += v * v;
          }
          delta[j] = std::sqrt(s);
        }
        if (delta[j] < delta[near]) near = j;
      }
      for (int64_t t = 0; t < k; ++t) y[t] = embedding_[near * k + t];
      for (int64_t it = 0; it < max_iter; ++it) {
        std::fill(next.begin(), next.end(), 0.0);
        for (int64_t j = 0; j < n; ++j) {
          double s = 0.0;
          for (int64_t t = 0; t < k; ++t) {
            const double v = y[t] - static_cast<double>(embedding_[j * k + t]);
            s += v * v;
          }
          const double dist = s == 0.0 ? 1e-5 : std::sqrt(s), ratio = delta[j] / dist;
          for (int64_t t = 0; t < k; ++t) {
            const double z = embedding_[j * k + t];
            next[t] += z + ratio * (y[t] - z);
          }
        }
        double move = 0.0, size = 0.0;
        for (int64_t t = 0; t < k; ++t) {
          next[t] /= static_cast<double>(n);
          move = std::max(move, std::fabs(next[t] - y[t]));
          size = std::max(size, std::fabs(next[t]));
        }
        y.swap(next);
        if (move <= 1e-7 * (1.0 + size)) break;
      }
      for (int64_t t = 0; t < k; ++t) out[r * k + t] = static_cast<float>(y[t]);
    });
    return Tensor::from_vector(out, {m, k}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}, {"n_components", k_}, {"n_iter", n_iter_}});
    lin::put_f32s(state, {{"embedding", embedding_}, {"stress", {stress_}}});
    if (params_.text("metric") != "precomputed") lin::put_f32(state, "training_rows", x_fit_);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 2, name_);
    BL_CHECK(n_ <= kMaxSamples, name_, ": model state: n_samples is more than ", kMaxSamples);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= (int64_t{1} << 20), name_, ": model state: n_components ", k_, " is too large");
    n_iter_ = lin::get_int(state, "n_iter", 1, name_);
    embedding_ = lin::get_f32(state, "embedding", n_ * k_, name_);
    stress_ = lin::get_f32(state, "stress", 1, name_)[0];
    const bool pre = state.contains("training_rows") ? false : true;
    params_.set({{"metric", pre ? "precomputed" : "euclidean"}});
    BL_CHECK(!pre || d_ == n_, name_, ": model state: a precomputed model needs n_features = n_samples");
    x_fit_.clear();
    if (!pre) x_fit_ = lin::get_f32(state, "training_rows", n_ * d_, name_);
    fitted_ = true;
  }

 private:

  std::vector<double> random_start(int64_t n, int64_t k, int64_t run) const {
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    std::vector<double> x(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n * k; ++i)
      x[i] = uniform_element(seed, static_cast<uint64_t>(1 + run), static_cast<uint64_t>(i));
    return x;
  }

  // Classical scaling: -1/2 J D^2 J (J the centering) decomposed; u_t sqrt(max(lambda_t, 0)).
  std::vector<double> classical_start(const std::vector<double>& diss, int64_t n, int64_t k) const {
    BL_CHECK(k <= n, name_, ": n_components=", k, " must be at most n_samples=", n, " for init=classical_mds");
    std::vector<double> b(static_cast<size_t>(n * n));
    for (size_t i = 0; i < b.size(); ++i) b[i] = diss[i] * diss[i];
    const std::vector<double> c = dec::column_means(b, n, n);  // D symmetric: the row means too
    dec::center_lower(b, n, c, c, dec::mean64(c));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) b[i * n + j] *= -0.5;
    SymmetricEigen64 e = symmetric_eigen64(b, n, k, "mds");
    std::vector<double> x(static_cast<size_t>(n * k));
    for (int64_t t = 0; t < k; ++t) {
      const double s = std::sqrt(std::max(e.values[t], 0.0));
      for (int64_t i = 0; i < n; ++i) x[i * k + t] = e.vectors[t * n + i] * s;
    }
    return x;
  }

  // One SMACOF run from x; max_iter without meeting eps ends it silently, as scikit-learn's.
  Run smacof(const std::vector<double>& diss, std::vector<double> x, int64_t n, int64_t k) const {
    const int64_t max_iter = params_.integer("max_iter");
    const double eps = params_.number("eps");
    std::vector<double> dist = row_distances(x, n, k), next(static_cast<size_t>(n * k));
    std::vector<double> row_stress(static_cast<size_t>(n)), row_sq(static_cast<size_t>(n));
    double old_stress = 0.0, stress = 0.0, sq = 0.0;
    int64_t it = 0;
    while (it < max_iter) {
      ++it;
      // Guttman transform: row i of B X / n.
      default_pool().parallel_for(n, [&](int64_t i) {
        double diag = 0.0;
        std::vector<double> acc(static_cast<size_t>(k), 0.0);
        for (int64_t j = 0; j < n; ++j) {
          const double dj = dist[i * n + j] == 0.0 ? 1e-5 : dist[i * n + j];
          const double ratio = diss[i * n + j] / dj;
          diag += ratio;
          for (int64_t t = 0; t < k; ++t) acc[t] -= ratio * x[j * k + t];
        }
        for (int64_t t = 0; t < k; ++t) next[i * k + t] = (acc[t] + diag * x[i * k + t]) / static_cast<double>(n);
      });
      x.swap(next);
      dist = row_distances(x, n, k);
      default_pool().parallel_for(n, [&](int64_t i) {
        double s = 0.0, q = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          const double v = dist[i * n + j] - diss[i * n + j];
          s += v * v;
          q += dist[i * n + j] * dist[i * n + j];
        }
        row_stress[i] = s;
        row_sq[i] = q;
      });
      stress = 0.0;
      sq = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        stress += row_stress[i];
        sq += row_sq[i];
      }
      stress /= 2.0;
      if (it > 1 && (old_stress - stress) / (sq / 2.0) < eps) break;
      old_stress = stress;
    }
    Run run;
    run.stress = params_.boolean("normalized_stress") ? std::sqrt(stress / (sq / 2.0)) : stress;
    run.x = std::move(x);
    run.n_iter = it;
    return run;
  }

  std::vector<float> embedding_, x_fit_;
  float stress_ = 0.0f;
  int64_t n_ = 0, k_ = 0, d_ = 0, n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_mds() { return std::make_unique<MDS>(); }

}  // namespace bl::ml
