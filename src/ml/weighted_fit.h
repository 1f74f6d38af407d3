// weighted_fit.h: the fit plumbing of an estimator whose unweighted and weighted fits are one
// routine, Derived::fit_rows(X, y, weights) with weights null for the unweighted fit.
#pragma once

#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"

namespace bl::ml {

template <class Derived>
class WeightedRowsFit : public Estimator {
 public:
  Estimator& fit(const Tensor& X, const Tensor& y) override {
    return static_cast<Derived&>(*this).fit_rows(X, y, nullptr);
  }
  bool supports_sample_weight() const override { return true; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    return static_cast<Derived&>(*this).fit_rows(X, y, &w);
  }
};

}  // namespace bl::ml
