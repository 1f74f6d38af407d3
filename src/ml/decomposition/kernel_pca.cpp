// kernel_pca.cpp: kernel_pca (scikit-learn's KernelPCA), principal components of the centered kernel
// matrix of the training rows.
//
// Kernels as scikit-learn's pairwise kernels through ml/kernel/kernels.h (Tensor ops on X's device,
// the same bits everywhere): linear, rbf, poly, sigmoid; cosine is the linear kernel of the rows
// divided by their Euclidean norms (bl ops; a zero row stays zero). gamma none = 1 / n_features
// (rounded once to binary32), degree 3, coef0 1.
// Fit: K = kernel(X, X) [n, n] copied to the host. Column means c_j and row means r_i of K in binary64
// (sums in ascending order), grand mean g = mean of the c_j; the centered matrix Kc_ij = K_ij - c_j -
// r_i + g (binary64, lower triangle) is decomposed by top_eigen64 (partial_eigen64.h: block Lanczos for
// n >= 256 and n_components <= n / 8, else symmetric_eigen64's Householder and implicit QL; fixed
// order; each eigenvector's entry of largest magnitude positive, as scikit-learn's svd_flip).
// Noise floor f = 8 * 2^-24 * ||K||_F (a bound of K's binary32 rounding); eigenvalues at most f are
// set to 0; a kept eigenvalue below -max(1e-5 * lambda_max, f) is refused as scikit-learn refuses
// significant negative eigenvalues. n_components none (or remove_zero_eig) keeps the eigenvalues > 0.
// transform(Y) = Kc(Y) A^T by the contract GEMM on Y's device, Kc(Y) = kernel(Y, X_fit) - c (the
// training column means, binary32) - the row means of kernel(Y, X_fit) + g, and A [k, n] row t =
// eigenvector_t / sqrt(lambda_t) (0 where lambda_t = 0), binary64 rounded once.
#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/embedding_sizes.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/partial_eigen64.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/kernel/kernels.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr int64_t kMaxSamples = 4096;

class KernelPCA final : public lin::ParamEstimator {
 public:
  KernelPCA()
      : lin::ParamEstimator("kernel_pca", {{"coef0", K::number, "1"},
                                           {"degree", K::integer, "3", 0},
                                           {"gamma", K::number_or_word, "none", 0.0, {"none"}, true},
                                           {"kernel", K::choice, "linear", 0, {"linear", "rbf", "poly", "sigmoid", "cosine"}},
                                           {"n_components", K::number_or_word, "none", 1.0, {"none"}},
                                           {"remove_zero_eig", K::boolean, "false"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const int64_t n = X.dim(0);
    d_ = X.dim(1);
    BL_CHECK(n >= 2, name_, ": X needs at least 2 rows, got n_samples=", n);
    BL_CHECK(n <= kMaxSamples, name_, ": ", n, " rows would need a ", n, " x ", n,
             " kernel matrix on the host; at most ", kMaxSamples, " rows");
    const std::string& nc = params_.text("n_components");
    const bool all = nc == "none";
    const int64_t k = all ? n : std::min(n, dec::optional_count(params_, name_, "n_components", n));
    BL_CHECK(params_.integer("degree") <= 64, name_, ": degree=", params_.integer("degree"), " is too large (at most 64)");
    spec_.kernel = params_.text("kernel");
    spec_.gamma = params_.text("gamma") == "none" ? static_cast<float>(1.0 / static_cast<double>(d_))
                                                   : static_cast<float>(params_.number("gamma"));
    spec_.coef0 = static_cast<float>(params_.number("coef0"));
    spec_.degree = params_.integer("degree");
    x_fit_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<double> km = dec::to_host64(kernel(X, X));
    double fro = 0.0;
    for (double v : km) {
      BL_CHECK(std::isfinite(v), name_, ": the kernel matrix holds ", v, " (lower gamma or degree)");
      fro += v * v;
    }
    const double floor = 8.0 * 0x1p-24 * std::sqrt(fro);
    const std::vector<double> c = dec::column_means(km, n, n);
    const double g = dec::mean64(c);
    dec::center_lower(km, n, dec::row_means(km, n, n), c, g);
    SymmetricEigen64 e = top_eigen64(km, n, k, "kernel_pca");
    const double top = e.values[0];
    BL_CHECK(top > floor, name_, ": the centered kernel matrix has no positive eigenvalue (largest ", top, ")");
    int64_t kept = 0;
    for (int64_t t = 0; t < k; ++t) {
      double lam = e.values[t];
      BL_CHECK(!(lam < -std::max(1e-5 * top, floor)), name_, ": the centered kernel matrix has a significant negative "
               "eigenvalue (", lam, " against the largest ", top, "): the kernel is not positive semi-definite here");
      if (lam <= floor) lam = 0.0;
      if ((all || params_.boolean("remove_zero_eig")) && lam == 0.0) break;  // descending: the rest are zero too
      e.values[t] = lam;
      ++kept;
    }
    k_ = kept;
    n_ = n;
    eigenvalues_.resize(static_cast<size_t>(k_));
    eigenvectors_.resize(static_cast<size_t>(k_ * n_));
    alphas_.assign(static_cast<size_t>(k_ * n_), 0.0f);
    for (int64_t t = 0; t < k_; ++t) {
      eigenvalues_[t] = static_cast<float>(e.values[t]);
      const double s = std::sqrt(e.values[t]);
      for (int64_t i = 0; i < n_; ++i) {
        const double u = e.vectors[t * n_ + i];
        eigenvectors_[t * n_ + i] = static_cast<float>(u);
        if (s > 0.0) alphas_[t * n_ + i] = static_cast<float>(u / s);
      }
    }
    col_means_ = dec::rounded32(c);
    grand_mean_ = static_cast<float>(g);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const Device dev = X.device();
    const Tensor F = Tensor::from_vector(x_fit_, {n_, d_}, dev);
    const Tensor col_means = Tensor::from_vector(col_means_, {n_}, dev);
    const Tensor grand = Tensor::from_vector(std::vector<float>{grand_mean_}, {1}, dev);
    const Tensor A = Tensor::from_vector(alphas_, {k_, n_}, dev);
    // Rows in blocks of at most 2^24 kernel entries (each output row depends on its input row
    // alone, so blocks change nothing); each block reports progress.
    const int64_t m = X.dim(0), rows = std::max<int64_t>(1, (int64_t{1} << 24) / n_);
    std::vector<Tensor> parts;
    for_row_blocks(name_ + " transform", m, rows, [&](int64_t s, int64_t e) {
      Tensor Kp = kernel(X.slice(0, s, e).contiguous(), F);
      Tensor Kc = bl::sub(Kp, col_means);
      Kc = bl::sub(Kc, bl::mean(Kp, {1}, true));
      Kc = bl::add(Kc, grand);
      parts.push_back(bl::matmul(Kc, A, false, true));
    });
    return parts.size() == 1 ? parts[0] : bl::concat(parts, 0);
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_embedding_sizes(state, {d_, n_, k_});
    put_kernel_state(state, spec_);
    lin::put_f32s(state, {{"training_rows", x_fit_}, {"fit_column_means", col_means_},
                          {"fit_grand_mean", {grand_mean_}}, {"eigenvalues", eigenvalues_},
                          {"eigenvectors", eigenvectors_}, {"scaled_eigenvectors", alphas_}});
  }
  void load_state(const nlohmann::json& state) override {
    const dec::EmbeddingSizes sizes = dec::get_embedding_sizes(state, name_, kMaxSamples);
    d_ = sizes.d;
    n_ = sizes.n;
    k_ = sizes.k;
    spec_ = get_kernel_state(state, name_, params_);
    x_fit_ = lin::get_f32(state, "training_rows", n_ * d_, name_);
    col_means_ = lin::get_f32(state, "fit_column_means", n_, name_);
    grand_mean_ = lin::get_f32(state, "fit_grand_mean", 1, name_)[0];
    eigenvalues_ = lin::get_f32(state, "eigenvalues", k_, name_);
    eigenvectors_ = lin::get_f32(state, "eigenvectors", k_ * n_, name_);
    alphas_ = lin::get_f32(state, "scaled_eigenvectors", k_ * n_, name_);
    fitted_ = true;
  }

 private:
  // kernel(A, B) by kernels.h; cosine: the linear kernel of the rows over their norms.
  Tensor kernel(const Tensor& A, const Tensor& B) const {
    if (spec_.kernel != "cosine") return kernel_matrix(A, B, spec_);
    KernelSpec lin_spec;
    lin_spec.kernel = "linear";
    return kernel_matrix(unit_rows(A), unit_rows(B), lin_spec);
  }
  static Tensor unit_rows(const Tensor& A) {
    Tensor norm = bl::sqrt(bl::sum(bl::mul(A, A), {1}, true));
    Tensor tiny = Tensor::from_vector(std::vector<float>{0x1p-126f}, {1}, A.device());
    return bl::div(A, bl::maximum(norm, tiny));
  }

  KernelSpec spec_;
  std::vector<float> x_fit_, col_means_, eigenvalues_, eigenvectors_, alphas_;
  float grand_mean_ = 0.0f;
  int64_t d_ = 0, n_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_kernel_pca() { return std::make_unique<KernelPCA>(); }

}  // namespace bl::ml
