// logistic_gradients.h: the logistic loss's gradient pass of histogram boosting.
//
// Per row: p = sigmoid(raw) with bl::sigmoid's bits, g = p - y and h = max(p * (1 - p), min_hessian)
// in float32 contract arithmetic. On x86-64 CPUs with AVX2+FMA the sigmoid is evaluated in binary64
// (sigmoid_f64_avx2, below), four rows at a time, and kept only where a rounding test proves it is
// bl::sigmoid's binary32 result; the other rows (rare) and every other CPU take bl::sigmoid itself.
#pragma once

#include <cstdint>

namespace bl {
class ThreadPool;
}

namespace bl::ml {

// grad[i], hess[i] of the logistic loss at raw[i] for label y_class[i] (1: positive, else
// negative), i < n, in fixed row chunks on `pool` (the result does not depend on the cut).
void logistic_gradients(const float* raw, const int32_t* y_class, int64_t n, float min_hessian, float* grad,
                        float* hess, ThreadPool& pool);

// out[i] = canonicalize(bl::sigmoid(x[i])) for i < n on the calling thread, by the fastest path
// this CPU has (the binary64 evaluation with its rounding test, else bl::sigmoid).
void sigmoid_bits(const float* x, float* out, int64_t n);

// The binary64 evaluation (AVX2+FMA; call only when cpu_has_avx2_fma()). margin_bits is the
// rounding test's margin as -log2 (44 in sigmoid_bits; <= 0 switches the test off, which only
// the tests use to show that it matters). Returns how many rows went to bl::sigmoid.
int64_t sigmoid_f64_avx2(const float* x, float* out, int64_t n, int margin_bits);

// logistic_gradients on the calling thread with sigmoid_f64_avx2 (call only when
// cpu_has_avx2_fma()): the same bits as the per-row formula.
void logistic_gradients_avx2(const float* raw, const int32_t* y_class, int64_t n, float min_hessian, float* grad,
                             float* hess);

}  // namespace bl::ml
