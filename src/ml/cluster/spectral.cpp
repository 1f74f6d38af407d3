// spectral.cpp: spectral_clustering (scikit-learn's SpectralClustering with assign_labels=kmeans):
// the rows embedded by the leading eigenvectors of the normalized affinity, then clustered by
// bitlearn's kmeans.
//
// Affinity A [n, n] on the host in binary64 (features in order):
//   rbf:               A_ij = exp64(-gamma |x_i - x_j|^2), the squared distance summed exactly as
//                      (x_ia - x_ja)^2 in feature order;
//   nearest_neighbors: C_ij = 1 when j is one of the n_neighbors rows nearest to i (i itself
//                      included; the same binary64 distances, equal distances to the lower index),
//                      A = (C + C^T) / 2.
// Degrees d_i = sum_{j != i} A_ij (j ascending; the diagonal is ignored, as a graph Laplacian does),
// s_i = sqrt(d_i) (1 where d_i = 0). The normalized Laplacian is L = I - S^-1 A' S^-1 (A' = A with a
// zero diagonal); its n_clusters smallest eigenvectors are the largest of M = S^-1 A' S^-1, decomposed
// in binary64 by ml/decomposition/symmetric_eigen64.h (Householder tridiagonalization and implicit QL,
// fixed order). The embedding row i is (v_t[i] / s_i) for the n_clusters leading eigenvectors v_t (in
// descending eigenvalue order); labels are those of bitlearn's kmeans (n_clusters, random_state) on
// the embedding (affinity and normalization: ml/manifold/neighbor_graph.h). The eigen-decomposition
// is O(n^3): at most 4096 rows. labels_ come from fit, as
// scikit-learn's SpectralClustering; predict (a bitlearn extension, hidden in Python) gives each
// query the label of its nearest training row (binary64 squared distances, the lowest index on ties).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "ml/cluster/density_clustering.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/linear/common.h"
#include "ml/manifold/neighbor_graph.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
namespace dd = density_detail;

constexpr int64_t kMaxRows = 4096;

class SpectralClustering final : public dd::NearestLabelClusterer {
 public:
  SpectralClustering()
      : dd::NearestLabelClusterer("spectral_clustering",
                                  {{"affinity", K::choice, "rbf", 0, {"rbf", "nearest_neighbors"}},
                                   {"assign_labels", K::choice, "kmeans", 0, {"kmeans"}},
                                   {"gamma", K::number, "1", 0.0, {}, true},
                                   {"n_clusters", K::integer, "8", 1},
                                   {"n_neighbors", K::integer, "10", 1},
                                   {"random_state", K::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const int64_t n = X.dim(0), d = X.dim(1), k = params_.integer("n_clusters");
    BL_CHECK(n <= kMaxRows, name_, ": ", n, " rows exceed the limit of ", kMaxRows, " (a dense eigen-decomposition)");
    BL_CHECK(k <= n, name_, ": n_clusters=", k, " exceeds the ", n, " rows");
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    const bool rbf = params_.text("affinity") == "rbf";
    const int64_t nn = rbf ? 0 : params_.integer("n_neighbors");
    BL_CHECK(nn <= n, name_, ": n_neighbors=", nn, " is more than the ", n, " rows");
    graph::NormalizedAffinity na = graph::normalized_affinity(x, n, d, params_.number("gamma"), nn);
    const std::vector<double>& s = na.s;
    SymmetricEigen64 eig = symmetric_eigen64(na.M, n, k, "spectral_clustering");
    std::vector<float> emb(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < k; ++t)
        emb[i * k + t] = static_cast<float>(eig.vectors[t * n + i] / s[i]);
    auto km = make_estimator("kmeans", {{"n_clusters", std::to_string(k)},
                                        {"random_state", std::to_string(params_.integer("random_state"))}});
    km->fit(Tensor::from_vector(emb, {n, k}));
    labels_ = km->predict(Tensor::from_vector(emb, {n, k})).to_vector<int64_t>();
    n_ = n;
    d_ = d;
    k_ = k;
    rows_.x = std::move(x);
    rows_.n = n;
    rows_.d = d;
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}, {"n_clusters", k_}});
    state["labels"] = labels_;
    lin::put_f32(state, "fit_X", rows_.x);
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 1, name_);
    k_ = lin::get_int(state, "n_clusters", 1, name_);
    BL_CHECK(n_ <= kMaxRows && k_ <= n_ && d_ <= (int64_t{1} << 30), name_, ": model state: n_samples or n_clusters out of range");
    BL_CHECK(state.contains("labels") && state["labels"].is_array() &&
                 static_cast<int64_t>(state["labels"].size()) == n_,
             name_, ": model state: labels must hold n_samples integers");
    labels_.clear();
    for (const auto& v : state["labels"]) {
      BL_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < k_, name_,
               ": model state: labels must be integers in [0, n_clusters)");
      labels_.push_back(v.get<int64_t>());
    }
    rows_.x = lin::get_f32(state, "fit_X", n_ * d_, name_);
    rows_.n = n_;
    rows_.d = d_;
    fitted_ = true;
  }

 private:
  int64_t n_ = 0, d_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_spectral_clustering() { return std::make_unique<SpectralClustering>(); }

}  // namespace bl::ml
