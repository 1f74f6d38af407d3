// Fuzz target: an XGBoost JSON model through the import, then the xgboost_model estimator built on
// the same file predicting on a small table of the model's feature count.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "io/xgboost_json.h"
#include "support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = bl::fuzz::write_scratch_file("xgboost.json", data, size);
  try {
    const bl::ml::XgboostImport imp = bl::ml::import_xgboost_json(text, "fuzz xgboost.json");
    auto est = bl::ml::make_estimator("xgboost_model", {{"model_file", path}});
    est->fit(bl::Tensor());
    const int64_t d = imp.n_features;
    if (d < 1 || d > 256) return 0;
    std::vector<float> x(static_cast<size_t>(4 * d));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i % 7) - 1.0f;
    const bl::Tensor X = bl::Tensor::from_vector(x, {4, d});
    (void)est->predict(X);
    try {
      (void)est->predict_proba(X);
    } catch (const bl::Error&) {
      // Regression objectives have no probabilities.
    }
  } catch (const bl::Error&) {
  }
  return 0;
}
