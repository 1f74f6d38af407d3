// ops_test_util.h: helpers shared by the Tensor-op conformance tests (CPU and CUDA): op tables
// indexed by the kernel enums, raw references over contiguous data, and a thread-count guard.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/binary.h"
#include "kernels/unary.h"

namespace bl::conformance {

using UnaryTensorFn = Tensor (*)(const Tensor&);
using BinaryTensorFn = Tensor (*)(const Tensor&, const Tensor&);

inline UnaryTensorFn unary_tensor_fn(UnaryOp op) {
  static const UnaryTensorFn fns[] = {
      &bl::exp, &bl::expm1, &bl::log, &bl::log1p, &bl::log2, &bl::tanh, &bl::sigmoid,
      &bl::erf, &bl::gelu, &bl::gelu_tanh, &bl::silu, &bl::softplus, &bl::sin, &bl::cos,
      &bl::rsqrt, &bl::abs, &bl::neg, &bl::sqrt, &bl::relu, &bl::square, &bl::reciprocal,
      &bl::sign, &bl::floor, &bl::ceil, &bl::round};
  static_assert(sizeof(fns) / sizeof(fns[0]) == kUnaryOpCount, "one function per unary op");
  return fns[static_cast<int>(op)];
}

inline BinaryTensorFn binary_tensor_fn(BinaryOp op) {
  static const BinaryTensorFn fns[] = {&bl::add, &bl::sub, &bl::mul, &bl::div,
                                       &bl::maximum, &bl::minimum, &bl::pow};
  return fns[static_cast<int>(op)];
}

inline BinaryTensorFn compare_tensor_fn(CompareOp op) {
  static const BinaryTensorFn fns[] = {&bl::eq, &bl::ne, &bl::lt, &bl::le, &bl::gt, &bl::ge};
  return fns[static_cast<int>(op)];
}

// The elements of t (any strides) in view order, as raw values of type T.
template <typename T>
std::vector<T> raw_vector(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.raw_data(), out.size() * sizeof(T));
  return out;
}

// Expects fn() to throw a bl::Error whose message contains needle.
template <class Fn>
void expect_error(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected bl::Error containing " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A view of n contiguous elements for the raw references.
inline StridedView identity_view(int64_t n) {
  StridedView v;
  v.ndim = 1;
  v.shape[0] = n > 0 ? n : 1;
  v.strides[0] = 1;
  return v;
}

// The view a reference needs to read tensor t (any strides) broadcast to shape, element by
// element (no dimension merging, so it is independent of the code under test).
inline StridedView reference_view(const Tensor& t, const Shape& shape) {
  StridedView v;
  v.ndim = static_cast<int>(shape.size());
  size_t td = t.shape().size();
  for (size_t o = 0; o < shape.size(); ++o) {
    v.shape[o] = shape[o] > 0 ? shape[o] : 1;
    v.strides[o] = 0;
    if (o + td >= shape.size()) {
      size_t k = o + td - shape.size();
      v.strides[o] = t.shape()[k] == 1 ? 0 : t.strides()[k];
    }
  }
  return v;
}

// Restores the thread count when a test ends.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

// Floats with special values and values that matter for rounding (halves, large integers).
inline std::vector<float> conformance_floats(int64_t n, uint64_t seed, float scale = 4.0f) {
  std::vector<float> v = generate_floats(n, seed, scale, 7);
  static const float extra[] = {0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 8388607.5f, -8388607.5f,
                                8388608.0f, 16777217.0f, 0.49999997f, -0.49999997f, 1e-45f, 3.0e38f};
  for (int64_t i = 0; i < n; i += 11) v[static_cast<size_t>(i)] = extra[(i / 11) % 14];
  return v;
}

}  // namespace bl::conformance
