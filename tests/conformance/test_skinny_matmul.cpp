// Conformance of the skinny contract GEMM (kernels/skinny_matmul.h): skinny_matmul_cpu (threads
// 1, 2, 3) equals matmul_reference and bl::matmul bit for bit for m <= 16 over sizes with 0, 1,
// primes and leaf boundaries (k = 255, 256, 257, 600) and special values; a sabotage arm (one fma
// chain over all of k, no leaves) must differ.
#include <gtest/gtest.h>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/skinny_matmul.h"

namespace bl {
namespace {

using conformance::bits_equal;
using conformance::generate_floats;

TEST(SkinnyMatmulConformance, EqualsReferenceAtAnyThreadCount) {
  uint64_t seed = 10;
  for (int64_t m : {1, 3, 16}) {
    for (int64_t n : {1, 7, 8, 9, 255, 257, 300}) {
      for (int64_t k : {0, 1, 255, 256, 257, 600}) {
        const auto a = generate_floats(m * k, seed++, 1.0f, k > 200 ? 97 : 0);
        const auto b = generate_floats(k * n, seed++, 1.0f, k > 200 ? 89 : 0);
        std::vector<float> expected(static_cast<size_t>(m * n));
        matmul_reference(matmul_dense_args(1, m, n, k), a.data(), b.data(), expected.data());
        for (int threads : conformance::kThreadCounts) {
          ThreadPool pool(threads);
          std::vector<float> out(static_cast<size_t>(m * n), 5.0f);
          skinny_matmul_cpu(a.data(), b.data(), out.data(), m, n, k, pool);
          ASSERT_TRUE(bits_equal(expected, out, "skinny m " + std::to_string(m) + " n " + std::to_string(n) +
                                                    " k " + std::to_string(k) + " threads " + std::to_string(threads)));
        }
        if (k > 0) {
          const Tensor c = matmul(Tensor::from_vector(a, {m, k}), Tensor::from_vector(b, {k, n}));
          ASSERT_TRUE(bits_equal(expected, c.to_vector<float>(), "bl::matmul"));
        }
      }
    }
  }
}

TEST(SkinnyMatmulConformance, SabotagedLeavesAreCaught) {
  const int64_t m = 2, n = 16, k = 600;
  const auto a = generate_floats(m * k, 1, 1.0f), b = generate_floats(k * n, 2, 1.0f);
  std::vector<float> sabotaged(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) acc = fma(a[i * k + kk], b[kk * n + j], acc);
      sabotaged[i * n + j] = acc;
    }
  ThreadPool pool(2);
  std::vector<float> out(static_cast<size_t>(m * n));
  skinny_matmul_cpu(a.data(), b.data(), out.data(), m, n, k, pool);
  EXPECT_FALSE(bits_equal(sabotaged, out, "sabotage"));
}

}  // namespace
}  // namespace bl
