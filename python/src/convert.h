// convert.h: bl::Tensor <-> array objects of other libraries (NumPy, PyTorch, anything with the
// buffer protocol or DLPack), without copying the elements.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "bitlearn/tensor.h"

namespace bl::py {

namespace nb = nanobind;

// A bl::Tensor viewing the memory of `array` (kept alive by the tensor's buffer). Supported
// element types: float32, int32, int64, uint8, bool; strides must be non-negative. Anything else
// raises TypeError / ValueError naming what was given and what to do.
Tensor tensor_from_array(const nb::ndarray<nb::ro>& array, const char* what);

// The same from any Python object nanobind can read as an array (buffer protocol or __dlpack__).
Tensor tensor_from_object(nb::handle obj, const char* what);

// A NumPy array viewing t's memory (t must be on the CPU); the array keeps the buffer alive.
nb::object tensor_to_numpy(const Tensor& t);

// An array-API object (DLPack producer) viewing t's memory, on t's device.
nb::object tensor_to_dlpack_owner(const Tensor& t);

void bind_tensor(nb::module_& m);
void bind_ml(nb::module_& m);
void bind_verify(nb::module_& m);
void bind_models(nb::module_& m);
void bind_lm(nb::module_& m);

}  // namespace bl::py
