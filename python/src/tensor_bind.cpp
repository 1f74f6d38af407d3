// bitlearn.Tensor and the Tensor ops of bitlearn/ops.h, each a direct call of the C++ function.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "convert.h"
#include "core/error.h"

namespace bl::py {

namespace {

DType parse_dtype(const std::string& s) {
  if (s == "f32" || s == "float32") return DType::f32;
  if (s == "i32" || s == "int32") return DType::i32;
  if (s == "i64" || s == "int64") return DType::i64;
  if (s == "u8" || s == "uint8") return DType::u8;
  if (s == "bool") return DType::boolean;
  throw nb::value_error(("unknown dtype '" + s + "' (f32, i32, i64, u8, bool)").c_str());
}

nb::tuple to_tuple(const Shape& s) {
  nb::list l;
  for (int64_t v : s) l.append(v);
  return nb::tuple(l);
}

// A Python operand of an arithmetic operator: a Tensor, an array, or a number (a 0-d tensor of the
// other operand's dtype, as NumPy does for Python scalars).
Tensor operand(nb::handle h, const Tensor& like, const char* op) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()))
    return Tensor::scalar(nb::cast<double>(h), like.dtype(), like.device());
  return tensor_from_object(h, op);
}

std::string repr(const Tensor& t) {
  if (!t.defined()) return "bitlearn.Tensor(undefined)";
  return "bitlearn.Tensor(" + std::string(dtype_name(t.dtype())) + shape_str(t.shape()) + ", device='" +
         t.device().str() + "')";
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> cls(m, "Tensor",
                         "An n-dimensional array on one device (CPU or CUDA). Tensor(x) views the "
                         "memory of a NumPy array or any DLPack producer without copying.");
  cls.def("__init__",
          [](Tensor* self, nb::handle obj) { new (self) Tensor(tensor_from_object(obj, "bitlearn.Tensor")); },
          nb::arg("array"))
      .def_prop_ro("shape", [](const Tensor& t) { return to_tuple(t.shape()); })
      .def_prop_ro("strides", [](const Tensor& t) { return to_tuple(t.strides()); },
                   "Strides in elements (not bytes).")
      .def_prop_ro("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device().str(); })
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("size", &Tensor::numel)
      .def("numel", &Tensor::numel)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); },
           "Address of the first element (host or device pointer).")
      .def("digest", [](const Tensor& t) { nb::gil_scoped_release r; return t.digest(); },
           "SHA-256 of (dtype, shape, contiguous bytes): the same as the C++ Tensor::digest().")
      .def("numpy", &tensor_to_numpy, "A NumPy array viewing this tensor's memory (CPU only).")
      .def("__array__",
           [](const Tensor& t, nb::handle dtype, nb::handle copy) {
             nb::object a = tensor_to_numpy(t);
             if (!dtype.is_none()) a = a.attr("astype")(dtype, nb::arg("copy") = false);
             if (!copy.is_none() && nb::cast<bool>(copy)) a = a.attr("copy")();
             return a;
           },
           nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack__",
           [](const Tensor& t, nb::kwargs kwargs) {
             nb::object owner = tensor_to_dlpack_owner(t);
             nb::dict kw;
             for (auto [k, v] : kwargs) {
               if (!v.is_none()) kw[k] = v;
             }
             return owner.attr("__dlpack__")(**kw);
           })
      .def("__dlpack_device__",
           [](const Tensor& t) {
             return nb::make_tuple(t.device().is_cuda() ? nb::device::cuda::value : nb::device::cpu::value,
                                   t.device().index);
           })
      .def("to",
           [](const Tensor& t, const std::string& where) {
             nb::gil_scoped_release r;
             if (where == "cpu" || where.rfind("cuda", 0) == 0) return t.to(Device::parse(where));
             return t.to(parse_dtype(where));
           },
           nb::arg("device_or_dtype"),
           "A copy on a device ('cpu', 'cuda', 'cuda:N') or in a dtype ('f32', 'i64', ...).")
      .def("cpu", [](const Tensor& t) { return t.to(Device::cpu()); })
      .def("contiguous", &Tensor::contiguous)
      .def("clone", &Tensor::clone)
      .def("item", &Tensor::item)
      .def("reshape", [](const Tensor& t, const Shape& s) { return t.reshape(s); })
      .def("view", [](const Tensor& t, const Shape& s) { return t.view(s); })
      .def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); })
      .def("permute", [](const Tensor& t, const std::vector<int64_t>& d) { return t.permute(d); })
      .def("flatten", &Tensor::flatten)
      .def_prop_ro("T", [](const Tensor& t) { return t.transpose(0, 1); })
      .def("__len__", [](const Tensor& t) { return t.dim(0); })
      .def("__repr__", &repr)
      .def("__add__", [](const Tensor& a, nb::handle b) { return add(a, operand(b, a, "+")); })
      .def("__radd__", [](const Tensor& a, nb::handle b) { return add(operand(b, a, "+"), a); })
      .def("__sub__", [](const Tensor& a, nb::handle b) { return sub(a, operand(b, a, "-")); })
      .def("__rsub__", [](const Tensor& a, nb::handle b) { return sub(operand(b, a, "-"), a); })
      .def("__mul__", [](const Tensor& a, nb::handle b) { return mul(a, operand(b, a, "*")); })
      .def("__rmul__", [](const Tensor& a, nb::handle b) { return mul(operand(b, a, "*"), a); })
      .def("__truediv__", [](const Tensor& a, nb::handle b) { return div(a, operand(b, a, "/")); })
      .def("__rtruediv__", [](const Tensor& a, nb::handle b) { return div(operand(b, a, "/"), a); })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { nb::gil_scoped_release r; return matmul(a, b); })
      .def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pow__", [](const Tensor& a, nb::handle b) { return pow(a, operand(b, a, "**")); });

  m.def("from_dlpack", [](nb::handle obj) { return tensor_from_object(obj, "bitlearn.from_dlpack"); },
        nb::arg("x"), "A Tensor viewing the memory of any DLPack producer (torch, numpy, ...) without a copy.");
  m.def("zeros", [](const Shape& s, const std::string& dtype, const std::string& device) {
          return Tensor::zeros(s, parse_dtype(dtype), Device::parse(device)); },
        nb::arg("shape"), nb::arg("dtype") = "f32", nb::arg("device") = "cpu");
  m.def("full", [](const Shape& s, double v, const std::string& dtype, const std::string& device) {
          return Tensor::full(s, v, parse_dtype(dtype), Device::parse(device)); },
        nb::arg("shape"), nb::arg("value"), nb::arg("dtype") = "f32", nb::arg("device") = "cpu");
  m.def("arange", [](int64_t n, const std::string& dtype, const std::string& device) {
          return Tensor::arange(n, parse_dtype(dtype), Device::parse(device)); },
        nb::arg("n"), nb::arg("dtype") = "i64", nb::arg("device") = "cpu");
  m.def("cuda_available", &cuda_available);
  m.def("cuda_backend_built", &cuda_backend_built);
  m.def("cuda_device_count", &cuda_device_count);

  // Unary ops: one Tensor in, one out.
#define BL_PY_UNARY(name) \
  m.def(#name, [](const Tensor& x) { nb::gil_scoped_release r; return bl::name(x); }, nb::arg("x"));
  BL_PY_UNARY(exp) BL_PY_UNARY(expm1) BL_PY_UNARY(log) BL_PY_UNARY(log1p) BL_PY_UNARY(log2)
  BL_PY_UNARY(tanh) BL_PY_UNARY(sigmoid) BL_PY_UNARY(erf) BL_PY_UNARY(gelu) BL_PY_UNARY(gelu_tanh)
  BL_PY_UNARY(silu) BL_PY_UNARY(softplus) BL_PY_UNARY(sin) BL_PY_UNARY(cos) BL_PY_UNARY(rsqrt)
  BL_PY_UNARY(abs) BL_PY_UNARY(neg) BL_PY_UNARY(sqrt) BL_PY_UNARY(relu) BL_PY_UNARY(square)
  BL_PY_UNARY(reciprocal) BL_PY_UNARY(sign) BL_PY_UNARY(floor) BL_PY_UNARY(ceil) BL_PY_UNARY(round)
  BL_PY_UNARY(logical_not)
#undef BL_PY_UNARY
#define BL_PY_BINARY(name)                                                                          \
  m.def(#name, [](const Tensor& a, const Tensor& b) { nb::gil_scoped_release r; return bl::name(a, b); }, \
        nb::arg("a"), nb::arg("b"));
  BL_PY_BINARY(add) BL_PY_BINARY(sub) BL_PY_BINARY(mul) BL_PY_BINARY(div) BL_PY_BINARY(maximum)
  BL_PY_BINARY(minimum) BL_PY_BINARY(pow) BL_PY_BINARY(eq) BL_PY_BINARY(ne) BL_PY_BINARY(lt)
  BL_PY_BINARY(le) BL_PY_BINARY(gt) BL_PY_BINARY(ge)
#undef BL_PY_BINARY
  // Reductions over dims (all dims when dims is empty).
#define BL_PY_REDUCE(pyname, name)                                                              \
  m.def(#pyname, [](const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {          \
          nb::gil_scoped_release r; return bl::name(x, dims, keepdim); },                       \
        nb::arg("x"), nb::arg("dims") = std::vector<int64_t>{}, nb::arg("keepdim") = false);
  BL_PY_REDUCE(sum, sum) BL_PY_REDUCE(mean, mean) BL_PY_REDUCE(amax, amax) BL_PY_REDUCE(amin, amin)
  BL_PY_REDUCE(max, amax) BL_PY_REDUCE(min, amin) BL_PY_REDUCE(l1_norm, l1_norm)
  BL_PY_REDUCE(l2_norm, l2_norm)
#undef BL_PY_REDUCE
  m.def("var", [](const Tensor& x, const std::vector<int64_t>& dims, int64_t ddof, bool keepdim) {
          nb::gil_scoped_release r; return bl::var(x, dims, ddof, keepdim); },
        nb::arg("x"), nb::arg("dims") = std::vector<int64_t>{}, nb::arg("ddof") = 0, nb::arg("keepdim") = false);
  m.def("std", [](const Tensor& x, const std::vector<int64_t>& dims, int64_t ddof, bool keepdim) {
          nb::gil_scoped_release r; return bl::stddev(x, dims, ddof, keepdim); },
        nb::arg("x"), nb::arg("dims") = std::vector<int64_t>{}, nb::arg("ddof") = 0, nb::arg("keepdim") = false);
  m.def("argmax", [](const Tensor& x, int64_t dim, bool keepdim) { return bl::argmax(x, dim, keepdim); },
        nb::arg("x"), nb::arg("dim"), nb::arg("keepdim") = false);
  m.def("argmin", [](const Tensor& x, int64_t dim, bool keepdim) { return bl::argmin(x, dim, keepdim); },
        nb::arg("x"), nb::arg("dim"), nb::arg("keepdim") = false);
  m.def("softmax", [](const Tensor& x, int64_t dim) { nb::gil_scoped_release r; return bl::softmax(x, dim); },
        nb::arg("x"), nb::arg("dim") = -1);
  m.def("log_softmax", [](const Tensor& x, int64_t dim) { nb::gil_scoped_release r; return bl::log_softmax(x, dim); },
        nb::arg("x"), nb::arg("dim") = -1);
  m.def("cumsum", [](const Tensor& x, int64_t dim) { return bl::cumsum(x, dim); }, nb::arg("x"), nb::arg("dim"));
  m.def("matmul",
        [](const Tensor& a, const Tensor& b, bool ta, bool tb) { nb::gil_scoped_release r; return bl::matmul(a, b, ta, tb); },
        nb::arg("a"), nb::arg("b"), nb::arg("trans_a") = false, nb::arg("trans_b") = false);
  m.def("bmm",
        [](const Tensor& a, const Tensor& b, bool ta, bool tb) { nb::gil_scoped_release r; return bl::bmm(a, b, ta, tb); },
        nb::arg("a"), nb::arg("b"), nb::arg("trans_a") = false, nb::arg("trans_b") = false);
  m.def("where", [](const Tensor& c, const Tensor& a, const Tensor& b) { return bl::where(c, a, b); },
        nb::arg("cond"), nb::arg("a"), nb::arg("b"));
  m.def("cast", [](const Tensor& x, const std::string& dtype) { return bl::cast(x, parse_dtype(dtype)); },
        nb::arg("x"), nb::arg("dtype"));
  m.def("concat", [](const std::vector<Tensor>& ts, int64_t dim) { return bl::concat(ts, dim); },
        nb::arg("tensors"), nb::arg("dim") = 0);
  m.def("layer_norm",
        [](const Tensor& x, const Tensor& g, const Tensor& b, float eps) { return bl::layer_norm(x, g, b, eps); },
        nb::arg("x"), nb::arg("gamma"), nb::arg("beta"), nb::arg("eps") = 1e-5f);
  m.def("rms_norm", [](const Tensor& x, const Tensor& g, float eps) { return bl::rms_norm(x, g, eps); },
        nb::arg("x"), nb::arg("gamma"), nb::arg("eps") = 1e-6f);
}

}  // namespace bl::py
