// cuda_compare.h: the CPU-vs-CUDA check the estimator families' CUDA tests share: every output an
// estimator has, and the loop that fits each case on the CPU and on cuda:0 and compares model files
// byte for byte and outputs by digest; plus the sabotage arm (one input value changed moves the
// CUDA model).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/error.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/ops.h"
#include "ml_linear/ml_test_util.h"

namespace bl::ml_common {

using ml_test::normal_data;  // [n, d] Philox normal values, stream (seed, 7)

// The digests of predict, predict_proba, decision_function, transform and score_samples, "-" for
// each the estimator does not have.
inline std::string all_outputs(const ml::Estimator& est, const Tensor& X) {
  std::string out;
  for (int which = 0; which < 5; ++which) {
    try {
      Tensor t = which == 0   ? est.predict(X)
                 : which == 1 ? est.predict_proba(X)
                 : which == 2 ? est.decision_function(X)
                 : which == 3 ? est.transform(X)
                              : est.score_samples(X);
      out += t.digest();
    } catch (const Error&) {
      out += "-";
    }
  }
  return out;
}

// One estimator configuration: fitted on X (with y unless y is null), outputs compared on Q.
struct CudaCase {
  const char* name;
  ml::Params params;
  const Tensor* X;
  const Tensor* y;  // nullptr: unsupervised
  const Tensor* Q;
};

// Fits every case on the CPU and on cuda:0; EXPECTs equal model files and outputs, prints one
// IDENTICAL / DIVERGENT line per case, and returns the number of divergent cases.
inline int compare_cpu_and_cuda(const std::vector<CudaCase>& cases) {
  const Device gpu = Device::cuda(0);
  int failures = 0;
  for (const CudaCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto cpu = ml::make_estimator(c.name, c.params);
    auto cuda = ml::make_estimator(c.name, c.params);
    if (c.y == nullptr) {
      cpu->fit(*c.X);
      cuda->fit(c.X->to(gpu));
    } else {
      cpu->fit(*c.X, *c.y);
      cuda->fit(c.X->to(gpu), c.y->to(gpu));
    }
    const std::string a = cpu->to_json_text(), g = cuda->to_json_text();
    EXPECT_EQ(a, g) << "model file differs";
    const std::string pc = all_outputs(*cpu, *c.Q), pg = all_outputs(*cuda, c.Q->to(gpu));
    EXPECT_EQ(pc, pg) << "outputs differ";
    const bool same = a == g && pc == pg;
    failures += same ? 0 : 1;
    std::printf("  %-32s CPU vs CUDA model file + outputs: %s\n", c.name, same ? "IDENTICAL" : "DIVERGENT");
  }
  return failures;
}

// The sabotage arm: X with value 3's exponent bit 23 flipped (the value doubles or halves) fits a
// different CUDA model than X.
inline void expect_changed_value_moves_the_cuda_model(const char* name, const ml::Params& params, int64_t n,
                                                      int64_t d, uint64_t seed) {
  const Device gpu = Device::cuda(0);
  Tensor X = normal_data(n, d, seed);
  Tensor y = sum(X, {1});
  Tensor X2 = X.clone();
  uint32_t bits;
  std::memcpy(&bits, X2.data<float>() + 3, 4);
  bits ^= 1u << 23;
  std::memcpy(X2.data<float>() + 3, &bits, 4);
  auto a = ml::make_estimator(name, params), b = ml::make_estimator(name, params);
  a->fit(X.to(gpu), y.to(gpu));
  b->fit(X2.to(gpu), y.to(gpu));
  EXPECT_NE(a->to_json_text(), b->to_json_text());
}

}  // namespace bl::ml_common
