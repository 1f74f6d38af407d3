// CPU skinny contract GEMM (see kernels/skinny_matmul.h): tasks over blocks of 64 columns (a
// function of N only); inside a block, 16-column AVX-512 (then one 8-column AVX2), 8-column AVX2 or
// 4-column NEON pieces and a scalar tail, each output the reference's leaf fma chain.
#include <algorithm>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/skinny_matmul.h"

namespace bl {
namespace {

// 64 columns per task: N = 768 products still give 12 tasks to the pool (256 gave only 3, which left
// most threads idle in a decode step). The split changes no bit: every column is computed alone.
constexpr int64_t kSkinnyTaskCols = 64;

void columns_scalar(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                    int64_t n1) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = n0; j < n1; ++j)
      c[i * n + j] = matmul_reference_element(a + i * k, k, false, b, n, false, k, 0, j);
}

}  // namespace

void skinny_matmul_cpu(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       ThreadPool& pool) {
  BL_CHECK(m >= 0 && m <= kSkinnyMaxRows && n >= 0 && k >= 0, "skinny_matmul: sizes (", m, ", ", n, ", ", k,
           ") must be non-negative with m <= ", kSkinnyMaxRows);
  if (m == 0 || n == 0) return;
  const bool avx2 = cpu::use_avx2();
  const bool avx512 = cpu::use_avx512();
  const bool neon = cpu::use_neon();
  const int64_t tasks = (n + kSkinnyTaskCols - 1) / kSkinnyTaskCols;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t n0 = t * kSkinnyTaskCols, n1 = std::min(n, n0 + kSkinnyTaskCols);
    int64_t vec_end = n0;
    if (avx512) {
      vec_end = n0 + (n1 - n0) / 16 * 16;
      if (vec_end > n0) skinny_detail::columns_avx512(a, b, c, m, n, k, n0, vec_end);
      const int64_t end8 = vec_end + (n1 - vec_end) / 8 * 8;  // AVX-512 CPUs have AVX2 too
      if (end8 > vec_end) skinny_detail::columns_avx2(a, b, c, m, n, k, vec_end, end8);
      vec_end = end8;
    } else if (avx2) {
      vec_end = n0 + (n1 - n0) / 8 * 8;
      if (vec_end > n0) skinny_detail::columns_avx2(a, b, c, m, n, k, n0, vec_end);
    } else if (neon) {
      vec_end = n0 + (n1 - n0) / 4 * 4;
      if (vec_end > n0) skinny_detail::columns_neon(a, b, c, m, n, k, n0, vec_end);
    }
    columns_scalar(a, b, c, m, n, k, vec_end, n1);
  });
}

}  // namespace bl
