// spectral_embedding.cpp: spectral_embedding (scikit-learn's SpectralEmbedding, Laplacian
// eigenmaps): the rows embedded by the smallest eigenvectors of the normalized graph Laplacian of
// their affinity, the first (constant up to the degrees) dropped.
//
// All in binary64 on the host (at most 4096 rows). Affinity and normalization are those of
// spectral_clustering (ml/manifold/neighbor_graph.h): affinity=nearest_neighbors, C_ij = 1 when j
// is one of the n_neighbors rows nearest to i (i itself included; n_neighbors none = max(floor(n /
// 10), 1)), A = (C + C^T) / 2; affinity=rbf, A_ij = exp64(-gamma |x_i - x_j|^2) (gamma none = 1 /
// n_features). With degrees d_i over j != i and s_i = sqrt(d_i) (1 where d_i = 0), the Laplacian's
// n_components + 1 smallest eigenvectors are the largest of M = S^-1 A' S^-1, found by
// shift_invert_top_eigen64 with sigma = 1 + 1e-6 (block Lanczos on (sigma I - M)^-1; symmetric_eigen64
// below 256 rows, for many components or when the Lanczos pairs miss the residual bound). Row t of the embedding before the drop is v_t / s,
// scaled so that its entry of largest magnitude (lowest index among ties) is positive (scikit-learn's
// deterministic sign flip); the embedding is rows 1..n_components, transposed to [n, n_components].
// scikit-learn's SpectralEmbedding has no transform, and the Python class has none either; the
// library's transform (the command line's --output transform) gives each new row the embedding of its
// nearest training row (binary64 squared distances, the lowest index among ties).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "ml/cluster/density_clustering.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/decomposition/optional_count.h"
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
namespace dd = density_detail;

constexpr int64_t kMaxSamples = 4096;
// sigma - 1 of the shift-invert solve: far enough above 1 that sigma I - M factors (M's largest
// eigenvalue is 1 up to rounding), near enough that 1 / (sigma - lambda) pulls the cluster apart.
constexpr double kShift = 1e-6;

class SpectralEmbedding final : public lin::ParamEstimator {
 public:
  SpectralEmbedding()
      : lin::ParamEstimator("spectral_embedding",
                            {{"affinity", K::choice, "nearest_neighbors", 0, {"nearest_neighbors", "rbf"}},
                             {"gamma", K::number_or_word, "none", 0.0, {"none"}, true},
                             {"n_components", K::integer, "2", 1},
                             {"n_neighbors", K::number_or_word, "none", 1.0, {"none"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const int64_t n = X.dim(0), d = X.dim(1), k = params_.integer("n_components");
    BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need a dense ", n, " x ", n,
             " eigen-decomposition on the host; at most ", kMaxSamples, " rows");
    BL_CHECK(k < n, name_, ": n_components=", k, " must be below n_samples=", n,
             " (the first eigenvector is dropped)");
    const bool rbf = params_.text("affinity") == "rbf";
    const int64_t nn = dec::optional_count(params_, name_, "n_neighbors", std::max<int64_t>(n / 10, 1));
    BL_CHECK(rbf || nn <= n, name_, ": n_neighbors=", nn, " is more than n_samples=", n);
    const double gamma = params_.text("gamma") == "none" ? 1.0 / static_cast<double>(d) : params_.number("gamma");
    rows_.x = X.to(Device::cpu()).contiguous().to_vector<float>();
    rows_.n = n;
    rows_.d = d;
    graph::NormalizedAffinity na = graph::normalized_affinity(rows_.x, n, d, gamma, rbf ? 0 : nn);
    // M's eigenvalues lie in [-1, 1] and the wanted ones cluster at 1: shift-invert just above 1.
    SymmetricEigen64 eig = shift_invert_top_eigen64(na.M, n, k + 1, 1.0 + kShift, "spectral_embedding");
    na.M = std::vector<double>();
    std::vector<double> v(static_cast<size_t>((k + 1) * n));
    for (int64_t t = 0; t <= k; ++t)
      for (int64_t i = 0; i < n; ++i) v[t * n + i] = eig.vectors[t * n + i] / na.s[i];
    dec::flip_rows_by_largest(v, k + 1, n);
    k_ = k;
    embedding_.resize(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < k; ++t) embedding_[i * k + t] = static_cast<float>(v[(t + 1) * n + i]);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, rows_.d);
    std::vector<int64_t> index(static_cast<size_t>(rows_.n));
    std::iota(index.begin(), index.end(), int64_t{0});
    const std::vector<int64_t> near = dd::nearest_row_labels(rows_, index, X);
    const int64_t m = X.dim(0), k = k_;
    std::vector<float> out(static_cast<size_t>(m * k));
    for (int64_t r = 0; r < m; ++r)
      std::copy_n(embedding_.begin() + near[r] * k, k, out.begin() + r * k);
    return Tensor::from_vector(out, {m, k}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_embedding_sizes(state, {rows_.d, rows_.n, k_});
    lin::put_f32s(state, {{"training_rows", rows_.x}, {"embedding", embedding_}});
  }

  void load_state(const nlohmann::json& state) override {
    const dec::EmbeddingSizes sizes = dec::get_embedding_sizes(state, name_, kMaxSamples);
    const int64_t d = sizes.d, n = sizes.n;
    k_ = sizes.k;
    BL_CHECK(k_ < n && d <= (int64_t{1} << 40) / n, name_, ": model state: n_components ", k_,
             " must be below n_samples ", n, " and n_samples x n_features at most 2^40");
    rows_.x = lin::get_f32(state, "training_rows", n * d, name_);
    rows_.n = n;
    rows_.d = d;
    embedding_ = lin::get_f32(state, "embedding", n * k_, name_);
    fitted_ = true;
  }

 private:
  dd::HostRows rows_;
  std::vector<float> embedding_;
  int64_t k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_spectral_embedding() { return std::make_unique<SpectralEmbedding>(); }

}  // namespace bl::ml
