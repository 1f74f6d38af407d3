// bitlearn._core: the extension module behind the bitlearn Python package.
#include <nanobind/nanobind.h>

#include "convert.h"
#include "core/error.h"

namespace nb = nanobind;

namespace bl::py {
void bind_nn(nb::module_& m);  // nn_bind.cpp: bitlearn.nn
void bind_timeseries(nb::module_& m);  // timeseries_bind.cpp: forecast and the stat tests
}  // namespace bl::py

namespace bl::py { void bind_shap(nb::module_& m); }  // python/src/shap_bind.cpp

NB_MODULE(_core, m) {
  m.doc() = "bitlearn's C++ library: tensors, ops, estimators, models and the verifier";
  // Every bl::Error (bad input, bad options, unsupported calls) is a bitlearn.Error, a ValueError.
  nb::exception<bl::Error>(m, "Error", PyExc_ValueError);
  bl::py::bind_tensor(m);
  bl::py::bind_ml(m);
  bl::py::bind_verify(m);
  bl::py::bind_models(m);
  bl::py::bind_lm(m);
  bl::py::bind_shap(m);
  bl::py::bind_nn(m);
  bl::py::bind_timeseries(m);
}
