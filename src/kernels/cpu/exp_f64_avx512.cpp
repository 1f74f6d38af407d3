// The binary64 exp kernel for AVX-512 (F, VL, DQ): 16 floats per step, as two halves of 8
// doubles. The same operations in the same order as exp_f64_avx2.cpp (see exp_f64_simd.h for the
// error bound and why the fused multiply-adds are allowed); lanes
// in doubt and inputs outside [kLow, kHigh] get the scalar bl::exp, except x < kZeroBelow (+0)
// and x > kInfAbove (+inf), stored directly. The tail uses masked loads
// and stores (inactive lanes evaluate e^0, never in doubt, never stored).
//
// BL_HD is redefined as `static inline` before the contract headers so this translation unit keeps
// private copies of the scalar functions (see math_map_avx512.cpp for why).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/math.h"
#include "kernels/cpu/exp_f64_simd.h"

#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#include <immintrin.h>

namespace bl {
namespace exp_f64_simd {

namespace {

// e^x for 8 in-range floats; *doubt gets an 8-bit mask of the lanes failing the rounding test.
template <int Degree>
inline __m256 exp_half(__m256 xf, __m512d margin, bool test, int* doubt) {
  const __m512d x = _mm512_cvtps_pd(xf);
  const __m512d shifter = _mm512_set1_pd(6755399441055744.0);  // 1.5 * 2^52
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(1.4426950408889634), shifter);
  const __m512d kd = _mm512_sub_pd(t, shifter);
  const __m512d r1 = _mm512_fnmadd_pd(kd, _mm512_set1_pd(0.6931471805599453), x);  // fma(-k, L_hi, x)
  const __m512d r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(2.3190468138462996e-17), r1);
  __m512d p = _mm512_set1_pd(kTaylor[Degree]);
  for (int i = Degree - 1; i >= 0; --i) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kTaylor[i]));
  // The low bits of t hold k (t = 1.5*2^52 + k): (bits(t) + 1023) << 52 is the binary64 2^k.
  const __m512i scale = _mm512_slli_epi64(_mm512_add_epi64(_mm512_castpd_si512(t), _mm512_set1_epi64(1023)), 52);
  const __m512d y = _mm512_mul_pd(p, _mm512_castsi512_pd(scale));
  const __m256 f = _mm512_cvtpd_ps(y);
  *doubt = 0;
  if (test) {
    const __m512d d = _mm512_mul_pd(y, margin);
    const __m256i below = _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_sub_pd(y, d)));
    const __m256i above = _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_add_pd(y, d)));
    *doubt = static_cast<int>(_mm256_cmpneq_epi32_mask(below, above));
  }
  return f;
}

// out[j] for the lanes j < 16 set in `active`; returns the number recomputed by the scalar exp.
template <int Degree>
inline int64_t exp_block(const float* x, float* out, __mmask16 active, __m512d margin, bool test) {
  const __m512 xv = _mm512_maskz_loadu_ps(active, x);
  const __mmask16 in_range = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kLow), _CMP_GE_OQ) &
                             _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kHigh), _CMP_LE_OQ);
  const __m512 xs = _mm512_maskz_mov_ps(in_range, xv);  // other lanes evaluate e^0, then fall back
  const __mmask16 zero = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kZeroBelow), _CMP_LT_OQ);  // +0
  const __mmask16 inf = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kInfAbove), _CMP_GT_OQ);     // +inf
  int doubt_lo, doubt_hi;
  const __m256 f_lo = exp_half<Degree>(_mm512_castps512_ps256(xs), margin, test, &doubt_lo);
  const __m256 f_hi = exp_half<Degree>(_mm512_extractf32x8_ps(xs, 1), margin, test, &doubt_hi);
  __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(f_lo), f_hi, 1);
  f = _mm512_mask_mov_ps(f, zero, _mm512_setzero_ps());
  f = _mm512_mask_mov_ps(f, inf, _mm512_set1_ps(float_of(0x7F800000u)));
  const int settled = static_cast<int>(in_range | zero | inf);
  const int redo = (~settled | ((doubt_lo | (doubt_hi << 8)) & static_cast<int>(in_range))) &
                   static_cast<int>(active);
  if (redo == 0) {
    _mm512_mask_storeu_ps(out, active, f);
    return 0;
  }
  alignas(64) float xin[16];
  alignas(64) float res[16];
  _mm512_store_ps(xin, xv);  // x may alias out
  _mm512_store_ps(res, f);
  int64_t count = 0;
  for (int j = 0; j < 16; ++j) {
    if ((redo >> j) & 1) {
      res[j] = canonicalize(exp(xin[j]));
      ++count;
    }
  }
  _mm512_mask_storeu_ps(out, active, _mm512_load_ps(res));
  return count;
}

template <int Degree>
int64_t run_degree(const float* x, float* out, int64_t n, int margin_bits) {
  const bool test = margin_bits > 0;
  const __m512d margin = _mm512_castsi512_pd(
      _mm512_set1_epi64(static_cast<int64_t>(1023 - (test ? margin_bits : 0)) << 52));
  int64_t count = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) count += exp_block<Degree>(x + i, out + i, 0xFFFF, margin, test);
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
    count += exp_block<Degree>(x + i, out + i, tail, margin, test);
  }
  return count;
}

}  // namespace

void run_avx512(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks) {
  int64_t count = 0;
  switch (degree) {
    case 7: count = run_degree<7>(x, out, n, margin_bits); break;
    case 11: count = run_degree<11>(x, out, n, margin_bits); break;
    default: count = run_degree<kDegree>(x, out, n, margin_bits); break;
  }
  if (fallbacks) *fallbacks += count;
}

}  // namespace exp_f64_simd
}  // namespace bl

#endif  // AVX-512
