// bitlearn._core: the extension module behind the bitlearn Python package.
#include <nanobind/nanobind.h>

#include "convert.h"
#include "core/error.h"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "bitlearn's C++ library: tensors, ops, estimators, models and the verifier";
  // Every bl::Error (bad input, bad options, unsupported calls) is a bitlearn.Error, a ValueError.
  nb::exception<bl::Error>(m, "Error", PyExc_ValueError);
  bl::py::bind_tensor(m);
  bl::py::bind_ml(m);
  bl::py::bind_verify(m);
  bl::py::bind_models(m);
  bl::py::bind_lm(m);
}
