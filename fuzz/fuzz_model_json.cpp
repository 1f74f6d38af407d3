// Fuzz target: a bitlearn model file (any estimator) through estimator_from_json_text; a model
// that loads then predicts on small tables of 1 to 4 columns (a column count it does not expect
// must be refused, never read out of bounds).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<bl::ml::Estimator> est;
  try {
    est = bl::ml::estimator_from_json_text(text, "fuzz model.json");
  } catch (const bl::Error&) {
    return 0;
  }
  for (int64_t d = 1; d <= 4; ++d) {
    std::vector<float> x(static_cast<size_t>(3 * d));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - 1.0f;
    const bl::Tensor X = bl::Tensor::from_vector(x, {3, d});
    try {
      (void)est->predict(X);
    } catch (const bl::Error&) {
    }
    try {
      (void)est->transform(X);
    } catch (const bl::Error&) {
    }
  }
  return 0;
}
