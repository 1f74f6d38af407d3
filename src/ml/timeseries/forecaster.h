// forecaster.h: what the time-series models of src/ml/timeseries/ add to the estimator interface.
//
// A forecaster is a registry estimator (`bitlearn fit --model NAME`) whose fit reads y as one series
// in row order (row 0 is the oldest observation) and X as exogenous regressors [n, k] (k may be 0:
// a data file holding only the target column). Besides predict (in-sample one-step predictions),
// it forecasts the steps that follow the fitted series, with prediction intervals. All arithmetic
// is binary64 on the host (docs/contract.md, "Binary64 on the host"), so forecasts are the same on
// every machine, thread count and device.
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml {

struct Forecast {
  std::vector<double> mean;   // [steps]: the point forecasts
  std::vector<double> lower;  // [steps]: the (1 - alpha) prediction interval
  std::vector<double> upper;
};

class Forecaster {
 public:
  virtual ~Forecaster() = default;
  // The next `steps` values after the fitted series (steps >= 1). exog: the future regressors
  // [steps, k] with k as in fit, or an undefined Tensor when the model has none. alpha in (0, 1):
  // the intervals' level is 1 - alpha. Throws bl::Error for bad arguments or an unfitted model.
  virtual Forecast forecast(int64_t steps, const Tensor& exog, double alpha) const = 0;
};

}  // namespace bl::ml
