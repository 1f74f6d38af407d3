// Zero-copy conversion between bl::Tensor and DLPack / buffer-protocol arrays (convert.h).
#include "convert.h"

#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/error.h"

namespace bl::py {

namespace {

// Maps a DLPack element type to a DType; false when bitlearn has no such type.
bool dtype_from_dlpack(nb::dlpack::dtype d, DType* out) {
  using code = nb::dlpack::dtype_code;
  if (d.lanes != 1) return false;
  if (d.code == static_cast<uint8_t>(code::Float) && d.bits == 32) *out = DType::f32;
  else if (d.code == static_cast<uint8_t>(code::Int) && d.bits == 32) *out = DType::i32;
  else if (d.code == static_cast<uint8_t>(code::Int) && d.bits == 64) *out = DType::i64;
  else if (d.code == static_cast<uint8_t>(code::UInt) && d.bits == 8) *out = DType::u8;
  else if (d.code == static_cast<uint8_t>(code::Bool) && d.bits == 8) *out = DType::boolean;
  else return false;
  return true;
}

std::string dlpack_dtype_text(nb::dlpack::dtype d) {
  using code = nb::dlpack::dtype_code;
  const char* kind = "?";
  switch (static_cast<code>(d.code)) {
    case code::Int: kind = "int"; break;
    case code::UInt: kind = "uint"; break;
    case code::Float: kind = "float"; break;
    case code::Bfloat: kind = "bfloat"; break;
    case code::Complex: kind = "complex"; break;
    case code::Bool: kind = "bool"; break;
  }
  return std::string(kind) + std::to_string(d.bits);
}

nb::dlpack::dtype dlpack_from_dtype(DType t) {
  using code = nb::dlpack::dtype_code;
  nb::dlpack::dtype d;
  d.lanes = 1;
  switch (t) {
    case DType::f32: d.code = static_cast<uint8_t>(code::Float); d.bits = 32; break;
    case DType::i32: d.code = static_cast<uint8_t>(code::Int); d.bits = 32; break;
    case DType::i64: d.code = static_cast<uint8_t>(code::Int); d.bits = 64; break;
    case DType::u8: d.code = static_cast<uint8_t>(code::UInt); d.bits = 8; break;
    case DType::boolean: d.code = static_cast<uint8_t>(code::Bool); d.bits = 8; break;
  }
  return d;
}

// Frees the ndarray reference (and so the foreign memory) with the buffer, never the memory itself.
struct ForeignBufferDeleter {
  nb::ndarray<nb::ro> owner;
  void operator()(Buffer* b) const {
    b->ptr = nullptr;
    delete b;
  }
};

// Keeps a bl::Tensor (and so its buffer) alive for as long as an exported array lives.
nb::capsule tensor_owner(const Tensor& t) {
  Tensor* keep = new Tensor(t);
  return nb::capsule(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
}

}  // namespace

Tensor tensor_from_array(const nb::ndarray<nb::ro>& a, const char* what) {
  DType dtype;
  if (!dtype_from_dlpack(a.dtype(), &dtype)) {
    throw nb::type_error((std::string(what) + ": element type " + dlpack_dtype_text(a.dtype()) +
                          " is not supported (bitlearn tensors hold float32, int32, int64, uint8 or "
                          "bool); convert first, e.g. x.astype(numpy.float32)")
                             .c_str());
  }
  Device device = Device::cpu();
  if (a.device_type() == nb::device::cuda::value) {
    device = Device::cuda(a.device_id());
  } else if (a.device_type() != nb::device::cpu::value) {
    throw nb::value_error((std::string(what) + ": arrays on DLPack device type " +
                           std::to_string(a.device_type()) + " are not supported (cpu or cuda)")
                              .c_str());
  }
  check_device_usable(device, what);  // a no-op for the CPU
  Shape shape(a.ndim()), strides(a.ndim());
  int64_t span = 1;  // elements from the first to one past the last
  bool empty = false;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = a.stride(i);
    if (shape[i] == 0) empty = true;
    if (strides[i] < 0) {
      throw nb::value_error((std::string(what) + ": negative strides (a reversed view) are not "
                             "supported without a copy; pass numpy.ascontiguousarray(x) or use "
                             "bitlearn.tensor(x), which copies")
                                .c_str());
    }
    span += (shape[i] - 1) * strides[i];
  }
  if (empty) return Tensor::empty(shape, dtype, device);
  auto* raw = new Buffer();
  raw->ptr = const_cast<void*>(a.data());
  raw->bytes = static_cast<size_t>(span) * dtype_size(dtype);
  raw->device = device;
  std::shared_ptr<Buffer> buffer(raw, ForeignBufferDeleter{a});
  return Tensor::make_view(buffer, dtype, device, shape, strides, 0);
}

Tensor tensor_from_object(nb::handle obj, const char* what) {
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(obj, a, false)) {
    throw nb::type_error((std::string(what) + ": expected an array (NumPy, PyTorch, anything with "
                          "the buffer protocol or __dlpack__), got " +
                          nb::type_name(obj.type()).c_str())
                             .c_str());
  }
  return tensor_from_array(a, what);
}

nb::object tensor_to_numpy(const Tensor& t) {
  BL_CHECK(t.defined(), "Tensor.numpy: undefined tensor");
  if (!t.device().is_cpu()) {
    throw nb::value_error(("Tensor.numpy: the tensor is on " + t.device().str() +
                           "; copy it to the host first with .to(\"cpu\")")
                              .c_str());
  }
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  nb::ndarray<nb::numpy> arr(const_cast<void*>(t.raw_data()), shape.size(), shape.data(),
                             tensor_owner(t), strides.data(), dlpack_from_dtype(t.dtype()),
                             nb::device::cpu::value, 0);
  return nb::cast(arr, nb::rv_policy::reference);
}

nb::object tensor_to_dlpack_owner(const Tensor& t) {
  BL_CHECK(t.defined(), "Tensor.__dlpack__: undefined tensor");
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  const int dev = t.device().is_cuda() ? nb::device::cuda::value : nb::device::cpu::value;
  nb::ndarray<nb::array_api> arr(const_cast<void*>(t.raw_data()), shape.size(), shape.data(),
                                 tensor_owner(t), strides.data(), dlpack_from_dtype(t.dtype()), dev,
                                 t.device().index);
  return nb::cast(arr, nb::rv_policy::reference);
}

}  // namespace bl::py
