// tensor_io.h: Tensor-level helpers for checks that go through the public op API.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

// A new f32 tensor on the context's device holding v.
inline Tensor make_tensor(const CheckContext& ctx, const std::vector<float>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape, core_device(ctx));
}

// An i64 tensor on the context's device.
inline Tensor make_index(const CheckContext& ctx, const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape, core_device(ctx));
}

// Named host weight tensors of a model check, as a checkpoint would hold them.
using WeightMap = std::map<std::string, Tensor>;

// Adds a host weight of the given shape under name: standard normals times scale from Philox
// stream `stream`, which then moves on to the next stream.
inline void add_normal_weight(CheckContext& ctx, WeightMap& t, uint64_t& stream, const std::string& name,
                              const Shape& shape, float scale) {
  t[name] = Tensor::from_vector(normal_floats(ctx, stream++, shape_numel(shape), scale), shape);
}

// Adds a host weight of the given shape under name, uniform in [lo, hi), from stream `stream`,
// which then moves on to the next stream.
inline void add_uniform_weight(CheckContext& ctx, WeightMap& t, uint64_t& stream, const std::string& name,
                               const Shape& shape, float lo, float hi) {
  t[name] = Tensor::from_vector(uniform_floats(ctx, stream++, shape_numel(shape), lo, hi), shape);
}

// Writes a tensor's elements (row-major, copied to the host) under label, by dtype:
// f32 as binary32 bits, integer and boolean types widened to int64.
void add_tensor(OutputWriter& out, const std::string& label, const Tensor& t);

}  // namespace bl::verify
