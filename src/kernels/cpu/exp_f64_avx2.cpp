// The binary64 exp kernel for AVX2+FMA (compiled with -mavx2 -mfma): 8 floats per step, as two
// halves of 4 doubles. Each lane performs the operations described in exp_f64_simd.h (the same
// evaluation as contract/math/exp_f64.h at degree 12): reduction by ln2, Horner in fma, y = p * 2^k,
// f = round32(y), in doubt when round32(y - y*2^-44) != round32(y + y*2^-44). Lanes in doubt and
// inputs outside [kLow, kHigh] get the scalar bl::exp (float-float, the definition), except
// x < kZeroBelow (+0) and x > kInfAbove (+inf), stored directly.
//
// BL_HD is redefined as `static inline` before the contract headers so this translation unit keeps
// private copies of the scalar functions (see math_map_avx2.cpp for why).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/math.h"
#include "kernels/cpu/exp_f64_simd.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace bl {
namespace exp_f64_simd {

namespace {

// e^x for 4 in-range floats; *doubt gets a 4-bit mask of the lanes failing the rounding test.
template <int Degree>
inline __m128 exp_half(__m128 xf, __m256d margin, bool test, int* doubt) {
  const __m256d x = _mm256_cvtps_pd(xf);
  const __m256d shifter = _mm256_set1_pd(6755399441055744.0);  // 1.5 * 2^52
  const __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(1.4426950408889634), shifter);
  const __m256d kd = _mm256_sub_pd(t, shifter);
  const __m256d r1 = _mm256_fnmadd_pd(kd, _mm256_set1_pd(0.6931471805599453), x);  // fma(-k, L_hi, x)
  const __m256d r = _mm256_fnmadd_pd(kd, _mm256_set1_pd(2.3190468138462996e-17), r1);
  __m256d p = _mm256_set1_pd(kTaylor[Degree]);
  for (int i = Degree - 1; i >= 0; --i) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kTaylor[i]));
  // The low bits of t hold k (t = 1.5*2^52 + k): (bits(t) + 1023) << 52 is the binary64 2^k.
  const __m256i scale = _mm256_slli_epi64(_mm256_add_epi64(_mm256_castpd_si256(t), _mm256_set1_epi64x(1023)), 52);
  const __m256d y = _mm256_mul_pd(p, _mm256_castsi256_pd(scale));
  const __m128 f = _mm256_cvtpd_ps(y);
  *doubt = 0;
  if (test) {
    const __m256d d = _mm256_mul_pd(y, margin);
    const __m128i below = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_sub_pd(y, d)));
    const __m128i above = _mm_castps_si128(_mm256_cvtpd_ps(_mm256_add_pd(y, d)));
    *doubt = ~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(below, above))) & 0xF;
  }
  return f;
}

// out[0..8) from x[0..8); returns the number of lanes recomputed by the scalar exp.
template <int Degree>
inline int64_t exp_block(const float* x, float* out, __m256d margin, bool test) {
  const __m256 xv = _mm256_loadu_ps(x);
  const __m256 in_range = _mm256_and_ps(_mm256_cmp_ps(xv, _mm256_set1_ps(kLow), _CMP_GE_OQ),
                                        _mm256_cmp_ps(xv, _mm256_set1_ps(kHigh), _CMP_LE_OQ));
  const __m256 xs = _mm256_and_ps(xv, in_range);  // other lanes evaluate e^0, then fall back
  const __m256 zero = _mm256_cmp_ps(xv, _mm256_set1_ps(kZeroBelow), _CMP_LT_OQ);  // result +0
  const __m256 inf = _mm256_cmp_ps(xv, _mm256_set1_ps(kInfAbove), _CMP_GT_OQ);     // result +inf
  int doubt_lo, doubt_hi;
  const __m128 f_lo = exp_half<Degree>(_mm256_castps256_ps128(xs), margin, test, &doubt_lo);
  const __m128 f_hi = exp_half<Degree>(_mm256_extractf128_ps(xs, 1), margin, test, &doubt_hi);
  __m256 f = _mm256_andnot_ps(zero, _mm256_set_m128(f_hi, f_lo));
  f = _mm256_blendv_ps(f, _mm256_set1_ps(float_of(0x7F800000u)), inf);
  const int settled = _mm256_movemask_ps(_mm256_or_ps(in_range, _mm256_or_ps(zero, inf)));
  const int redo = (~settled & 0xFF) | ((doubt_lo | (doubt_hi << 4)) & _mm256_movemask_ps(in_range));
  if (redo == 0) {
    _mm256_storeu_ps(out, f);
    return 0;
  }
  alignas(32) float xin[8];
  alignas(32) float res[8];
  _mm256_store_ps(xin, xv);  // x may alias out
  _mm256_store_ps(res, f);
  int64_t count = 0;
  for (int j = 0; j < 8; ++j) {
    if ((redo >> j) & 1) {
      res[j] = canonicalize(exp(xin[j]));
      ++count;
    }
  }
  _mm256_storeu_ps(out, _mm256_load_ps(res));
  return count;
}

template <int Degree>
int64_t run_degree(const float* x, float* out, int64_t n, int margin_bits) {
  const bool test = margin_bits > 0;
  const __m256d margin = _mm256_castsi256_pd(
      _mm256_set1_epi64x(static_cast<int64_t>(1023 - (test ? margin_bits : 0)) << 52));
  int64_t count = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) count += exp_block<Degree>(x + i, out + i, margin, test);
  if (i < n) {  // the tail, padded with zeros (e^0 = 1: never in doubt)
    float xin[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float res[8];
    const int64_t len = n - i;
    for (int64_t j = 0; j < len; ++j) xin[j] = x[i + j];
    count += exp_block<Degree>(xin, res, margin, test);
    for (int64_t j = 0; j < len; ++j) out[i + j] = res[j];
  }
  return count;
}

}  // namespace

void run_avx2(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks) {
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

#endif  // x86-64
