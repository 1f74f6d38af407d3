#include "verify/tensor_io.h"

#include "core/error.h"

namespace bl::verify {

void add_tensor(OutputWriter& out, const std::string& label, const Tensor& t) {
  BL_CHECK(t.defined(), "verify output '", label, "': undefined tensor");
  Tensor h = t.to(Device::cpu());
  // The shape is part of the output: a wrong shape must change the hash too.
  out.add_i64(label + ".shape", h.shape());
  switch (h.dtype()) {
    case DType::f32:
      out.add_f32(label, h.to_vector<float>());
      return;
    case DType::i64:
      out.add_i64(label, h.to_vector<int64_t>());
      return;
    case DType::i32: {
      std::vector<int32_t> v = h.to_vector<int32_t>();
      out.add_i64(label, std::vector<int64_t>(v.begin(), v.end()));
      return;
    }
    case DType::u8:
    case DType::boolean: {
      std::vector<uint8_t> v = h.to_vector<uint8_t>();
      out.add_i64(label, std::vector<int64_t>(v.begin(), v.end()));
      return;
    }
  }
  throw Error("verify output '" + label + "': unsupported dtype");
}

}  // namespace bl::verify
