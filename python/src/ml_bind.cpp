// bitlearn._core.Estimator: the registry's estimators (bitlearn/ml/estimator.h), for the
// scikit-learn-style classes of bitlearn/ml.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/ml/ensemble.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/tree.h"
#include "bitlearn/ml/progress.h"
#include "convert.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/gaussian_process/gp_regressor.h"
#include "ml/preprocessing/target_encoder.h"

namespace bl::py {

namespace {

// Owns one estimator; every compute call releases the GIL.
class PyEstimator {
 public:
  explicit PyEstimator(std::unique_ptr<ml::Estimator> est) : est_(std::move(est)) {}
  ml::Estimator& get() const { return *est_; }

 private:
  std::unique_ptr<ml::Estimator> est_;
};

// The model file text as `bitlearn fit` writes it: the estimator's JSON plus the feature names
// and target it was fit with, dumped the same way.
std::string model_file_text(const ml::Estimator& est, const std::optional<std::vector<std::string>>& features,
                            const std::optional<std::string>& target) {
  nlohmann::json j = nlohmann::json::parse(est.to_json_text());
  if (features) j["feature_names"] = *features;
  if (target && !target->empty()) j["target"] = *target;
  return j.dump(1) + "\n";
}

}  // namespace

void bind_ml(nb::module_& m) {
  nb::class_<PyEstimator>(m, "Estimator", "One registry estimator (bitlearn/ml/estimator.h).")
      .def_static("make",
                  [](const std::string& name, const ml::Params& params) {
                    return std::make_unique<PyEstimator>(ml::make_estimator(name, params));
                  },
                  nb::arg("name"), nb::arg("params") = ml::Params{})
      .def_static("from_json_text",
                  [](const std::string& text, const std::string& source) {
                    return std::make_unique<PyEstimator>(ml::estimator_from_json_text(text, source));
                  },
                  nb::arg("text"), nb::arg("source") = "model")
      .def_static("load",
                  [](const std::string& path) { return std::make_unique<PyEstimator>(ml::load_estimator(path)); },
                  nb::arg("path"))
      .def_prop_ro("name", [](const PyEstimator& e) { return e.get().name(); })
      .def("fit",
           [](PyEstimator& e, const Tensor& X, std::optional<Tensor> y, std::optional<Tensor> sample_weight) {
             nb::gil_scoped_release r;
             ml::WarningCollector warnings;  // the fit's warnings (ConvergenceWarning), returned
             e.get().fit_weighted(X, y ? *y : Tensor(), sample_weight ? *sample_weight : Tensor());
             return warnings.messages();
           },
           nb::arg("X"), nb::arg("y") = nb::none(), nb::arg("sample_weight") = nb::none(),
           "Fits (with a weight per row where the estimator takes weights); returns the fit's warnings "
           "(an iterative solver stopped by max_iter), as messages.")
      .def_prop_ro("supports_sample_weight", [](const PyEstimator& e) { return e.get().supports_sample_weight(); })
      .def("predict", [](const PyEstimator& e, const Tensor& X) { nb::gil_scoped_release r; return e.get().predict(X); })
      .def("predict_proba",
           [](const PyEstimator& e, const Tensor& X) { nb::gil_scoped_release r; return e.get().predict_proba(X); })
      .def("decision_function",
           [](const PyEstimator& e, const Tensor& X) { nb::gil_scoped_release r; return e.get().decision_function(X); })
      .def("transform",
           [](const PyEstimator& e, const Tensor& X) { nb::gil_scoped_release r; return e.get().transform(X); })
      .def("score",
           [](const PyEstimator& e, const Tensor& X, const Tensor& y, std::optional<Tensor> sample_weight) {
             nb::gil_scoped_release r;
             return e.get().score_weighted(X, y, sample_weight ? *sample_weight : Tensor());
           },
           nb::arg("X"), nb::arg("y"), nb::arg("sample_weight") = nb::none(),
           "Accuracy (classifiers), R^2 (regressors) or the estimator's own score; with sample_weight the "
           "weighted accuracy / R^2 (the ranker: NDCG weighted per query by its mean row weight).")
      .def("score_samples",
           [](const PyEstimator& e, const Tensor& X) { nb::gil_scoped_release r; return e.get().score_samples(X); })
      .def("predict_std",
           [](const PyEstimator& e, const Tensor& X) { nb::gil_scoped_release r; return ml::gaussian_process_predict_std(e.get(), X); })
      .def("target_encoder_cross_fit",
           [](const PyEstimator& e, const Tensor& X, const Tensor& y) {
             nb::gil_scoped_release r;
             return ml::target_encoder_cross_fit(e.get(), X, y);
           },
           nb::arg("X"), nb::arg("y"), "A fitted target_encoder's encodings of its training rows by cross fitting (fit_transform).")
      .def("get_params", [](const PyEstimator& e) { return e.get().get_params(); })
      .def("set_params", [](PyEstimator& e, const ml::Params& p) { e.get().set_params(p); })
      .def_prop_ro("fitted", [](const PyEstimator& e) { return e.get().fitted(); })
      .def("to_json_text", [](const PyEstimator& e) { return e.get().to_json_text(); })
      .def("state_json",
           [](const PyEstimator& e) {
             nlohmann::json s;
             e.get().save_state(s);
             return s.dump();
           },
           "The fitted state (a model file's \"state\") as JSON text.")
      .def("model_file_text",
           [](const PyEstimator& e, std::optional<std::vector<std::string>> features, std::optional<std::string> target) {
             return model_file_text(e.get(), features, target);
           },
           nb::arg("feature_names") = nb::none(), nb::arg("target") = nb::none(),
           "The model file text `bitlearn fit` writes (feature names and target included when given).")
      .def("save",
           [](const PyEstimator& e, const std::string& path) { e.get().save(path); }, nb::arg("path"));

  m.def("estimator_names", &ml::estimator_names);
  m.def(
      "tree_feature_importances",
      [](const PyEstimator& e, const Tensor& X, const Tensor& y, std::optional<Tensor> sample_weight) {
        nb::gil_scoped_release r;
        return ml::tree_feature_importances(e.get(), X, y, sample_weight ? *sample_weight : Tensor());
      },
      nb::arg("estimator"), nb::arg("X"), nb::arg("y"), nb::arg("sample_weight") = nb::none(),
      "Mean decrease in impurity per feature of a fitted CART tree or forest, from its training data.");
  m.def("set_num_threads",
        [](int threads) {
          check_thread_count(threads, "set_num_threads");
          set_num_threads(threads);
        },
        nb::arg("threads"), "CPU threads for every later call (results do not depend on it).");
  m.def("num_threads", &num_threads);
  m.def("read_csv",
        [](const std::string& path, const std::string& target) {
          CsvTable table = read_csv(path);
          CsvXy xy = csv_to_xy(table, target, {}, path);
          nb::object y = xy.y.defined() ? nb::cast(xy.y) : nb::none();
          return nb::make_tuple(xy.X, y, xy.feature_names);
        },
        nb::arg("path"), nb::arg("target") = "",
        "Reads a CSV file as `bitlearn fit` does: (X, y or None, feature names).");
}

}  // namespace bl::py
