// nystroem.cpp: nystroem (scikit-learn's Nystroem), a low-rank feature map of a kernel from a
// subset of the training rows.
//
// Fit: k = min(n_components, n) components, the rows perm[0..k) of a partial Fisher-Yates shuffle
// (step i swaps i with i + philox_index(word i of Philox stream 1 under random_state, n - i)).
// K_cc = kernel(C, C) [k, k] by the kernel matrices of ml/kernel/kernels.h (Tensor ops on X's
// device), copied to the host and decomposed in binary64 by ml/decomposition/symmetric_eigen64.h
// (Householder tridiagonalization and implicit QL, fixed order): K_cc = sum_t lambda_t u_t u_t^T.
// normalization [k, k] = sum_t w_t u_t u_t^T with w_t = sign(lambda_t) / sqrt(max(|lambda_t|, 1e-12))
// (sign +1 for lambda_t >= 0), which is scikit-learn's U diag(1 / sqrt(max(S, 1e-12))) V of the SVD of
// the symmetric K_cc; each entry a binary64 sum over t in ascending order, rounded once.
// transform(X) = kernel(X, C) normalization^T by the contract GEMM on X's device.
// Kernel parameters as scikit-learn's pairwise kernels: gamma none = 1 / n_features (rounded once
// to binary32), coef0 none = 1, degree none = 3.
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/cluster/distances.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/kernel/kernels.h"
#include "io/json_number.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr uint64_t kSampleStream = 1;
constexpr int64_t kMaxComponents = 4096;

class Nystroem final : public lin::ParamEstimator {
 public:
  Nystroem()
      : lin::ParamEstimator("nystroem", {{"coef0", K::number_or_word, "none", -1e308, {"none"}},
                                         {"degree", K::number_or_word, "none", 0.0, {"none"}},
                                         {"gamma", K::number_or_word, "none", 0.0, {"none"}, true},
                                         {"kernel", K::choice, "rbf", 0, {"rbf", "linear", "poly", "sigmoid", "laplacian"}},
                                         {"n_components", K::integer, "100", 1},
                                         {"random_state", K::integer, "0", 0}}) {}

  // gamma, coef0, degree: a number or none (the kernel's default: 1 / n_features, 1, 3).
  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const int64_t n = X.dim(0);
    d_ = X.dim(1);
    k_ = std::min(n, params_.integer("n_components"));
    BL_CHECK(k_ <= kMaxComponents, name_, ": n_components=", k_, " is more than ", kMaxComponents,
             " (the [k, k] kernel matrix is decomposed on the host)");
    spec_.kernel = params_.text("kernel");
    const std::string& gamma = params_.text("gamma");
    const std::string& coef0 = params_.text("coef0");
    const std::string& degree = params_.text("degree");
    spec_.gamma = gamma == "none" ? static_cast<float>(1.0 / static_cast<double>(d_)) : static_cast<float>(params_.number("gamma"));
    spec_.coef0 = coef0 == "none" ? 1.0f : static_cast<float>(params_.number("coef0"));
    spec_.degree = degree == "none" ? 3 : param_int(name_, "degree", degree);
    BL_CHECK(spec_.degree <= 64, name_, ": degree=", spec_.degree, " is too large (at most 64)");
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = 0; i < k_; ++i) {
      int64_t j = i + philox_index(random_u32_element(seed, kSampleStream, static_cast<uint64_t>(i)), n - i);
      std::swap(perm[i], perm[j]);
    }
    indices_.assign(perm.begin(), perm.begin() + k_);
    Tensor C = bl::index_select(X, 0, Tensor::from_vector(indices_, {k_}, X.device()));
    components_ = C.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<float> kcc = kernel_matrix(C, C, spec_).to(Device::cpu()).contiguous().to_vector<float>();
    for (float v : kcc)
      BL_CHECK(std::isfinite(v), name_, ": the kernel matrix of the components holds ", v,
               " (lower gamma or degree)");
    SymmetricEigen64 eig = symmetric_eigen64(std::vector<double>(kcc.begin(), kcc.end()), k_, -1, "nystroem");
    std::vector<double> w(static_cast<size_t>(k_));
    for (int64_t t = 0; t < k_; ++t) {
      const double lam = eig.values[t];
      w[t] = (lam < 0.0 ? -1.0 : 1.0) / std::sqrt(std::max(std::fabs(lam), 1e-12));
    }
    norm_.assign(static_cast<size_t>(k_ * k_), 0.0f);
    std::vector<double> acc(static_cast<size_t>(k_));
    for (int64_t i = 0; i < k_; ++i) {  // row i: each entry's sum over t ascending
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t t = 0; t < k_; ++t) {
        const double* u = &eig.vectors[t * k_];
        const double a = w[t] * u[i];
        for (int64_t j = 0; j < k_; ++j) acc[j] += a * u[j];
      }
      for (int64_t j = 0; j < k_; ++j) norm_[i * k_ + j] = static_cast<float>(acc[j]);
    }
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const Device dev = X.device();
    Tensor Kx = kernel_matrix(X, Tensor::from_vector(components_, {k_, d_}, dev), spec_);
    return bl::matmul(Kx, Tensor::from_vector(norm_, {k_, k_}, dev), false, true);
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}});
    put_kernel_state(state, spec_);
    state["component_indices"] = indices_;
    lin::put_f32s(state, {{"components", components_}, {"normalization", norm_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= kMaxComponents, name_, ": state n_components is more than ", kMaxComponents);
    spec_ = get_kernel_state(state, name_, params_);
    BL_CHECK(state.contains("component_indices") && state["component_indices"].is_array() &&
                 static_cast<int64_t>(state["component_indices"].size()) == k_,
             name_, ": state field component_indices is missing or of the wrong length");
    indices_ = io::json_integers<int64_t>(state["component_indices"], name_ + ": model state: component_indices");
    for (int64_t i : indices_)
      BL_CHECK(i >= 0 && i < (int64_t{1} << 32), name_, ": model state: component index ", i, " is not a row index");
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    norm_ = lin::get_f32(state, "normalization", k_ * k_, name_);
    fitted_ = true;
  }

 private:
  KernelSpec spec_;
  std::vector<int64_t> indices_;
  std::vector<float> components_, norm_;
  int64_t d_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_nystroem() { return std::make_unique<Nystroem>(); }

}  // namespace bl::ml
