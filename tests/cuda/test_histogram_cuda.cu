// CUDA conformance of the boosting histogram kernel: histogram_cuda equals histogram_reference bit
// for bit under every launch shape of kConformanceLaunchConfigs, for all rows and for row lists;
// and a boosting model fitted with X on CUDA (histograms on the GPU) has the same model-file bytes
// as the CPU fit. Sabotage arm: a histogram whose gradients are perturbed by one unit must differ.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "conformance/test_rng_splitmix.h"
#include "kernels/histogram.h"
#include "kernels/launch.h"

namespace bl {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(1, h.size()) * sizeof(T)), cudaSuccess);
  if (!h.empty()) EXPECT_EQ(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

TEST(HistogramCuda, EqualsReferenceUnderEveryLaunchShape) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<int64_t> ns = {0, 1, 3, 97, 257, 8193, 100003};
  const std::vector<int64_t> ds = {1, 7, 8, 9, 17};
  for (int64_t n : ns) {
    for (int64_t d : ds) {
      test_rng::SplitMix64 rng(static_cast<uint64_t>(n * 31 + d));
      std::vector<uint8_t> bins(static_cast<size_t>(n * d));
      for (auto& b : bins) b = static_cast<uint8_t>(rng.next() & 0xFF);
      std::vector<int64_t> gq(static_cast<size_t>(n)), hq(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        gq[i] = static_cast<int64_t>(rng.next() >> 24) - (int64_t{1} << 39);
        hq[i] = static_cast<int64_t>(rng.next() >> 25);
      }
      std::vector<int32_t> rows;
      for (int64_t i = 0; i < n; ++i) {
        if (rng.next() % 3) rows.push_back(static_cast<int32_t>(i));
      }
      const int64_t size = histogram_size(d);
      uint8_t* dbins = to_device(bins);
      int64_t* dg = to_device(gq);
      int64_t* dh = to_device(hq);
      int32_t* drows = to_device(rows);
      int64_t* dhist = nullptr;
      ASSERT_EQ(cudaMalloc(&dhist, size * sizeof(int64_t)), cudaSuccess);
      for (bool use_rows : {false, true}) {
        const int64_t count = use_rows ? static_cast<int64_t>(rows.size()) : n;
        std::vector<int64_t> ref(size), got(size);
        histogram_reference(bins.data(), d, use_rows ? rows.data() : nullptr, count, gq.data(), hq.data(), ref.data());
        for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
          histogram_cuda(dbins, d, use_rows ? drows : nullptr, count, dg, dh, dhist, cfg);
          ASSERT_EQ(cudaMemcpy(got.data(), dhist, size * sizeof(int64_t), cudaMemcpyDeviceToHost), cudaSuccess);
          ASSERT_EQ(std::memcmp(got.data(), ref.data(), size * sizeof(int64_t)), 0)
              << "n=" << n << " d=" << d << " rows=" << use_rows << " block=" << cfg.block;
        }
        if (count > 0) {  // sabotage: one gradient unit off must show
          std::vector<int64_t> g2 = gq;
          g2[use_rows ? rows[0] : 0] += 1;
          int64_t* dg2 = to_device(g2);
          histogram_cuda(dbins, d, use_rows ? drows : nullptr, count, dg2, dh, dhist);
          ASSERT_EQ(cudaMemcpy(got.data(), dhist, size * sizeof(int64_t), cudaMemcpyDeviceToHost), cudaSuccess);
          EXPECT_NE(std::memcmp(got.data(), ref.data(), size * sizeof(int64_t)), 0) << "sabotage not detected";
          cudaFree(dg2);
        }
      }
      cudaFree(dbins);
      cudaFree(dg);
      cudaFree(dh);
      cudaFree(drows);
      cudaFree(dhist);
    }
  }
}

TEST(HistogramCuda, BoostingModelOnCudaEqualsCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 20000, d = 7;
  test_rng::SplitMix64 rng(5);
  std::vector<float> x(static_cast<size_t>(n * d)), y(static_cast<size_t>(n)), yc(static_cast<size_t>(n));
  for (auto& v : x) v = rng.uniform_pm1();
  for (int64_t i = 0; i < n; i += 13) x[i] = NAN;
  for (int64_t i = 0; i < n; ++i) {
    // Missing features count as 0 in the target so that no label is NaN.
    const float a = x[i * d + 1] == x[i * d + 1] ? x[i * d + 1] : 0.0f;
    const float b = x[i * d + 2] == x[i * d + 2] ? x[i * d + 2] : 0.0f;
    y[i] = a * 2.0f - b + (a > 0.2f ? 1.0f : 0.0f);
    yc[i] = static_cast<float>(static_cast<int>((y[i] + 3.0f)) % 3);
  }
  Tensor X = Tensor::from_vector(x, {n, d});
  Tensor Xc = X.to(Device::cuda());
  for (const char* name : {"hist_gradient_boosting_regressor", "hist_gradient_boosting_classifier"}) {
    Tensor Y = Tensor::from_vector(std::string(name).find("class") != std::string::npos ? yc : y, {n});
    ml::Params p = {{"max_iter", "20"}, {"subsample", "0.8"}};
    auto cpu = ml::make_estimator(name, p);
    cpu->fit(X, Y);
    auto gpu = ml::make_estimator(name, p);
    gpu->fit(Xc, Y);
    EXPECT_EQ(cpu->to_json_text(), gpu->to_json_text()) << name << ": CUDA fit differs from CPU fit";
  }
}

}  // namespace
}  // namespace bl
