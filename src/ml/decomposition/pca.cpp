// pca.cpp: principal component analysis through the covariance matrix and cyclic Jacobi.
//
// mean = column means (op); C = Xc^T Xc / (n - 1) with Xc = X - mean (contract GEMM, same bits on
// every device; on the host one pass fused with the centering, see centered_gram.h);
// eigen-decomposition of C by jacobi_eigen (descending; each component's entry of largest magnitude
// positive, as scikit-learn's svd_flip). transform = (X - mean) components^T, divided by
// sqrt(explained_variance) when whiten.
#include <algorithm>

#include "bitlearn/ml/decomposition.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/decomposition/centered_gram.h"
#include "ml/size_limits.h"
#include "ml/decomposition/jacobi_eigen.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class PCA final : public lin::ParamEstimator {
 public:
  PCA() : lin::ParamEstimator("pca", {{"n_components", K::integer, "0", 0}, {"whiten", K::boolean, "false"}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name(), X);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n >= 2, "pca: X needs at least 2 rows, got ", n);
    int64_t nc = params_.integer("n_components");
    if (nc == 0) nc = std::min(n, d);
    BL_CHECK(nc <= std::min(n, d), "pca: n_components=", nc, " exceeds min(n_samples, n_features) = ",
             std::min(n, d));
    Tensor mu = bl::mean(X, {0});
    mean_ = mu.to(Device::cpu()).to_vector<float>();
    SymmetricEigen e = jacobi_eigen(covariance(X, mu), d);
    float total = 0.0f;
    for (float v : e.values) total = bl::add(total, bl::max(v, 0.0f));
    components_.assign(e.vectors.begin(), e.vectors.begin() + nc * d);
    variance_.resize(static_cast<size_t>(nc));
    ratio_.resize(static_cast<size_t>(nc));
    for (int64_t k = 0; k < nc; ++k) {
      variance_[k] = bl::max(e.values[k], 0.0f);
      ratio_[k] = total > 0.0f ? bl::div(variance_[k], total) : 0.0f;
    }
    d_ = d;
    nc_ = nc;
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    BL_CHECK(fitted_, "pca: transform before fit");
    lin::check_predict_X(name(), X, d_);
    Tensor mu = Tensor::from_vector(mean_, {d_}, X.device());
    Tensor W = Tensor::from_vector(components_, {nc_, d_}, X.device());
    Tensor Z = bl::matmul(bl::sub(X, mu), W, false, true);
    if (!params_.boolean("whiten")) return Z;
    std::vector<float> s(variance_.size());
    for (size_t k = 0; k < s.size(); ++k) s[k] = variance_[k] > 0.0f ? bl::sqrt(variance_[k]) : 1.0f;
    return bl::div(Z, Tensor::from_vector(s, {nc_}, X.device()));
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", nc_}});
    lin::put_f32s(state, {{"mean", mean_}, {"components", components_}, {"explained_variance", variance_},
                          {"explained_variance_ratio", ratio_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name());
    nc_ = lin::get_int(state, "n_components", 1, name());
    BL_CHECK(nc_ <= d_, "pca: model state: n_components ", nc_, " > n_features ", d_);
    mean_ = lin::get_f32(state, "mean", d_, name());
    components_ = lin::get_f32(state, "components", nc_ * d_, name());
    variance_ = lin::get_f32(state, "explained_variance", nc_, name());
    ratio_ = lin::get_f32(state, "explained_variance_ratio", nc_, name());
    fitted_ = true;
  }

  // C = Xc^T Xc / (n - 1), Xc = X - mu. On the host one fused pass (centered_gram_cpu, the same
  // bits as the GEMM of the centered copy); elsewhere the Tensor ops.
  static std::vector<float> covariance(const Tensor& X, const Tensor& mu) {
    const int64_t n = X.dim(0), d = X.dim(1);
    check_square_matrix(n, d, "pca covariance matrix");
    const float denom = static_cast<float>(static_cast<double>(n - 1));
    if (X.device() == Device::cpu() && gemm_profile() == GemmProfile::contract) {  // exact profile: matmul
      Tensor Xh = X.contiguous();
      Tensor muh = mu.contiguous();
      std::vector<float> C(static_cast<size_t>(d * d));
      centered_gram_cpu(Xh.data<float>(), n, d, muh.data<float>(), C.data());
      for (float& v : C) v = bl::canonicalize(bl::div(v, denom));
      return C;
    }
    Tensor Xc = bl::sub(X, mu);
    Tensor C = bl::div(bl::matmul(Xc, Xc, true, false), Tensor::scalar(static_cast<double>(denom), DType::f32, X.device()));
    return C.to(Device::cpu()).to_vector<float>();
  }

  PcaView view() const { return PcaView{components_, variance_, ratio_, mean_, nc_, d_}; }

 private:
  std::vector<float> mean_, components_, variance_, ratio_;
  int64_t d_ = 0, nc_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_pca() { return std::make_unique<PCA>(); }

PcaView pca_view(const Estimator& est) {
  auto* p = dynamic_cast<const PCA*>(&est);
  BL_CHECK(p != nullptr, est.name(), ": not a pca");
  BL_CHECK(p->fitted(), "pca: not fitted");
  return p->view();
}

}  // namespace bl::ml
