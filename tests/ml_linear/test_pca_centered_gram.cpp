// test_pca_centered_gram.cpp: the fused covariance numerator of PCA (centered_gram_cpu) is bitwise
// equal to the contract GEMM of the centered copy, bl::matmul(X - mean, X - mean, true, false), for
// the AVX2 and the portable leaf at 1, 2 and 3 threads, over row counts around the 256-row k-leaf
// and the 64-leaf task round, feature counts around the 8-lane tile, and special values (signed
// zeros, huge values that overflow to inf and inf - inf = NaN). Sabotage arm: one chain over all
// rows (no k-leaves) gives other bits, so the comparison can fail.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/thread_pool.h"
#include "ml/decomposition/centered_gram.h"
#include "ml_test_util.h"

namespace bl {
namespace {

std::vector<float> gemm_of_centered(const Tensor& X, const Tensor& mu) {
  Tensor Xc = bl::sub(X, mu);
  return bl::matmul(Xc, Xc, true, false).to_vector<float>();
}

std::vector<float> fused(const Tensor& X, const Tensor& mu, int threads, bool simd) {
  ThreadPool pool(threads);
  const int64_t d = X.dim(1);
  std::vector<float> out(static_cast<size_t>(d * d), -1.0f);
  ml::centered_gram_cpu(X.data<float>(), X.dim(0), d, mu.data<float>(), out.data(), &pool, simd);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void expect_matches_gemm(const Tensor& X, const std::string& what) {
  Tensor mu = bl::mean(X, {0}).contiguous();
  std::vector<float> want = gemm_of_centered(X, mu);
  for (bool simd : {true, false})
    for (int threads : {1, 2, 3})
      EXPECT_TRUE(same_bits(fused(X, mu, threads, simd), want))
          << what << " simd=" << simd << " threads=" << threads;
}

TEST(PcaCenteredGram, MatchesGemmOfCenteredCopy) {
  for (int64_t n : {1, 2, 3, 255, 256, 257, 1000, 64 * 256, 64 * 256 + 1, 65 * 256 + 7})
    for (int64_t d : {1, 2, 7, 8, 9, 20, 33}) {
      if (n > 2000 && d != 20 && d != 9) continue;  // keep the default run short
      expect_matches_gemm(ml_test::normal_data(n, d, 7 + n + d), "n=" + std::to_string(n) +
                                                                     " d=" + std::to_string(d));
    }
}

TEST(PcaCenteredGram, SpecialValues) {
  const int64_t n = 300, d = 11;
  std::vector<float> v = ml_test::normal_data(n, d, 3).to_vector<float>();
  for (int64_t i = 0; i < n; ++i) v[i * d + 2] = (i % 2) ? -0.0f : 0.0f;  // signed zeros
  v[5 * d + 4] = 3e38f;                                                   // overflow -> inf
  v[6 * d + 4] = -3e38f;
  v[7 * d + 7] = 2e19f;  // square overflows
  expect_matches_gemm(Tensor::from_vector(v, {n, d}), "special values");
}

TEST(PcaCenteredGram, SabotageOneChainDiffers) {
  const int64_t n = 3000, d = 5;
  Tensor X = ml_test::normal_data(n, d, 11);
  Tensor mu = bl::mean(X, {0}).contiguous();
  std::vector<float> x = X.to_vector<float>(), m = mu.to_vector<float>(), chain(d * d);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < n; ++k)
        acc = bl::fma(bl::sub(x[k * d + i], m[i]), bl::sub(x[k * d + j], m[j]), acc);
      chain[i * d + j] = acc;
    }
  EXPECT_FALSE(same_bits(fused(X, mu, 2, true), chain));
  EXPECT_TRUE(same_bits(fused(X, mu, 2, true), gemm_of_centered(X, mu)));
}

}  // namespace
}  // namespace bl
