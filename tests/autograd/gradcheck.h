// gradcheck.h: gradient checks of autograd against central finite differences of a float64
// reference implementation of the same function.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bitlearn/autograd.h"
#include "conformance/test_rng_splitmix.h"

namespace bl::gradcheck {

using Values = std::vector<double>;
// The f32 function under test: inputs -> output (any shape).
using VarFn = std::function<ag::Var(const std::vector<ag::Var>&)>;
// The float64 reference: inputs (row-major) -> output (row-major, same numel).
using RefFn = std::function<Values(const std::vector<Values>&)>;

struct GradInput {
  Shape shape;
  Values values;       // empty: uniform in [-scale, scale)
  double scale = 1.0;
  bool requires_grad = true;
};

inline Values random_values(int64_t n, uint64_t seed, double scale) {
  test_rng::SplitMix64 rng(seed);
  Values v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<double>(rng.uniform_pm1()) * scale;
  return v;
}

// Checks d(sum(out * R))/d(input) for every input that requires a gradient, R a fixed random
// weighting of the output. Tolerance: |analytic - numeric| <= tol * (|numeric| + max |numeric|).
inline void expect_gradients(const std::string& name, std::vector<GradInput> inputs, const VarFn& f,
                             const RefFn& ref, double tol = 2e-3, uint64_t seed = 1) {
  SCOPED_TRACE(name);
  std::vector<Values> vals;
  std::vector<ag::Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GradInput& in = inputs[i];
    int64_t n = shape_numel(in.shape);
    if (in.values.empty()) in.values = random_values(n, seed * 7919 + i, in.scale);
    std::vector<float> fv(in.values.begin(), in.values.end());
    Values rounded(fv.begin(), fv.end());
    vals.push_back(rounded);
    vars.emplace_back(Tensor::from_vector(fv, in.shape), in.requires_grad);
  }
  ag::Var out = f(vars);
  Values ref_out = ref(vals);
  ASSERT_EQ(static_cast<size_t>(out.value().numel()), ref_out.size()) << "output size";
  // The forward itself must agree with the reference.
  std::vector<float> got = out.value().contiguous().to_vector<float>();
  for (size_t k = 0; k < got.size(); ++k)
    ASSERT_NEAR(got[k], ref_out[k], 1e-4 * (1.0 + std::fabs(ref_out[k]))) << "forward element " << k;
  Values weights = random_values(static_cast<int64_t>(ref_out.size()), seed + 99, 1.0);
  std::vector<float> wf(weights.begin(), weights.end());
  Values wd(wf.begin(), wf.end());
  ag::Var w(Tensor::from_vector(wf, out.shape()), false);
  ag::Var loss = ag::sum(ag::mul(out, w));
  ag::backward(loss);
  auto objective = [&](const std::vector<Values>& v) {
    Values o = ref(v);
    double s = 0;
    for (size_t k = 0; k < o.size(); ++k) s += o[k] * wd[k];
    return s;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad) continue;
    ASSERT_TRUE(vars[i].grad().defined()) << "input " << i << " got no gradient";
    std::vector<float> g = vars[i].grad().contiguous().to_vector<float>();
    Values numeric(vals[i].size());
    double biggest = 0;
    for (size_t k = 0; k < vals[i].size(); ++k) {
      std::vector<Values> p = vals, m = vals;
      double h = 1e-6 * std::max(1.0, std::fabs(vals[i][k]));
      p[i][k] += h;
      m[i][k] -= h;
      numeric[k] = (objective(p) - objective(m)) / (2 * h);
      biggest = std::max(biggest, std::fabs(numeric[k]));
    }
    size_t bad = 0, worst = 0;
    double worst_excess = 0;
    for (size_t k = 0; k < numeric.size(); ++k) {
      double excess = std::fabs(g[k] - numeric[k]) / (tol * (std::fabs(numeric[k]) + biggest + 1e-6));
      if (excess > 1.0) ++bad;
      if (excess > worst_excess) worst_excess = excess, worst = k;
    }
    EXPECT_EQ(bad, 0u) << "input " << i << " element " << worst << ": autograd " << g[worst]
                       << " vs finite difference " << numeric[worst] << " (" << bad << " of "
                       << numeric.size() << " elements off)";
  }
}

}  // namespace bl::gradcheck
