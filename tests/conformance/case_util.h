// case_util.h: small pieces the case lists share (host tensors from vectors, raw element access,
// the "broken" sums that the sabotage arms use).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "conformance/driver.h"
#include "conformance/ops_test_util.h"
#include "contract/arith.h"

namespace bl::conformance {

// A host f32 tensor of shape holding conformance_floats (special values and rounding edges mixed in).
inline Tensor special_floats(const Shape& shape, uint64_t seed, float scale = 4.0f) {
  return Tensor::from_vector(conformance_floats(shape_numel(shape), seed, scale), shape);
}

// A host f32 tensor of shape with plain values in [-scale, scale) (reductions over long rows keep
// finite sums this way) and, with special_every > 0, a special value every that many elements.
inline Tensor plain_floats(const Shape& shape, uint64_t seed, float scale = 1.0f, int special_every = 0) {
  return Tensor::from_vector(generate_floats(shape_numel(shape), seed, scale, special_every), shape);
}

// The elements of a host tensor (any strides) in view order.
inline std::vector<float> floats_of(const Tensor& t) { return raw_vector<float>(t); }

inline Tensor f32_tensor(const std::vector<float>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape);
}
inline Tensor i64_tensor(const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape);
}

// Copies reference outputs into a host tensor of dtype and shape from raw bytes.
inline Tensor tensor_from_bytes(const void* data, const Shape& shape, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  if (bytes) std::memcpy(t.raw_data(), data, bytes);
  return t;
}

// A left-to-right sum from +0.0: the schedule a naive kernel would use; the sabotage arms of the
// reductions compute with it to show that the comparison rejects a changed summation order.
inline float sequential_sum(const float* x, int64_t n, int64_t stride = 1) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s = add(s, x[i * stride]);
  return s;
}

// The shape with the dimensions [first, first + count) removed (or set to 1 with keepdim).
inline Shape reduced_shape(const Shape& s, size_t first, size_t count, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < s.size(); ++d) {
    if (d >= first && d < first + count) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(s[d]);
    }
  }
  return out;
}

inline std::string dims_label(const Shape& shape, const std::vector<int64_t>& dims) {
  std::string s = shape_str(shape) + " dims={";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "}";
}

}  // namespace bl::conformance
