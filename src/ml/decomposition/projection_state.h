// projection_state.h: what the iterated decompositions share in their fitted state and transform.
// CenteredProjection: the estimator base whose transform = (X - mean) P by the contract ops on X's
// device (factor_analysis, sparse_pca). put_iterated_shape / get_iterated_shape: the state fields n_features, n_components and
// n_iter (at least 1 and at most 2^30) of a model fitted by iterations (dictionary_learning,
// factor_analysis, sparse_pca); each estimator adds its own bound on n_components.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/linear/common.h"

namespace bl::ml::dec {

// An estimator whose transform is (X - mean_) projection_ (X [n, d_], mean_ [d_], projection_ [d_, k_],
// binary32) by the contract ops on X's device; the subclass's fit and load_state set the fields.
class CenteredProjection : public lin::ParamEstimator {
 public:
  using lin::ParamEstimator::ParamEstimator;

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const Device dev = X.device();
    Tensor Xc = bl::sub(X, Tensor::from_vector(mean_, {d_}, dev));
    return bl::matmul(Xc, Tensor::from_vector(projection_, {d_, k_}, dev));
  }

 protected:
  std::vector<float> mean_, projection_;
  int64_t d_ = 0, k_ = 0, n_iter_ = 0;
};

inline void put_iterated_shape(nlohmann::json& state, int64_t n_features, int64_t n_components, int64_t n_iter) {
  lin::put_ints(state, {{"n_features", n_features}, {"n_components", n_components}, {"n_iter", n_iter}});
}

inline void get_iterated_shape(const nlohmann::json& state, const std::string& who, int64_t& n_features,
                               int64_t& n_components, int64_t& n_iter) {
  n_features = lin::get_int(state, "n_features", 1, who);
  n_components = lin::get_int(state, "n_components", 1, who);
  n_iter = lin::get_int(state, "n_iter", 1, who);
  BL_CHECK(n_iter <= (int64_t{1} << 30), who, ": model state: n_iter ", n_iter, " is too large");
}

}  // namespace bl::ml::dec
