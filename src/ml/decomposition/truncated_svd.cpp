// truncated_svd.cpp: truncated_svd (scikit-learn's TruncatedSVD), the leading right singular vectors
// of X without centering.
//
// algorithm=arpack (exact): G = X^T X by the contract GEMM on X's device (the same bits on every
// device), widened to binary64 on the host and decomposed by symmetric_eigen64 (Householder and
// implicit QL, fixed order); the k largest eigenpairs give singular values sqrt(max(lambda, 0)) and
// the components.
// algorithm=randomized: dec::randomized_svd (dense64.h) with l = min(n_components + n_oversamples,
// n_samples, n_features) sketch columns, n_iter power iterations and the seed random_state: a Philox
// Gaussian sketch, GEMM products with X, binary64 Gram-Schmidt and a binary64 eigen-decomposition of
// the small B B^T.
// Both: each component's entry of largest magnitude positive (scikit-learn's svd_flip on the right
// singular vectors), rounded once to binary32. transform = X components^T (GEMM).
// explained_variance_: the population variance of each column of transform(X_train) in binary64;
// explained_variance_ratio_: those over the sum of X's column variances (binary64, row order).
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/size_limits.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class TruncatedSVD final : public lin::ParamEstimator {
 public:
  TruncatedSVD()
      : lin::ParamEstimator("truncated_svd", {{"algorithm", K::choice, "randomized", 0, {"randomized", "arpack"}},
                                              {"n_components", K::integer, "2", 1},
                                              {"n_iter", K::integer, "5", 0},
                                              {"n_oversamples", K::integer, "10", 1},
                                              {"random_state", K::integer, "0", 0},
                                              {"tol", K::number, "0", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t k = params_.integer("n_components");
    BL_CHECK(n >= 2, name_, ": X needs at least 2 rows, got n_samples=", n);
    BL_CHECK(k <= d, name_, ": n_components=", k, " must be at most the feature count (n_features=", d, ")");
    BL_CHECK(k <= n, name_, ": n_components=", k, " must be at most the row count (n_samples=", n, ")");
    std::vector<double> values, vectors;  // k singular values, k x d right singular vectors
    if (params_.text("algorithm") == "arpack") {
      check_square_matrix(n, d, "truncated_svd Gram matrix");
      std::vector<double> G = dec::to_host64(bl::matmul(X, X, true, false));
      SymmetricEigen64 e = symmetric_eigen64(G, d, k, "truncated_svd");
      for (int64_t t = 0; t < k; ++t) values.push_back(std::sqrt(std::max(e.values[t], 0.0)));
      vectors.assign(e.vectors.begin(), e.vectors.begin() + k * d);
    } else {
      const int64_t l = std::min({k + params_.integer("n_oversamples"), n, d});
      dec::randomized_svd(X, k, l, params_.integer("n_iter"), static_cast<uint64_t>(params_.integer("random_state")),
                          values, vectors);
    }
    dec::flip_rows_by_largest(vectors, k, d);
    components_ = dec::rounded32(vectors);
    singular_ = dec::rounded32(values);
    d_ = d;
    k_ = k;
    fitted_ = true;
    std::vector<double> xh = dec::to_host64(X);
    std::vector<double> zv = dec::column_variances(dec::to_host64(transform(X)), n, k);
    std::vector<double> xv = dec::column_variances(xh, n, d);
    double total = 0.0;
    for (double v : xv) total += v;
    variance_.resize(static_cast<size_t>(k));
    ratio_.resize(static_cast<size_t>(k));
    for (int64_t t = 0; t < k; ++t) {
      variance_[t] = static_cast<float>(zv[t]);
      ratio_[t] = static_cast<float>(total > 0.0 ? zv[t] / total : 0.0);
    }
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    return bl::matmul(X, Tensor::from_vector(components_, {k_, d_}, X.device()), false, true);
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}});
    lin::put_f32s(state, {{"components", components_}, {"singular_values", singular_},
                          {"explained_variance", variance_}, {"explained_variance_ratio", ratio_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= d_, name_, ": model state: n_components ", k_, " > n_features ", d_);
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    singular_ = lin::get_f32(state, "singular_values", k_, name_);
    variance_ = lin::get_f32(state, "explained_variance", k_, name_);
    ratio_ = lin::get_f32(state, "explained_variance_ratio", k_, name_);
    fitted_ = true;
  }

 private:
  std::vector<float> components_, singular_, variance_, ratio_;
  int64_t d_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_truncated_svd() { return std::make_unique<TruncatedSVD>(); }

}  // namespace bl::ml
