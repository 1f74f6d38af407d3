// ml_test_util.h: shared helpers of the ml_linear tests (data files, synthetic data, digests).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"
#include "contract/rng.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/thread_pool.h"

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

// The message of the bl::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// What an identity test records of one fit: SHA-256 of the model file and digests of the outputs.
struct FitDigests {
  std::string model_sha, predict_digest;
};

// Runs fit at 1 thread, then at 2 and 3, and expects the same digests each time; prints the
// reference digests under `name`. Restores the thread count.
inline void expect_same_digests_across_threads(const std::string& name, const std::function<FitDigests()>& fit) {
  const int saved = num_threads();
  set_num_threads(1);
  const FitDigests ref = fit();
  for (int t : {2, 3}) {
    set_num_threads(t);
    const FitDigests o = fit();
    EXPECT_EQ(o.model_sha, ref.model_sha) << name << " threads " << t;
    EXPECT_EQ(o.predict_digest, ref.predict_digest) << name << " threads " << t;
  }
  std::printf("  %-22s model %.16s predictions %.16s\n", name.c_str(), ref.model_sha.c_str(),
              ref.predict_digest.c_str());
  set_num_threads(saved);
}

}  // namespace bl::ml_test

// Expects the bl::Error thrown by stmt to mention text.
#define EXPECT_ERROR_HAS(stmt, text)                                 \
  do {                                                                \
    std::string msg_ = ::bl::ml_test::error_of([&] { stmt; });        \
    EXPECT_NE(msg_.find(text), std::string::npos) << msg_;            \
  } while (0)
