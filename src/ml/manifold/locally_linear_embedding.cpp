// locally_linear_embedding.cpp: locally_linear_embedding (scikit-learn's LocallyLinearEmbedding with
// method=standard or ltsa; the modified and hessian methods are refused by name).
//
// All in binary64 on the host (at most 4096 rows). Neighbors: each row's n_neighbors nearest other
// rows (squared distances of ml/manifold/neighbor_graph.h, ascending, the lower index first among
// equals). Barycenter weights of a point p on its neighbors x_a: C_a = x_a - p, the Gram matrix
// G_ab = sum_f C_af C_bf (feature order), R = reg * trace(G) (reg where the trace is 0) added to the
// diagonal, G w = 1 solved by Cholesky (ml/gaussian_process: forward then backward substitution),
// w / sum_a w_a (a ascending). Fit, method=standard: W [n, n] holds each row's weights on its
// neighbors; M = (I - W)^T (I - W), each entry summed over the rows r of I - W in ascending order (one
// thread); method=ltsa: M sums I - G G^T over the rows' neighborhoods (local tangent space alignment,
// ltsa_matrix below; one thread, rows ascending). The
// n_components + 1 smallest eigenvectors of M are the largest of -M, found by shift_invert_top_eigen64
// with sigma = 1e-6 max_i M_ii (block Lanczos on (sigma I + M)^-1; symmetric_eigen64 below 256 rows,
// for many components or when the Lanczos pairs miss the residual bound; each vector's entry of
// largest magnitude positive). The first (the constant vector, eigenvalue
// ~0) is dropped; the embedding's column t is eigenvector t + 1 (unit norm), and
// reconstruction_error_ is the sum of those n_components eigenvalues of M (t ascending).
// transform(Y): each new row's n_neighbors nearest training rows (a training row counts as a
// neighbor of itself), its barycenter weights on them, and the weighted sum of their embedding rows
// (neighbors in ascending distance). Weights and transform rows are one pool task each.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/decomposition/partial_eigen64.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/linear/common.h"
#include "ml/manifold/neighbor_graph.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr int64_t kMaxSamples = 4096;
// sigma / max_i M_ii of the shift-invert solve: sigma I + M factors (M is positive semi-definite)
// while 1 / (sigma - lambda) pulls the cluster at 0 apart.
constexpr double kShift = 1e-6;

// The barycenter weights w [k] of the point p [d] on the rows nb of x [., d] (see the file comment);
// false when the regularized Gram matrix is not positive definite.
bool barycenter_weights(const float* p, const std::vector<float>& x, int64_t d, const std::vector<int64_t>& nb,
                        double reg, std::vector<double>& w) {
  const int64_t k = static_cast<int64_t>(nb.size());
  std::vector<double> c(static_cast<size_t>(k * d)), g(static_cast<size_t>(k * k));
  for (int64_t a = 0; a < k; ++a)
    for (int64_t f = 0; f < d; ++f)
      c[a * d + f] = static_cast<double>(x[nb[a] * d + f]) - static_cast<double>(p[f]);
  double trace = 0.0;
  for (int64_t a = 0; a < k; ++a) {
    for (int64_t b = 0; b < k; ++b) {
      double s = 0.0;
      for (int64_t f = 0; f < d; ++f) s += c[a * d + f] * c[b * d + f];
      g[a * k + b] = s;
    }
    trace += g[a * k + a];
  }
  const double r = trace > 0.0 ? reg * trace : reg;
  for (int64_t a = 0; a < k; ++a) g[a * k + a] += r;
  std::vector<double> L;
  if (!gp::cholesky64(g, k, L)) return false;
  w.assign(static_cast<size_t>(k), 1.0);
  gp::forward(L, k, w);
  gp::backward(L, k, w);
  double sum = 0.0;
  for (double v : w) sum += v;
  for (double& v : w) v /= sum;
  return true;
}

class LocallyLinearEmbedding final : public lin::ParamEstimator {
 public:
  LocallyLinearEmbedding()
      : lin::ParamEstimator("locally_linear_embedding", {{"method", K::choice, "standard", 0, {"standard", "ltsa"}},
                                                         {"n_components", K::integer, "2", 1},
                                                         {"n_neighbors", K::integer, "5", 1},
                                                         {"reg", K::number, "0.001", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t nn = params_.integer("n_neighbors"), k = params_.integer("n_components");
    BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need a dense ", n, " x ", n,
             " eigen-decomposition on the host; at most ", kMaxSamples, " rows");
    BL_CHECK(nn < n, name_, ": n_neighbors=", nn, " must be below n_samples=", n);
    BL_CHECK(k <= d, name_, ": n_components=", k, " must be at most n_features=", d);
    BL_CHECK(k < n, name_, ": n_components=", k, " must be below n_samples=", n);
    BL_CHECK(params_.text("method") != "ltsa" || k <= nn, name_, ": method=ltsa needs n_components=", k,
             " at most n_neighbors=", nn);
    const double reg = params_.number("reg");
    x_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    n_ = n;
    d_ = d;
    k_ = k;
    nn_ = nn;
    const std::vector<double> dist2 = graph::sq_distances(x_, n, d);
    std::vector<std::vector<int64_t>> nb(static_cast<size_t>(n));
    default_pool().parallel_for(n, [&](int64_t i) { nb[i] = graph::k_nearest(&dist2[i * n], n, nn, i); });
    std::vector<double> neg_m(static_cast<size_t>(n * n), 0.0);
    if (params_.text("method") == "ltsa") ltsa_matrix(nb, neg_m);
    else standard_matrix(nb, reg, neg_m);
    // -M's eigenvalues are <= 0 and the wanted ones cluster at 0: shift-invert just above 0, scaled
    // by M's largest diagonal entry.
    double dmax = 0.0;
    for (int64_t i = 0; i < n; ++i) dmax = std::max(dmax, -neg_m[i * n + i]);
    SymmetricEigen64 eig = shift_invert_top_eigen64(neg_m, n, k + 1, kShift * dmax, "locally_linear_embedding");
    embedding_.resize(static_cast<size_t>(n * k));
    double err = 0.0;
    for (int64_t t = 0; t < k; ++t) {
      err += -eig.values[t + 1];
      for (int64_t i = 0; i < n; ++i) embedding_[i * k + t] = static_cast<float>(eig.vectors[(t + 1) * n + i]);
    }
    error_ = static_cast<float>(err);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const int64_t m = X.dim(0), n = n_, k = k_, d = d_;
    const std::vector<float> q = X.to(Device::cpu()).contiguous().to_vector<float>();
    const double reg = params_.number("reg");
    std::vector<float> out(static_cast<size_t>(m * k));
    std::vector<char> ok(static_cast<size_t>(m), 1);
    default_pool().parallel_for(m, [&](int64_t r) {
      std::vector<double> dist2(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) dist2[j] = density_detail::sq_distance(q.data() + r * d, x_.data() + j * d, d);
      const std::vector<int64_t> nb = graph::k_nearest(dist2.data(), n, nn_, -1);
      std::vector<double> w;
      if (!barycenter_weights(q.data() + r * d, x_, d, nb, reg, w)) {
        ok[r] = 0;
        return;
      }
      for (int64_t t = 0; t < k; ++t) {
        double s = 0.0;
        for (int64_t a = 0; a < nn_; ++a) s += w[a] * static_cast<double>(embedding_[nb[a] * k + t]);
        out[r * k + t] = static_cast<float>(s);
      }
    });
    for (int64_t r = 0; r < m; ++r)
      BL_CHECK(ok[r], name_, ": the local Gram matrix of row ", r, " is singular (raise reg above ", reg, ")");
    return Tensor::from_vector(out, {m, k}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_embedding_sizes(state, {d_, n_, k_});
    lin::put_f32s(state, {{"training_rows", x_}, {"embedding", embedding_}, {"reconstruction_error", {error_}}});
  }

  void load_state(const nlohmann::json& state) override {
    const dec::EmbeddingSizes sizes = dec::get_embedding_sizes(state, name_, kMaxSamples);
    d_ = sizes.d;
    n_ = sizes.n;
    k_ = sizes.k;
    BL_CHECK(k_ < n_ && d_ <= (int64_t{1} << 40) / n_, name_, ": model state: n_components ", k_,
             " must be below n_samples ", n_, " and n_samples x n_features at most 2^40");
    nn_ = params_.integer("n_neighbors");
    BL_CHECK(nn_ < n_, name_, ": model state: n_neighbors=", nn_, " must be below n_samples=", n_);
    x_ = lin::get_f32(state, "training_rows", n_ * d_, name_);
    embedding_ = lin::get_f32(state, "embedding", n_ * k_, name_);
    error_ = lin::get_f32(state, "reconstruction_error", 1, name_)[0];
    fitted_ = true;
  }

 private:
  // -M for method=standard: -(I - W)^T (I - W), the row r of I - W holding 1 at r and -w at its
  // neighbors (rows r ascending).
  void standard_matrix(const std::vector<std::vector<int64_t>>& nb, double reg, std::vector<double>& neg_m) const {
    const int64_t n = n_, nn = nn_;
    std::vector<std::vector<double>> w(static_cast<size_t>(n));
    std::vector<char> ok(static_cast<size_t>(n), 1);
    default_pool().parallel_for(n, [&](int64_t i) {
      ok[i] = barycenter_weights(x_.data() + i * d_, x_, d_, nb[i], reg, w[i]) ? 1 : 0;
    });
    for (int64_t i = 0; i < n; ++i)
      BL_CHECK(ok[i], name_, ": the local Gram matrix of row ", i, " is singular (raise reg above ", reg, ")");
    std::vector<int64_t> cols;
    std::vector<double> vals;
    for (int64_t r = 0; r < n; ++r) {
      cols.assign(1, r);
      vals.assign(1, 1.0);
      for (int64_t a = 0; a < nn; ++a) {
        cols.push_back(nb[r][a]);
        vals.push_back(-w[r][a]);
      }
      for (size_t p = 0; p < cols.size(); ++p)
        for (size_t q = 0; q < cols.size(); ++q) neg_m[cols[p] * n + cols[q]] -= vals[p] * vals[q];
    }
  }

  // -M for method=ltsa: for each row r (ascending), its neighbors' rows centered (means in row order),
  // V the n_components leading eigenvectors of their Gram matrix C (k x k, sums in feature order;
  // symmetric_eigen64), G = [1 / sqrt(k), V]; M[nb, nb] += I - G G^T.
  void ltsa_matrix(const std::vector<std::vector<int64_t>>& nb, std::vector<double>& neg_m) const {
    const int64_t n = n_, k = nn_, d = d_, nc = k_;
    std::vector<double> xc(static_cast<size_t>(k * d)), c(static_cast<size_t>(k * k));
    const double c0 = 1.0 / std::sqrt(static_cast<double>(k));
    for (int64_t r = 0; r < n; ++r) {
      const std::vector<int64_t>& idx = nb[r];
      for (int64_t f = 0; f < d; ++f) {
        double mean = 0.0;
        for (int64_t a = 0; a < k; ++a) mean += static_cast<double>(x_[idx[a] * d + f]);
        mean /= static_cast<double>(k);
        for (int64_t a = 0; a < k; ++a) xc[a * d + f] = static_cast<double>(x_[idx[a] * d + f]) - mean;
      }
      for (int64_t a = 0; a < k; ++a)
        for (int64_t b = 0; b < k; ++b) {
          double s = 0.0;
          for (int64_t f = 0; f < d; ++f) s += xc[a * d + f] * xc[b * d + f];
          c[a * k + b] = s;
        }
      const SymmetricEigen64 e = symmetric_eigen64(c, k, nc, "locally_linear_embedding");
      for (int64_t a = 0; a < k; ++a)
        for (int64_t b = 0; b < k; ++b) {
          double g = c0 * c0;
          for (int64_t t = 0; t < nc; ++t) g += e.vectors[t * k + a] * e.vectors[t * k + b];
          neg_m[idx[a] * n + idx[b]] += g - (a == b ? 1.0 : 0.0);
        }
    }
  }

  std::vector<float> x_, embedding_;
  float error_ = 0.0f;
  int64_t n_ = 0, d_ = 0, k_ = 0, nn_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_locally_linear_embedding() { return std::make_unique<LocallyLinearEmbedding>(); }

}  // namespace bl::ml
