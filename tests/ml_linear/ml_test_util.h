// ml_test_util.h: shared helpers of the ml_linear tests (data files, synthetic data, digests).
#pragma once

#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "contract/rng.h"
#include "core/digest.h"

namespace bl::ml_test {

inline std::string data_path(const std::string& name) {
  return std::string(BITLEARN_SOURCE_DIR) + "/tests/data/ml_linear/" + name;
}

// X, y of tests/data/ml_linear/<dataset>_<part>.csv (target column "target").
inline CsvXy load_split(const std::string& dataset, const std::string& part) {
  return csv_to_xy(read_csv(data_path(dataset + "_" + part + ".csv")), "target");
}

// Philox normal data [n, d] with seed (stream 7).
inline Tensor normal_data(int64_t n, int64_t d, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n * d; ++i) v[i] = normal_element(seed, 7, static_cast<uint64_t>(i));
  return Tensor::from_vector(v, {n, d});
}

inline std::string sha256_text(const std::string& s) { return sha256_hex(s.data(), s.size()); }

}  // namespace bl::ml_test
