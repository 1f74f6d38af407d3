// rbf_sampler.cpp: rbf_sampler (scikit-learn's RBFSampler), random Fourier features of the RBF
// kernel exp(-gamma |x - y|^2) (Rahimi and Recht).
//
// Fit reads only the width d of X. Under seed = random_state, with c = n_components:
//   random_weights [d, c]: W[f, j] = s * z, z = normal_element(seed, stream 1, f c + j) (the
//     contract's Philox Box-Muller normal, contract/rng.h), s = sqrt(2 gamma) in binary64 rounded
//     once to binary32, one binary32 multiply;
//   random_offset [c]: b[j] = uniform_element(seed, stream 2, j) * 2pi (2pi rounded to binary32,
//     one multiply), in [0, 2pi).
// transform(X) = sqrt(2 / c) * cos(X W + b): the contract GEMM, a broadcast add, the contract cos and
// a multiply by sqrt(2 / c) (binary64, rounded once), all Tensor ops on X's device.
#include <cmath>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr uint64_t kWeightStream = 1, kOffsetStream = 2;
constexpr int64_t kMaxWeights = int64_t{1} << 28;

class RBFSampler final : public lin::ParamEstimator {
 public:
  RBFSampler()
      : lin::ParamEstimator("rbf_sampler", {{"gamma", K::number, "1", 0.0},
                                            {"n_components", K::integer, "100", 1},
                                            {"random_state", K::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const double gamma = params_.number("gamma");
    BL_CHECK(gamma > 0.0 && std::isfinite(gamma), name_, ": parameter gamma=", gamma, ": expected a finite number > 0");
    d_ = X.dim(1);
    c_ = params_.integer("n_components");
    BL_CHECK(d_ * c_ <= kMaxWeights, name_, ": n_components=", c_, " x ", d_, " features is more than ", kMaxWeights,
             " random weights");
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    const float s = static_cast<float>(std::sqrt(2.0 * gamma));
    w_.assign(static_cast<size_t>(d_ * c_), 0.0f);
    for (int64_t i = 0; i < d_ * c_; ++i)
      w_[i] = bl::mul(s, normal_element(seed, kWeightStream, static_cast<uint64_t>(i)));
    b_.assign(static_cast<size_t>(c_), 0.0f);
    for (int64_t j = 0; j < c_; ++j)
      b_[j] = bl::mul(uniform_element(seed, kOffsetStream, static_cast<uint64_t>(j)), float_of(kTwoPiBits));
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const Device dev = X.device();
    Tensor P = bl::add(bl::matmul(X, Tensor::from_vector(w_, {d_, c_}, dev)), Tensor::from_vector(b_, {1, c_}, dev));
    const float scale = static_cast<float>(std::sqrt(2.0 / static_cast<double>(c_)));
    return bl::mul(bl::cos(P), Tensor::scalar(static_cast<double>(scale), DType::f32, dev));
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", c_}});
    lin::put_f32s(state, {{"random_weights", w_}, {"random_offset", b_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    c_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(d_ * c_ <= kMaxWeights, name_, ": state n_components x n_features is too large");
    w_ = lin::get_f32(state, "random_weights", d_ * c_, name_);
    b_ = lin::get_f32(state, "random_offset", c_, name_);
    fitted_ = true;
  }

 private:
  std::vector<float> w_, b_;
  int64_t d_ = 0, c_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_rbf_sampler() { return std::make_unique<RBFSampler>(); }

}  // namespace bl::ml
