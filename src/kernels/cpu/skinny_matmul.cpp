// CPU skinny contract GEMM (see kernels/skinny_matmul.h): tasks over blocks of 64 columns (a
// function of N only); inside a block, 16-column AVX-512 (then one 8-column AVX2), 8-column AVX2 or
// 4-column NEON pieces and a scalar tail, each output the reference's leaf fma chain.
#include <algorithm>

#include "core/error.h"
#include "core/isa.h"
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

using ColumnsFn = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t);

// The SIMD pieces of a block for one ISA variant: as many `wide`-column pieces as fit, then as
// many `narrow`-column ones (0: none), then the scalar tail.
struct ColumnPieces {
  int64_t wide;
  ColumnsFn wide_fn;
  int64_t narrow;
  ColumnsFn narrow_fn;
};
constexpr ColumnPieces kScalarPieces{0, nullptr, 0, nullptr};
constexpr ColumnPieces kAvx2Pieces{8, &skinny_detail::columns_avx2, 0, nullptr};
// AVX-512 CPUs have AVX2 too: 8-column AVX2 pieces after the 16-column ones.
constexpr ColumnPieces kAvx512Pieces{16, &skinny_detail::columns_avx512, 8, &skinny_detail::columns_avx2};
constexpr ColumnPieces kNeonPieces{4, &skinny_detail::columns_neon, 0, nullptr};

}  // namespace

void skinny_matmul_cpu(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       ThreadPool& pool) {
  BL_CHECK(m >= 0 && m <= kSkinnyMaxRows && n >= 0 && k >= 0, "skinny_matmul: sizes (", m, ", ", n, ", ", k,
           ") must be non-negative with m <= ", kSkinnyMaxRows);
  if (m == 0 || n == 0) return;
  const ColumnPieces& pieces =
      *select_isa<const ColumnPieces*>(cpu::kernel_isa(), &kScalarPieces, &kAvx2Pieces, &kAvx512Pieces, &kNeonPieces);
  const int64_t tasks = (n + kSkinnyTaskCols - 1) / kSkinnyTaskCols;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t n0 = t * kSkinnyTaskCols, n1 = std::min(n, n0 + kSkinnyTaskCols);
    int64_t vec_end = n0;
    if (pieces.wide > 0) {
      const int64_t end = vec_end + (n1 - vec_end) / pieces.wide * pieces.wide;
      if (end > vec_end) pieces.wide_fn(a, b, c, m, n, k, vec_end, end);
      vec_end = end;
    }
    if (pieces.narrow > 0) {
      const int64_t end = vec_end + (n1 - vec_end) / pieces.narrow * pieces.narrow;
      if (end > vec_end) pieces.narrow_fn(a, b, c, m, n, k, vec_end, end);
      vec_end = end;
    }
    columns_scalar(a, b, c, m, n, k, vec_end, n1);
  });
}

}  // namespace bl
