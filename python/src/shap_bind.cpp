// bitlearn._core.shap_values: SHAP values of the tree models (src/ml/tree/tree_shap.h) as a NumPy
// float64 array: the imported XGBoost / LightGBM models (their pred_contribs in bitlearn/ml.py) and
// bitlearn's own trees, forests and histogram gradient boosting.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "ml/tree/tree_shap.h"

namespace bl::py {

namespace nb = nanobind;

void bind_shap(nb::module_& m) {
  m.def(
      "shap_values",
      [](const std::string& model_text, const Tensor& X) {
        auto* values = new std::vector<double>();
        int64_t cols = 0;
        try {
          nb::gil_scoped_release release;
          auto est = ml::estimator_from_json_text(model_text, "model");
          *values = ml::estimator_shap_values(*est, X, &cols);
        } catch (...) {
          delete values;
          throw;
        }
        nb::capsule owner(values, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
        const size_t shape[2] = {static_cast<size_t>(X.dim(0)), static_cast<size_t>(cols)};
        return nb::ndarray<nb::numpy, double, nb::ndim<2>>(values->data(), 2, shape, owner);
      },
      nb::arg("model_text"), nb::arg("X"),
      "SHAP values [n, n_groups * (n_features + 1)] (float64) of a model file's text (decision / extra "
      "trees, random and extra trees forests, hist_gradient_boosting_*, xgboost_model, lightgbm_model): per "
      "output group one column per feature, then the expected value; a group's columns add up to its "
      "margin (tree models: the predicted value or class fraction; boosting: the raw score).");
}

}  // namespace bl::py
