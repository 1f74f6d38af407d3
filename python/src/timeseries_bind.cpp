// bitlearn._core's time-series functions (src/ml/timeseries/): a fitted forecaster's forecast, given
// by its model file text (Estimator.to_json_text), and the statistics of stattests.h.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "ml/timeseries/forecaster.h"
#include "ml/timeseries/stattests.h"

namespace nb = nanobind;

namespace bl::py {

void bind_timeseries(nb::module_& m) {
  m.def(
      "forecast",
      [](const std::string& model_text, int64_t steps, std::optional<Tensor> exog, double alpha) {
        auto est = ml::estimator_from_json_text(model_text);
        const auto* fc = dynamic_cast<const ml::Forecaster*>(est.get());
        BL_CHECK(fc != nullptr, est->name(), " is not a forecaster");
        ml::Forecast f;
        {
          nb::gil_scoped_release r;
          f = fc->forecast(steps, exog ? *exog : Tensor(), alpha);
        }
        return nb::make_tuple(f.mean, f.lower, f.upper);
      },
      nb::arg("model_text"), nb::arg("steps"), nb::arg("exog") = nb::none(), nb::arg("alpha") = 0.05,
      "(mean, lower, upper) of the steps after a fitted forecaster's series (model file text).");
  m.def("tsa_acf", [](const std::vector<double>& x, int64_t nlags, bool adjusted) { return ml::ts::acf(x, nlags, adjusted); },
        nb::arg("x"), nb::arg("nlags") = -1, nb::arg("adjusted") = false, "Autocorrelations (stattests.h).");
  m.def("tsa_pacf",
        [](const std::vector<double>& x, int64_t nlags, const std::string& method) { return ml::ts::pacf(x, nlags, method); },
        nb::arg("x"), nb::arg("nlags") = -1, nb::arg("method") = "ywadjusted", "Partial autocorrelations (stattests.h).");
  m.def(
      "tsa_adfuller",
      [](const std::vector<double>& x, int64_t maxlag, const std::string& regression, const std::string& autolag) {
        const ml::ts::AdfResult r = ml::ts::adfuller(x, maxlag, regression, autolag);
        nb::dict d;
        d["statistic"] = r.statistic;
        d["pvalue"] = r.pvalue;
        d["used_lag"] = r.used_lag;
        d["nobs"] = r.nobs;
        d["critical_values"] = std::vector<double>{r.crit[0], r.crit[1], r.crit[2]};
        d["icbest"] = r.icbest;
        return d;
      },
      nb::arg("x"), nb::arg("maxlag") = -1, nb::arg("regression") = "c", nb::arg("autolag") = "aic",
      "Augmented Dickey-Fuller test (stattests.h).");
  m.def(
      "tsa_kpss",
      [](const std::vector<double>& x, const std::string& regression, int64_t nlags) {
        const ml::ts::KpssResult r = ml::ts::kpss(x, regression, nlags);
        nb::dict d;
        d["statistic"] = r.statistic;
        d["pvalue"] = r.pvalue;
        d["lags"] = r.lags;
        d["critical_values"] = std::vector<double>{r.crit[0], r.crit[1], r.crit[2], r.crit[3]};
        return d;
      },
      nb::arg("x"), nb::arg("regression") = "c", nb::arg("nlags") = -1, "KPSS stationarity test (stattests.h).");
}

}  // namespace bl::py
