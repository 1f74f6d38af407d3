// tensor.h: the n-dimensional array of bitlearn: dtype, device, shared storage and strided views.
//
// A Tensor is a view (shape, strides in elements, offset in elements) onto a reference-counted
// buffer on one device. Copying a Tensor copies the view, not the data; views (reshape, transpose,
// slice, expand, ...) share the buffer. Operations that compute live in bitlearn/ops.h.
// Boolean tensors store one byte per element, 0 or 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bl {

// Element types. boolean is stored as one uint8_t per element holding 0 or 1.
enum class DType : uint8_t { f32, i32, i64, u8, boolean };

// Bytes per element of dtype (4, 4, 8, 1, 1).
size_t dtype_size(DType dtype);
// "f32", "i32", "i64", "u8", "bool": the names used in errors and in tensor digests.
const char* dtype_name(DType dtype);
// True for i32, i64, u8 (integer arithmetic types; boolean is not one).
bool dtype_is_integer(DType dtype);

// Where a tensor's memory lives.
struct Device {
  enum class Kind : uint8_t { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;  // CUDA device ordinal; always 0 for cpu

  static Device cpu() { return Device{Kind::cpu, 0}; }
  static Device cuda(int index = 0) { return Device{Kind::cuda, index}; }
  // Parses "cpu", "cuda" (= cuda:0) or "cuda:N"; anything else throws bl::Error.
  static Device parse(const std::string& text);
  // "cpu" or "cuda:N".
  std::string str() const;
  bool is_cpu() const { return kind == Kind::cpu; }
  bool is_cuda() const { return kind == Kind::cuda; }
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

using Shape = std::vector<int64_t>;

// "[2, 3, 4]": for error messages.
std::string shape_str(const Shape& shape);
// Product of the extents (1 for a 0-d shape); throws bl::Error on a negative extent or overflow.
int64_t shape_numel(const Shape& shape);
// Row-major (C order) strides in elements for shape.
Shape contiguous_strides(const Shape& shape);

// A block of device memory (host: 64-byte aligned; cuda: cudaMalloc), freed when the last Tensor
// that views it goes away. Defined in src/core/allocator.h.
struct Buffer;

class Tensor {
 public:
  // An undefined tensor (defined() is false); most calls on it throw bl::Error.
  Tensor() = default;

  // ---- factories ----
  // Uninitialized contiguous tensor.
  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  // Contiguous tensor of zeros (all bits zero).
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu());
  // Contiguous tensor with every element equal to value converted to dtype by the cast rules of
  // bitlearn/ops_elementwise.h (value is first rounded to float for f32; exact for integers < 2^53).
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32,
                     Device device = Device::cpu());
  // A 0-d tensor holding value (see full).
  static Tensor scalar(double value, DType dtype = DType::f32, Device device = Device::cpu());
  // Copies values into a new contiguous tensor of the given shape (numel must equal values.size()).
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape,
                            Device device = Device::cpu());
  static Tensor from_vector(const std::vector<int32_t>& values, const Shape& shape,
                            Device device = Device::cpu());
  static Tensor from_vector(const std::vector<int64_t>& values, const Shape& shape,
                            Device device = Device::cpu());
  // u8 or boolean data (for boolean, every value must be 0 or 1).
  static Tensor from_vector(const std::vector<uint8_t>& values, const Shape& shape, DType dtype,
                            Device device = Device::cpu());
  // 0, 1, ..., n-1 as a 1-d tensor of dtype (f32, i32 or i64).
  static Tensor arange(int64_t n, DType dtype = DType::i64, Device device = Device::cpu());

  // ---- properties ----
  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements; may be 0 (broadcast) 
  int64_t offset() const { return offset_; }          // in elements from the buffer start
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const;
  // Extent of dimension d; negative d counts from the end (-1 = last). Out of range -> bl::Error.
  int64_t dim(int64_t d) const;
  // Same as dim(d).
  int64_t size(int64_t d) const { return dim(d); }
  // True when the strides are row-major for the shape (extent-1 dimensions ignored).
  bool is_contiguous() const;
  size_t element_size() const { return dtype_size(dtype_); }
  // "f32[2, 3] on cpu": for error messages.
  std::string str() const;

  // ---- data access ----
  // Typed pointer to the first element (at offset) of a CPU tensor. T must match dtype
  // (float=f32, int32_t=i32, int64_t=i64, uint8_t=u8 or boolean); else bl::Error, as for CUDA.
  template <typename T>
  T* data();
  template <typename T>
  const T* data() const;
  // Untyped pointer to the first element on the tensor's device (host or CUDA pointer).
  void* raw_data();
  const void* raw_data() const;
  // Keeps the underlying buffer alive (for code that hands out raw pointers).
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

  // Copies the elements (row-major order) to a host vector. T must match dtype as for data<T>().
  template <typename T>
  std::vector<T> to_vector() const;
  // The single element of a 1-element tensor, converted to double.
  double item() const;

  // ---- copies ----
  // This tensor if already contiguous, else a contiguous copy on the same device.
  Tensor contiguous() const;
  // A contiguous copy that owns new storage.
  Tensor clone() const;
  // A contiguous copy on device (this tensor itself if already there and contiguous).
  Tensor to(Device device) const;
  // Conversion to dtype by the cast rules of bitlearn/ops_elementwise.h (same as bl::cast).
  Tensor to(DType dtype) const;

  // ---- views (share storage) ----
  // New shape with the same numel; one extent may be -1 (inferred). Returns a view when the
  // strides allow it, else a contiguous copy (reshape) / bl::Error (view).
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  // Swaps two dimensions (negative indices allowed).
  Tensor transpose(int64_t d0, int64_t d1) const;
  // Reorders dimensions: result dim i is this tensor's dim dims[i]; dims must be a permutation.
  Tensor permute(const std::vector<int64_t>& dims) const;
  // Elements start, start+step, ... < end along dim (step >= 1); start/end are clamped to
  // [0, dim], negative values count from the end (Python slicing rules for step >= 1).
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  // Removes dimension d, which must have extent 1.
  Tensor squeeze(int64_t d) const;
  // Removes every extent-1 dimension.
  Tensor squeeze() const;
  // Inserts an extent-1 dimension at position d (0..ndim; negative counts from ndim+1).
  Tensor unsqueeze(int64_t d) const;
  // Broadcasts to shape (numpy rules: align trailing dims, extent 1 -> any extent with stride 0;
  // -1 keeps the extent). The result is a view with zero strides; do not write through it.
  Tensor expand(const Shape& shape) const;
  // Flattens to 1-d (reshape({numel})).
  Tensor flatten() const;

  // ---- digests ----
  // SHA-256 hex digest of (dtype name, shape, contiguous host bytes); see src/core/digest.h.
  std::string digest() const;

  // Low-level constructor: a view onto buffer (checked to lie within the buffer).
  static Tensor make_view(std::shared_ptr<Buffer> buffer, DType dtype, Device device, Shape shape,
                          Shape strides, int64_t offset);

 private:
  void check_defined(const char* op) const;
  template <typename T>
  void check_type(const char* op) const;

  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::f32;
  Device device_ = Device::cpu();
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
};

// Maps a C++ element type to its DType (float, int32_t, int64_t, uint8_t -> u8).
template <typename T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::u8;
};

// True when a CUDA device is usable (false in a CPU-only build).
bool cuda_available();
// True when this build has the CUDA backend (BITLEARN_CUDA at configure time), device or not.
bool cuda_backend_built();
// Number of CUDA devices (0 in a CPU-only build or without a GPU).
int cuda_device_count();

}  // namespace bl
