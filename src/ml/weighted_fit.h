// weighted_fit.h: the fit plumbing of an estimator whose unweighted and weighted fits are one
// routine, Derived::fit_rows(X, y, weights) with weights null for the unweighted fit. Base is the
// class the estimator would otherwise derive from (its constructors are inherited); a Derived that
// keeps fit_rows private names this class a friend.
#pragma once

#include <algorithm>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"

namespace bl::ml {

template <class Derived, class Base = Estimator>
class WeightedRowsFit : public Base {
 public:
  using Base::Base;
  Estimator& fit(const Tensor& X, const Tensor& y) override {
    return static_cast<Derived&>(*this).fit_rows(X, y, nullptr);
  }
  bool supports_sample_weight() const override { return true; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    return static_cast<Derived&>(*this).fit_rows(X, y, &w);
  }
};

// The same for an estimator that ignores y: Derived::fit_rows(X, weights).
template <class Derived, class Base = Estimator>
class WeightedRowsFitX : public Base {
 public:
  using Base::Base;
  Estimator& fit(const Tensor& X, const Tensor&) override { return static_cast<Derived&>(*this).fit_rows(X, nullptr); }
  bool supports_sample_weight() const override { return true; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor&, const std::vector<float>& w) override {
    return static_cast<Derived&>(*this).fit_rows(X, &w);
  }
};

// w, or null where every weight is 1 (such a fit then takes the unweighted path and its bits).
inline const std::vector<float>* null_if_unit_weights(const std::vector<float>* w) {
  if (w == nullptr) return nullptr;
  const bool ones = std::all_of(w->begin(), w->end(), [](float v) { return v == 1.0f; });
  return ones ? nullptr : w;
}

}  // namespace bl::ml
