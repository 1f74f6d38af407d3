// tensor.cpp: Tensor construction, views and host transfers. Copies that need a kernel (strided
// copies, casts) call the ops in bitlearn/ops.h.
#include "bitlearn/tensor.h"

#include <algorithm>
#include <cstring>

#include "bitlearn/ops.h"
#include "core/allocator.h"
#include "contract/arith.h"
#include "core/error.h"

#if __has_include("core/digest.h")
#include "core/digest.h"
#define BL_HAVE_DIGEST 1
#endif

namespace bl {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
    case DType::boolean: return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
  }
  return "?";
}

bool dtype_is_integer(DType dtype) {
  return dtype == DType::i32 || dtype == DType::i64 || dtype == DType::u8;
}

Device Device::parse(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (text.size() > 5 && text.compare(0, 5, "cuda:") == 0) {
    std::string digits = text.substr(5);
    bool ok = !digits.empty() && digits.size() <= 4 &&
              std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    BL_CHECK(ok, "Device::parse: expected \"cpu\", \"cuda\" or \"cuda:N\", got \"", text, "\"");
    return Device::cuda(std::stoi(digits));
  }
  throw Error(detail::concat("Device::parse: expected \"cpu\", \"cuda\" or \"cuda:N\", got \"", text,
                             "\""));
}

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    BL_CHECK(e >= 0, "shape ", shape_str(shape), ": extents must be >= 0");
    BL_CHECK(e == 0 || n <= INT64_MAX / e, "shape ", shape_str(shape), ": element count overflows");
    n *= e;
  }
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

// ---------------------------------------------------------------------------------------------
Tensor Tensor::make_view(std::shared_ptr<Buffer> buffer, DType dtype, Device device, Shape shape,
                         Shape strides, int64_t offset) {
  BL_CHECK(buffer != nullptr, "Tensor::make_view: null buffer");
  BL_CHECK(shape.size() == strides.size(), "Tensor::make_view: shape ", shape_str(shape),
           " and strides ", shape_str(strides), " differ in length");
  int64_t n = shape_numel(shape);
  if (n > 0) {
    int64_t lo = offset, hi = offset;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t span = (shape[d] - 1) * strides[d];
      if (span < 0) lo += span;
      else hi += span;
    }
    BL_CHECK(lo >= 0 && static_cast<uint64_t>(hi + 1) * dtype_size(dtype) <= buffer->bytes,
             "Tensor::make_view: view ", shape_str(shape), " with strides ", shape_str(strides),
             " at offset ", offset, " does not fit its buffer of ", buffer->bytes, " bytes");
  }
  Tensor t;
  t.buffer_ = std::move(buffer);
  t.dtype_ = dtype;
  t.device_ = device;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  return t;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  int64_t n = shape_numel(shape);
  auto buffer = allocate_buffer(static_cast<size_t>(n) * dtype_size(dtype), device, "Tensor::empty");
  return make_view(std::move(buffer), dtype, device, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  zero_bytes(t.raw_data(), device, static_cast<size_t>(t.numel()) * dtype_size(dtype));
  return t;
}

namespace {

// value converted to dtype by the cast rules (saturating, NaN -> 0 for integers), written to dst.
void store_scalar(void* dst, DType dtype, double value) {
  bool nan = value != value;
  auto saturate = [&](double lo, double hi) -> double {
    if (nan) return 0.0;
    double t = value < 0 ? -static_cast<double>(static_cast<int64_t>(-value < 9.3e18 ? -value : 9.3e18))
                         : static_cast<double>(static_cast<int64_t>(value < 9.3e18 ? value : 9.3e18));
    return t < lo ? lo : (t > hi ? hi : t);
  };
  switch (dtype) {
    case DType::f32: {
      float f = nan ? canonical_nan() : static_cast<float>(value);
      std::memcpy(dst, &f, 4);
      break;
    }
    case DType::i32: {
      int32_t v = static_cast<int32_t>(saturate(-2147483648.0, 2147483647.0));
      std::memcpy(dst, &v, 4);
      break;
    }
    case DType::i64: {
      int64_t v;
      if (nan) v = 0;
      else if (value >= 9223372036854775808.0) v = INT64_MAX;
      else if (value < -9223372036854775808.0) v = INT64_MIN;
      else v = static_cast<int64_t>(value);
      std::memcpy(dst, &v, 8);
      break;
    }
    case DType::u8: {
      uint8_t v = static_cast<uint8_t>(saturate(0.0, 255.0));
      std::memcpy(dst, &v, 1);
      break;
    }
    case DType::boolean: {
      uint8_t v = value != 0.0 ? 1 : 0;
      std::memcpy(dst, &v, 1);
      break;
    }
  }
}

template <typename T>
Tensor from_host(const std::vector<T>& values, const Shape& shape, DType dtype, Device device,
                 const char* op) {
  int64_t n = shape_numel(shape);
  BL_CHECK(n == static_cast<int64_t>(values.size()), op, ": shape ", shape_str(shape), " holds ", n,
           " elements but ", values.size(), " values were given");
  Tensor t = Tensor::empty(shape, dtype, device);
  copy_bytes(t.raw_data(), device, values.data(), Device::cpu(), values.size() * sizeof(T));
  return t;
}

}  // namespace

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  shape_numel(shape);
  check_device_usable(device, "Tensor::full");
  Tensor host = empty({}, dtype, Device::cpu());
  store_scalar(host.raw_data(), dtype, value);
  Tensor one = host.to(device);
  return one.expand(shape).contiguous();
}

Tensor Tensor::scalar(double value, DType dtype, Device device) { return full({}, value, dtype, device); }

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape, Device device) {
  return from_host(values, shape, DType::f32, device, "Tensor::from_vector");
}
Tensor Tensor::from_vector(const std::vector<int32_t>& values, const Shape& shape, Device device) {
  return from_host(values, shape, DType::i32, device, "Tensor::from_vector");
}
Tensor Tensor::from_vector(const std::vector<int64_t>& values, const Shape& shape, Device device) {
  return from_host(values, shape, DType::i64, device, "Tensor::from_vector");
}
Tensor Tensor::from_vector(const std::vector<uint8_t>& values, const Shape& shape, DType dtype,
                           Device device) {
  BL_CHECK(dtype == DType::u8 || dtype == DType::boolean,
           "Tensor::from_vector: byte values need dtype u8 or bool, got ", dtype_name(dtype));
  if (dtype == DType::boolean)
    for (size_t i = 0; i < values.size(); ++i)
      BL_CHECK(values[i] <= 1, "Tensor::from_vector: bool value at ", i, " is ", int(values[i]),
               ", expected 0 or 1");
  return from_host(values, shape, dtype, device, "Tensor::from_vector");
}

Tensor Tensor::arange(int64_t n, DType dtype, Device device) {
  BL_CHECK(n >= 0, "Tensor::arange: n must be >= 0, got ", n);
  BL_CHECK(dtype == DType::f32 || dtype == DType::i32 || dtype == DType::i64,
           "Tensor::arange: dtype must be f32, i32 or i64, got ", dtype_name(dtype));
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  Tensor t = from_host(v, {n}, DType::i64, Device::cpu(), "Tensor::arange");
  if (dtype != DType::i64) t = t.to(dtype);
  return t.to(device);
}

// ---------------------------------------------------------------------------------------------
void Tensor::check_defined(const char* op) const {
  BL_CHECK(defined(), op, ": the tensor is undefined");
}

int64_t Tensor::numel() const { return shape_numel(shape_); }

int64_t Tensor::dim(int64_t d) const {
  check_defined("Tensor::dim");
  int64_t nd = ndim();
  int64_t r = d < 0 ? d + nd : d;
  BL_CHECK(r >= 0 && r < nd, "Tensor::dim: dimension ", d, " out of range for ", str());
  return shape_[static_cast<size_t>(r)];
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 0) return true;
    if (shape_[i] != 1 && strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::string Tensor::str() const {
  if (!defined()) return "undefined tensor";
  return std::string(dtype_name(dtype_)) + shape_str(shape_) + " on " + device_.str();
}

template <typename T>
void Tensor::check_type(const char* op) const {
  check_defined(op);
  DType want = dtype_of<T>::value;
  bool ok = dtype_ == want || (want == DType::u8 && dtype_ == DType::boolean);
  BL_CHECK(ok, op, ": element type ", dtype_name(want), " requested from a ", str());
}

template <typename T>
T* Tensor::data() {
  check_type<T>("Tensor::data");
  BL_CHECK(device_.is_cpu(), "Tensor::data: host pointer requested from a ", str(),
           " (use raw_data() or to(Device::cpu()))");
  return static_cast<T*>(buffer_->ptr) + offset_;
}

template <typename T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}

void* Tensor::raw_data() {
  check_defined("Tensor::raw_data");
  return static_cast<char*>(buffer_->ptr) + offset_ * static_cast<int64_t>(element_size());
}

const void* Tensor::raw_data() const { return const_cast<Tensor*>(this)->raw_data(); }

template <typename T>
std::vector<T> Tensor::to_vector() const {
  check_type<T>("Tensor::to_vector");
  Tensor c = contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  copy_bytes(out.data(), Device::cpu(), c.raw_data(), c.device(), out.size() * sizeof(T));
  return out;
}

double Tensor::item() const {
  check_defined("Tensor::item");
  BL_CHECK(numel() == 1, "Tensor::item: expected one element, got ", str());
  Tensor h = to(Device::cpu());
  switch (dtype_) {
    case DType::f32: return *h.data<float>();
    case DType::i32: return *h.data<int32_t>();
    case DType::i64: return static_cast<double>(*h.data<int64_t>());
    case DType::u8:
    case DType::boolean: return *h.data<uint8_t>();
  }
  return 0.0;
}

#define BL_INSTANTIATE(T)                                  \
  template T* Tensor::data<T>();                           \
  template const T* Tensor::data<T>() const;               \
  template std::vector<T> Tensor::to_vector<T>() const;
BL_INSTANTIATE(float)
BL_INSTANTIATE(int32_t)
BL_INSTANTIATE(int64_t)
BL_INSTANTIATE(uint8_t)
#undef BL_INSTANTIATE

// ---------------------------------------------------------------------------------------------
Tensor Tensor::contiguous() const {
  check_defined("Tensor::contiguous");
  if (is_contiguous()) return *this;
  return copy(*this);
}

Tensor Tensor::clone() const {
  check_defined("Tensor::clone");
  return copy(*this);
}

Tensor Tensor::to(Device device) const {
  check_defined("Tensor::to");
  if (device == device_) return contiguous();
  check_device_usable(device, "Tensor::to");
  Tensor src = contiguous();
  Tensor out = empty(shape_, dtype_, device);
  copy_bytes(out.raw_data(), device, src.raw_data(), device_,
             static_cast<size_t>(src.numel()) * element_size());
  return out;
}

Tensor Tensor::to(DType dtype) const { return cast(*this, dtype); }

// ---------------------------------------------------------------------------------------------
namespace {

// Resolves a single -1 extent against numel.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op, const std::string& from) {
  Shape out = shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      BL_CHECK(infer_at < 0, op, ": at most one extent may be -1, got ", shape_str(shape));
      infer_at = static_cast<int64_t>(i);
    } else {
      BL_CHECK(out[i] >= 0, op, ": invalid extent in ", shape_str(shape));
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    BL_CHECK(known != 0 && numel % known == 0, op, ": cannot reshape ", from, " to ",
             shape_str(shape));
    out[static_cast<size_t>(infer_at)] = numel / known;
  }
  BL_CHECK(shape_numel(out) == numel, op, ": cannot reshape ", from, " (", numel, " elements) to ",
           shape_str(shape));
  return out;
}

// Strides for viewing (shape, strides) as new_shape without a copy, or false when impossible.
// Walks both shapes in chunks whose products agree; each old chunk must be contiguous in itself.
bool view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape& out) {
  out.assign(new_shape.size(), 0);
  int64_t numel = 1;
  for (int64_t e : shape) numel *= e;
  if (numel == 0) {
    out = contiguous_strides(new_shape);
    return true;
  }
  size_t oi = 0, ni = 0;
  const size_t on = shape.size(), nn = new_shape.size();
  while (oi < on || ni < nn) {
    // Skip extent-1 dims on both sides.
    if (ni < nn && new_shape[ni] == 1) {
      out[ni] = 1;
      ++ni;
      continue;
    }
    if (oi < on && shape[oi] == 1) {
      ++oi;
      continue;
    }
    if (oi >= on || ni >= nn) return false;
    // Grow an old chunk [oi, oe) and a new chunk [ni, ne) until their products match.
    size_t oe = oi + 1, ne = ni + 1;
    int64_t op = shape[oi], np = new_shape[ni];
    while (op != np) {
      if (op < np) {
        if (oe >= on) return false;
        op *= shape[oe++];
      } else {
        if (ne >= nn) return false;
        np *= new_shape[ne++];
      }
    }
    // The old chunk must be contiguous within itself (ignoring extent-1 dims).
    int64_t inner_stride = 0;
    bool first = true;
    int64_t expect = 0;
    for (size_t k = oe; k-- > oi;) {
      if (shape[k] == 1) continue;
      if (first) {
        inner_stride = strides[k];
        expect = strides[k] * shape[k];
        first = false;
      } else {
        if (strides[k] != expect) return false;
        expect = strides[k] * shape[k];
      }
    }
    int64_t s = inner_stride;
    for (size_t k = ne; k-- > ni;) {
      out[k] = s;
      s *= new_shape[k];
    }
    oi = oe;
    ni = ne;
  }
  return true;
}

}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  check_defined("Tensor::view");
  Shape target = infer_shape(shape, numel(), "Tensor::view", str());
  Shape strides;
  BL_CHECK(view_strides(shape_, strides_, target, strides), "Tensor::view: cannot view ", str(),
           " with strides ", shape_str(strides_), " as ", shape_str(target),
           " without a copy (use reshape)");
  return make_view(buffer_, dtype_, device_, target, strides, offset_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  check_defined("Tensor::reshape");
  Shape target = infer_shape(shape, numel(), "Tensor::reshape", str());
  Shape strides;
  if (view_strides(shape_, strides_, target, strides))
    return make_view(buffer_, dtype_, device_, target, strides, offset_);
  return contiguous().view(target);
}

Tensor Tensor::flatten() const { return reshape({numel()}); }

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  check_defined("Tensor::transpose");
  int64_t nd = ndim();
  int64_t a = d0 < 0 ? d0 + nd : d0, b = d1 < 0 ? d1 + nd : d1;
  BL_CHECK(a >= 0 && a < nd && b >= 0 && b < nd, "Tensor::transpose: dimensions (", d0, ", ", d1,
           ") out of range for ", str());
  Shape s = shape_, st = strides_;
  std::swap(s[a], s[b]);
  std::swap(st[a], st[b]);
  return make_view(buffer_, dtype_, device_, s, st, offset_);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  check_defined("Tensor::permute");
  int64_t nd = ndim();
  BL_CHECK(static_cast<int64_t>(dims.size()) == nd, "Tensor::permute: ", dims.size(),
           " dimensions given for ", str());
  std::vector<bool> seen(static_cast<size_t>(nd), false);
  Shape s(dims.size()), st(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i] < 0 ? dims[i] + nd : dims[i];
    BL_CHECK(d >= 0 && d < nd && !seen[static_cast<size_t>(d)], "Tensor::permute: dims ",
             shape_str(dims), " are not a permutation of ", nd, " dimensions");
    seen[static_cast<size_t>(d)] = true;
    s[i] = shape_[static_cast<size_t>(d)];
    st[i] = strides_[static_cast<size_t>(d)];
  }
  return make_view(buffer_, dtype_, device_, s, st, offset_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  check_defined("Tensor::slice");
  int64_t nd = ndim();
  int64_t k = d < 0 ? d + nd : d;
  BL_CHECK(k >= 0 && k < nd, "Tensor::slice: dimension ", d, " out of range for ", str());
  BL_CHECK(step >= 1, "Tensor::slice: step must be >= 1, got ", step);
  int64_t extent = shape_[static_cast<size_t>(k)];
  auto clamp = [&](int64_t v) {
    if (v < 0) v += extent;
    return std::min(std::max<int64_t>(v, 0), extent);
  };
  int64_t b = clamp(start), e = clamp(end);
  int64_t len = e > b ? (e - b + step - 1) / step : 0;
  Shape s = shape_, st = strides_;
  s[static_cast<size_t>(k)] = len;
  st[static_cast<size_t>(k)] = strides_[static_cast<size_t>(k)] * step;
  int64_t off = len > 0 ? offset_ + b * strides_[static_cast<size_t>(k)] : offset_;
  return make_view(buffer_, dtype_, device_, s, st, off);
}

Tensor Tensor::squeeze(int64_t d) const {
  check_defined("Tensor::squeeze");
  int64_t nd = ndim();
  int64_t k = d < 0 ? d + nd : d;
  BL_CHECK(k >= 0 && k < nd, "Tensor::squeeze: dimension ", d, " out of range for ", str());
  BL_CHECK(shape_[static_cast<size_t>(k)] == 1, "Tensor::squeeze: dimension ", d, " of ", str(),
           " has extent ", shape_[static_cast<size_t>(k)], ", expected 1");
  Shape s = shape_, st = strides_;
  s.erase(s.begin() + k);
  st.erase(st.begin() + k);
  return make_view(buffer_, dtype_, device_, s, st, offset_);
}

Tensor Tensor::squeeze() const {
  check_defined("Tensor::squeeze");
  Shape s, st;
  for (size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] != 1) {
      s.push_back(shape_[i]);
      st.push_back(strides_[i]);
    }
  return make_view(buffer_, dtype_, device_, s, st, offset_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  check_defined("Tensor::unsqueeze");
  int64_t nd = ndim();
  int64_t k = d < 0 ? d + nd + 1 : d;
  BL_CHECK(k >= 0 && k <= nd, "Tensor::unsqueeze: position ", d, " out of range for ", str());
  Shape s = shape_, st = strides_;
  int64_t stride = k < nd ? strides_[static_cast<size_t>(k)] * shape_[static_cast<size_t>(k)] : 1;
  s.insert(s.begin() + k, 1);
  st.insert(st.begin() + k, stride);
  return make_view(buffer_, dtype_, device_, s, st, offset_);
}

Tensor Tensor::expand(const Shape& shape) const {
  check_defined("Tensor::expand");
  BL_CHECK(shape.size() >= shape_.size(), "Tensor::expand: cannot expand ", str(), " to fewer dimensions ",
           shape_str(shape));
  size_t nd = shape.size(), td = shape_.size();
  Shape s(nd), st(nd, 0);
  for (size_t o = 0; o < nd; ++o) {
    if (o < nd - td) {
      BL_CHECK(shape[o] >= 0, "Tensor::expand: invalid extent in ", shape_str(shape));
      s[o] = shape[o];
      continue;
    }
    size_t k = o - (nd - td);
    int64_t have = shape_[k], want = shape[o] == -1 ? have : shape[o];
    BL_CHECK(have == want || have == 1, "Tensor::expand: cannot expand ", str(), " to ",
             shape_str(shape), " (dimension ", o, ")");
    s[o] = want;
    st[o] = have == want ? strides_[k] : 0;
  }
  return make_view(buffer_, dtype_, device_, s, st, offset_);
}

std::string Tensor::digest() const {
  check_defined("Tensor::digest");
#if defined(BL_HAVE_DIGEST)
  Tensor h = to(Device::cpu());
  return tensor_digest(dtype_name(dtype_), shape_, h.raw_data(),
                       static_cast<size_t>(h.numel()) * element_size());
#else
  throw Error("Tensor::digest: this build has no digest support (src/core/digest.h missing)");
#endif
}

bool cuda_available() { return cuda_device_count() > 0; }

int cuda_device_count() {
#if defined(BITLEARN_HAS_CUDA)
  return cuda_count_devices();
#else
  return 0;
#endif
}

}  // namespace bl
