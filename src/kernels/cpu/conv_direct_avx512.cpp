// The conv_direct.h loops built for AVX-512 (compiled with the flags of CMakeLists.txt; called
// only when the active ISA variant is avx512). Intrinsics only: vfmadd is one rounding like fma.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

#include "kernels/cpu/conv_direct_kernels.h"

namespace bl {

#if defined(__x86_64__) || defined(_M_X64)
namespace {

struct V512 {
  using T = __m512;
  static constexpr int L = 16;
  static T zero() { return _mm512_setzero_ps(); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T bcast(const float* p) { return _mm512_set1_ps(*p); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T canon(T v, float nan) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v, _mm512_set1_ps(nan));
  }
};

}  // namespace

void conv_direct_forward_row_avx512(const ConvDirectArgs& a, const float* wt, float* y, int64_t row) {
  if (a.s.oc % 32 == 0)
    conv_direct_detail::forward_row<V512, 7, 2>(a, wt, y, row);
  else
    conv_direct_detail::forward_row<V512, 14, 1>(a, wt, y, row);
}

void conv_direct_wgrad_block_avx512(const ConvDirectArgs& a, const float* g, float* dw, int64_t k0, int64_t kc) {
  if (a.s.oc % 32 == 0) {
    for (int64_t j0 = 0; j0 < a.s.oc; j0 += 32) conv_direct_detail::wgrad_columns<V512, 2>(a, g, dw, k0, kc, j0);
  } else {
    for (int64_t j0 = 0; j0 < a.s.oc; j0 += 16) conv_direct_detail::wgrad_columns<V512, 1>(a, g, dw, k0, kc, j0);
  }
}

void conv_pool_max_row_avx512(const float* x, const ConvPoolShape& s, int64_t row, float* y, int32_t* arg, float nan) {
  conv_direct_detail::pool_max_row(x, s, row, y, arg, nan);
}

void conv_pool_max_backward_row_avx512(const float* g, const int32_t* arg, const ConvPoolShape& s, int64_t row,
                                     float* dx) {
  conv_direct_detail::pool_max_backward_row(g, arg, s, row, dx);
}
#endif

}  // namespace bl
