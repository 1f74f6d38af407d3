// tensor_io.h: Tensor-level helpers for checks that go through the public op API.
#pragma once

#include <string>
#include <vector>

#include "bitlearn/tensor.h"
#include "verify/check.h"
#include "verify/device_data.h"

namespace bl::verify {

// A new f32 tensor on the context's device holding v.
inline Tensor make_tensor(const CheckContext& ctx, const std::vector<float>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape, core_device(ctx));
}

// An i64 tensor on the context's device.
inline Tensor make_index(const CheckContext& ctx, const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape, core_device(ctx));
}

// Writes a tensor's elements (row-major, copied to the host) under label, by dtype:
// f32 as binary32 bits, integer and boolean types widened to int64.
void add_tensor(OutputWriter& out, const std::string& label, const Tensor& t);

}  // namespace bl::verify
