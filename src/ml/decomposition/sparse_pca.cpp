// sparse_pca.cpp: sparse_pca (scikit-learn's SparsePCA): sparse components that reconstruct the
// centered data. mean = column means of X (binary64, row order); Y = (X - mean)^T [d, n] is learned by
// sparse_coding.h's learn_dictionary with k atoms: Y ~ C D with the sparse code C [d, k] and atoms
// D [k, n] of norm at most 1, minimizing 0.5 ||Y - C D||^2 + alpha ||C||_1. Then each column of C has
// its entry of largest magnitude (lowest index among ties) made positive (scikit-learn's svd_flip on
// the code), and components_ [k, d] = C^T with each row divided by its norm (a zero row stays zero).
// method: cd only (scikit-learn's default lars solves the same lasso problem).
// transform(X) = (X - mean) P by the contract GEMM on X's device, P = C^T (C C^T + ridge_alpha I)^-1
// [d, k] (the ridge regression of the centered rows on the components) computed at fit in binary64
// from the binary32 components (the family's binary64 Cholesky, gp_regressor.h), rounded once.
// mean_, components_, the projection and error_ (the cost after each iteration) are stored in binary32.
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/projection_state.h"
#include "ml/decomposition/sparse_coding.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class SparsePCA final : public dec::CenteredProjection {
 public:
  SparsePCA()
      : dec::CenteredProjection("sparse_pca", {{"alpha", K::number, "1", 0.0},
                                           {"max_iter", K::integer, "1000", 1},
                                           {"method", K::choice, "cd", 0, {"cd"}},
                                           {"n_components", K::number_or_word, "none", 1.0, {"none"}},
                                           {"random_state", K::integer, "0", 0},
                                           {"ridge_alpha", K::number, "0.01", 0.0},
                                           {"tol", K::number, "1e-08", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t k = dec::optional_count(params_, name_, "n_components", d);
    BL_CHECK(k <= (int64_t{1} << 16), name_, ": n_components=", k, " is too large");
    const std::vector<double> xh = dec::to_host64(X);
    const std::vector<double> mean = dec::column_means(xh, n, d);
    std::vector<double> yt(static_cast<size_t>(d * n));  // (X - mean)^T
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) yt[j * n + i] = xh[i * d + j] - mean[j];
    dec::DictionaryLearningSetup setup;
    dec::read_dictionary_learning_params(params_, setup);
    dec::DictionaryLearningResult r = dec::learn_dictionary(yt, d, n, k, setup, name_);
    std::vector<double> comp = dec::transposed(r.code, d, k);
    dec::flip_rows_by_largest(comp, k, d);
    for (int64_t t = 0; t < k; ++t) {
      double norm2 = 0.0;
      for (int64_t j = 0; j < d; ++j) norm2 += comp[t * d + j] * comp[t * d + j];
      if (norm2 > 0.0)
        for (int64_t j = 0; j < d; ++j) comp[t * d + j] /= std::sqrt(norm2);
    }
    d_ = d;
    k_ = k;
    n_iter_ = r.n_iter;
    mean_ = dec::rounded32(mean);
    components_ = dec::rounded32(comp);
    error_ = dec::rounded32(r.errors);
    projection_ = projection();
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_iterated_shape(state, d_, k_, n_iter_);
    lin::put_f32s(state, {{"mean", mean_}, {"components", components_}, {"projection", projection_}, {"error", error_}});
  }
  void load_state(const nlohmann::json& state) override {
    dec::get_iterated_shape(state, name_, d_, k_, n_iter_);
    BL_CHECK(k_ <= (int64_t{1} << 16), name_, ": model state: n_components ", k_, " is too large");
    mean_ = lin::get_f32(state, "mean", d_, name_);
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    projection_ = lin::get_f32(state, "projection", d_ * k_, name_);
    error_ = lin::get_f32(state, "error", n_iter_, name_);
    fitted_ = true;
  }

 private:
  // P [d, k] = C^T (C C^T + ridge_alpha I)^-1 from the binary32 components C, rounded once.
  std::vector<float> projection() const {
    const int64_t k = k_, d = d_;
    const std::vector<double> c(components_.begin(), components_.end());
    std::vector<double> a(static_cast<size_t>(k * k)), l;
    const double ridge = params_.number("ridge_alpha");
    for (int64_t s = 0; s < k; ++s)
      for (int64_t t = 0; t < k; ++t) {
        double v = 0.0;
        for (int64_t j = 0; j < d; ++j) v += c[s * d + j] * c[t * d + j];
        a[s * k + t] = s == t ? v + ridge : v;
      }
    BL_CHECK(gp::cholesky64(a, k, l), name_, ": C C^T + ridge_alpha I is not positive definite (components linearly ",
             "dependent or zero; raise ridge_alpha)");
    return dec::rounded32(dec::mul64_tn(c, gp::cholesky_inverse(l, k), k, d, k));
  }

  std::vector<float> components_, error_;
};

}  // namespace

std::unique_ptr<Estimator> make_sparse_pca() { return std::make_unique<SparsePCA>(); }

}  // namespace bl::ml
