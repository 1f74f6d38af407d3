// conv_direct.cpp: variant choice and task partition of the direct convolution products
// (kernels/conv_direct.h). Tasks: one per output row (forward), one per block of 6 or 8 patch
// columns (weight gradient); both from the problem size and the variant only, never the threads.
#include "kernels/conv_direct.h"

#include <algorithm>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/conv_direct_kernels.h"
#include "kernels/cpu/reduce_rows.h"
#include "contract/arith.h"
#include "kernels/matmul.h"

namespace bl {

static_assert(conv_direct_detail::kLeaf == kGemmKLeaf, "the direct kernels walk the GEMM's leaves");

namespace {
// Patch columns per weight-gradient task: 8 (AVX-512) or 6 (AVX2), what the variant holds in
// registers. The cut changes no bit (each output is one task's chain).
int64_t wgrad_columns() { return conv_direct_lanes() == 8 ? 6 : 8; }

bool x86() {
#if defined(__x86_64__) || defined(_M_X64)
  return true;
#else
  return false;
#endif
}
}  // namespace

int64_t conv_direct_lanes() {
  if (!x86()) return 0;
  return select_isa<int64_t>(cpu::kernel_isa(), 0, 8, 16, 0);
}

void conv_direct_forward(const ConvDirectArgs& a, const float* wt, float* y, ThreadPool& pool) {
#if defined(__x86_64__) || defined(_M_X64)
  auto row_fn = select_isa<void (*)(const ConvDirectArgs&, const float*, float*, int64_t)>(
      cpu::kernel_isa(), nullptr, &conv_direct_forward_row_avx2, &conv_direct_forward_row_avx512, nullptr);
  BL_CHECK(row_fn != nullptr, "conv_direct: the active ISA variant has no direct kernels (check conv_direct_lanes)");
  const int64_t rows = a.s.n * a.s.out_h();
  pool.parallel_for(rows, [&](int64_t r) { row_fn(a, wt, y, r); });
#else
  (void)a, (void)wt, (void)y, (void)pool;
#endif
}

void conv_direct_weight_grad(const ConvDirectArgs& a, const float* g, float* dw, ThreadPool& pool) {
#if defined(__x86_64__) || defined(_M_X64)
  auto block_fn = select_isa<void (*)(const ConvDirectArgs&, const float*, float*, int64_t, int64_t)>(
      cpu::kernel_isa(), nullptr, &conv_direct_wgrad_block_avx2, &conv_direct_wgrad_block_avx512, nullptr);
  BL_CHECK(block_fn != nullptr, "conv_direct: the active ISA variant has no direct kernels (check conv_direct_lanes)");
  const int64_t kt = a.s.k();
  const int64_t cols = wgrad_columns();
  const int64_t tasks = (kt + cols - 1) / cols;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t k0 = t * cols;
    block_fn(a, g, dw, k0, std::min(cols, kt - k0));
  });
#else
  (void)a, (void)g, (void)dw, (void)pool;
#endif
}

bool conv_pool_max_forward(const float* x, const ConvPoolShape& s, float* y, int32_t* arg, ThreadPool& pool) {
#if defined(__x86_64__) || defined(_M_X64)
  using RowFn = void (*)(const float*, const ConvPoolShape&, int64_t, float*, int32_t*, float);
  const RowFn row_fn = select_isa<RowFn>(cpu::kernel_isa(), nullptr, &conv_pool_max_row_avx2, &conv_pool_max_row_avx512, nullptr);
  if (!row_fn) return false;
  const float nan = canonical_nan();
  pool.parallel_for(s.n * (s.h / s.k), [&](int64_t r) { row_fn(x, s, r, y, arg, nan); });
  return true;
#else
  (void)x, (void)s, (void)y, (void)arg, (void)pool;
  return false;
#endif
}

bool conv_pool_max_backward(const float* g, const int32_t* arg, const ConvPoolShape& s, float* dx, ThreadPool& pool) {
#if defined(__x86_64__) || defined(_M_X64)
  using RowFn = void (*)(const float*, const int32_t*, const ConvPoolShape&, int64_t, float*);
  const RowFn row_fn =
      select_isa<RowFn>(cpu::kernel_isa(), nullptr, &conv_pool_max_backward_row_avx2, &conv_pool_max_backward_row_avx512, nullptr);
  if (!row_fn) return false;
  pool.parallel_for(s.n * s.h, [&](int64_t r) { row_fn(g, arg, s, r, dx); });
  return true;
#else
  (void)g, (void)arg, (void)s, (void)dx, (void)pool;
  return false;
#endif
}

}  // namespace bl
