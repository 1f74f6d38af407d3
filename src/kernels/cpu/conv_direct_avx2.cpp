// The conv_direct.h loops built for AVX2+FMA (compiled with -mavx2 -mfma; called only when the
// active ISA variant is avx2 or avx512 without its own). Intrinsics only: vfmadd is one rounding.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

#include "kernels/cpu/conv_direct_kernels.h"

namespace bl {

#if defined(__x86_64__) || defined(_M_X64)
namespace {

struct V256 {
  using T = __m256;
  static constexpr int L = 8;
  static T zero() { return _mm256_setzero_ps(); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T canon(T v, float nan) {
    return _mm256_blendv_ps(v, _mm256_set1_ps(nan), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
};

}  // namespace

// 16 channels at a time where they divide: 6 pixels x 2 vectors = 12 accumulators, 2 weight
// vectors and the broadcast (15 of the 16 registers: no accumulator spills).
void conv_direct_forward_row_avx2(const ConvDirectArgs& a, const float* wt, float* y, int64_t row) {
  if (a.s.oc % 16 == 0)
    conv_direct_detail::forward_row<V256, 6, 2>(a, wt, y, row);
  else
    conv_direct_detail::forward_row<V256, 12, 1>(a, wt, y, row);
}

// 16 channels at a time where they divide (a task has at most 6 columns on AVX2: 12 accumulators).
void conv_direct_wgrad_block_avx2(const ConvDirectArgs& a, const float* g, float* dw, int64_t k0, int64_t kc) {
  if (a.s.oc % 16 == 0) {
    for (int64_t j0 = 0; j0 < a.s.oc; j0 += 16)
      conv_direct_detail::wgrad_columns<V256, 2>(a, g, dw, k0, kc, j0);
    return;
  }
  for (int64_t j0 = 0; j0 < a.s.oc; j0 += 8) conv_direct_detail::wgrad_columns<V256, 1>(a, g, dw, k0, kc, j0);
}

void conv_pool_max_row_avx2(const float* x, const ConvPoolShape& s, int64_t row, float* y, int32_t* arg, float nan) {
  conv_direct_detail::pool_max_row(x, s, row, y, arg, nan);
}

void conv_pool_max_backward_row_avx2(const float* g, const int32_t* arg, const ConvPoolShape& s, int64_t row,
                                     float* dx) {
  conv_direct_detail::pool_max_backward_row(g, arg, s, row, dx);
}
#endif

}  // namespace bl
