// The table-driven binary64 exp kernel for AVX2+FMA (compiled with -mavx2 -mfma): 8 floats per
// step, as two halves of 4 doubles. Each lane performs the operations of exp_f64_simd.h's
// table-driven evaluation (reduction by ln2/16, 2^(j/16) from a 16-entry table by gather, degree-6
// Taylor polynomial, scaling by 2^k in the exponent field) and the rounding test on y's low
// mantissa bits. Lanes in doubt and inputs outside [kLow, kHigh] get the scalar bl::exp, except
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

#include <algorithm>
#include <cstdint>

namespace bl {
namespace exp_f64_simd {

namespace {

// The hot path is forced inline (GCC otherwise made a call per block, reloading the window and
// the table from memory: about 20% of the time); the scalar fallback stays out of line.
#define BL_EXP_TABLE_INLINE inline __attribute__((always_inline))

// The rounding test's window: a lane is in doubt when (L - low) as unsigned is <= width, L the 29
// low mantissa bits of y, low = 2^28 - W, width = 2W. `on` false: no test.
struct Window {
  __m256i low;
  __m256i width_plus_one;
  bool on;
};

// e^x for 4 in-range floats; *doubt gets a 4-bit mask of the lanes failing the rounding test.
template <int Degree>
BL_EXP_TABLE_INLINE __m128 exp_half(__m128 xf, const Window& w, int* doubt) {
  const __m256d x = _mm256_cvtps_pd(xf);
  const __m256d shifter = _mm256_set1_pd(6755399441055744.0);  // 1.5 * 2^52
  const __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(kTableInvStep), shifter);
  const __m256d nd = _mm256_sub_pd(t, shifter);
  const __m256d r1 = _mm256_fnmadd_pd(nd, _mm256_set1_pd(kTableStepHi), x);  // exact
  const __m256d r = _mm256_fnmadd_pd(nd, _mm256_set1_pd(kTableStepLo), r1);
  // The low bits of t hold N (t = 1.5*2^52 + N): j = N & 15; (N << 48) masked to the exponent
  // field is k << 52 (mod 2^64), added to the table value's bits: 2^(j/16) * 2^k.
  const __m256i ti = _mm256_castpd_si256(t);
  const __m256d tj = _mm256_i64gather_pd(kTable, _mm256_and_si256(ti, _mm256_set1_epi64x(15)), 8);
  const __m256i kbits = _mm256_and_si256(_mm256_slli_epi64(ti, 48), _mm256_set1_epi64x(int64_t(0xFFF0000000000000ull)));
  const __m256d ts = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(tj), kbits));
  __m256d p = _mm256_set1_pd(kTableTaylor[Degree]);
  for (int i = Degree - 1; i >= 1; --i) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kTableTaylor[i]));
  const __m256d y = _mm256_fmadd_pd(_mm256_mul_pd(ts, r), p, ts);
  const __m128 f = _mm256_cvtpd_ps(y);
  *doubt = 0;
  if (w.on) {
    const __m256i low_bits = _mm256_and_si256(_mm256_castpd_si256(y), _mm256_set1_epi64x((1 << 29) - 1));
    const __m256i d = _mm256_sub_epi64(low_bits, w.low);  // in [-2^28, 2^29): signed compares suffice
    const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), d),
                                           _mm256_cmpgt_epi64(w.width_plus_one, d));
    *doubt = _mm256_movemask_pd(_mm256_castsi256_pd(in));
  }
  return f;
}

// f with the lanes set in `redo` replaced by the scalar canonicalize(bl::exp(x)); counts them.
__attribute__((noinline)) __m256 fallback_lanes(__m256 xv, __m256 f, int redo, int64_t* count) {
  alignas(32) float xin[8];
  alignas(32) float res[8];
  _mm256_store_ps(xin, xv);
  _mm256_store_ps(res, f);
  for (int j = 0; j < 8; ++j) {
    if ((redo >> j) & 1) {
      res[j] = canonicalize(exp(xin[j]));
      ++*count;
    }
  }
  return _mm256_load_ps(res);
}

// e^x for the 8 lanes of xv; lanes in doubt or out of range are recomputed by the scalar exp,
// counted in *count.
template <int Degree>
BL_EXP_TABLE_INLINE __m256 exp_vector(__m256 xv, const Window& w, int64_t* count) {
  const __m256 in_range = _mm256_and_ps(_mm256_cmp_ps(xv, _mm256_set1_ps(kLow), _CMP_GE_OQ),
                                        _mm256_cmp_ps(xv, _mm256_set1_ps(kHigh), _CMP_LE_OQ));
  const __m256 xs = _mm256_and_ps(xv, in_range);  // other lanes evaluate e^0, then fall back
  const __m256 zero = _mm256_cmp_ps(xv, _mm256_set1_ps(kZeroBelow), _CMP_LT_OQ);  // result +0
  const __m256 inf = _mm256_cmp_ps(xv, _mm256_set1_ps(kInfAbove), _CMP_GT_OQ);     // result +inf
  int doubt_lo, doubt_hi;
  const __m128 f_lo = exp_half<Degree>(_mm256_castps256_ps128(xs), w, &doubt_lo);
  const __m128 f_hi = exp_half<Degree>(_mm256_extractf128_ps(xs, 1), w, &doubt_hi);
  __m256 f = _mm256_andnot_ps(zero, _mm256_set_m128(f_hi, f_lo));
  f = _mm256_blendv_ps(f, _mm256_set1_ps(float_of(0x7F800000u)), inf);
  const int settled = _mm256_movemask_ps(_mm256_or_ps(in_range, _mm256_or_ps(zero, inf)));
  const int redo = (~settled & 0xFF) | ((doubt_lo | (doubt_hi << 4)) & _mm256_movemask_ps(in_range));
  if (redo == 0) return f;
  return fallback_lanes(xv, f, redo, count);
}

// out[0..8) from x[0..8); returns the number of lanes recomputed by the scalar exp.
template <int Degree>
BL_EXP_TABLE_INLINE int64_t exp_block(const float* x, float* out, const Window& w) {
  int64_t count = 0;
  _mm256_storeu_ps(out, exp_vector<Degree>(_mm256_loadu_ps(x), w, &count));  // x may alias out
  return count;
}

Window kernel_window(int margin_bits) {
  Window w;
  w.on = margin_bits > 0;
  const int64_t half_width = w.on ? int64_t{1} << (53 - margin_bits) : 0;  // W
  w.low = _mm256_set1_epi64x((int64_t{1} << 28) - half_width);
  w.width_plus_one = _mm256_set1_epi64x(2 * half_width + 1);
  return w;
}

template <int Degree>
int64_t run_degree(const float* x, float* out, int64_t n, int margin_bits) {
  const Window w = kernel_window(margin_bits);
  int64_t count = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) count += exp_block<Degree>(x + i, out + i, w);
  if (i < n) {  // the tail, padded with zeros (e^0 = 1: never in doubt)
    float xin[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float res[8];
    const int64_t len = n - i;
    for (int64_t j = 0; j < len; ++j) xin[j] = x[i + j];
    count += exp_block<Degree>(xin, res, w);
    for (int64_t j = 0; j < len; ++j) out[i + j] = res[j];
  }
  return count;
}

}  // namespace

void run_table_stream_avx2(const float* x, float* out, int64_t n) {
  if (reinterpret_cast<uintptr_t>(out) % 4 != 0) {  // not float-aligned: no streaming at all
    run_degree<kTableDegree>(x, out, n, kTableMarginBits);
    return;
  }
  // Head: the regular kernel until out is 32-byte aligned; then whole blocks by non-temporal stores
  // (no read for ownership of the output lines); the tail by the regular kernel.
  const int64_t head = std::min<int64_t>(n, ((32 - reinterpret_cast<uintptr_t>(out) % 32) % 32) / 4);
  run_degree<kTableDegree>(x, out, head, kTableMarginBits);
  const Window w = kernel_window(kTableMarginBits);
  int64_t i = head;
  for (; i + 8 <= n; i += 8) {
    int64_t count = 0;
    _mm256_stream_ps(out + i, exp_vector<kTableDegree>(_mm256_loadu_ps(x + i), w, &count));
  }
  run_degree<kTableDegree>(x + i, out + i, n - i, kTableMarginBits);
  _mm_sfence();  // the streamed lines are visible before the caller signals completion
}

float run_table_shift_leaf_avx2(const float* x, float m, float* e, int64_t len, const float* next) {
  const Window w = kernel_window(kTableMarginBits);
  const __m256 mv = _mm256_set1_ps(m);
  // Sum lanes 8q..8q+7 in acc[q]: element i goes to lane i mod 32, in ascending i.
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t count = 0;
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    if (next && i % 16 == 0) _mm_prefetch(reinterpret_cast<const char*>(next + i), _MM_HINT_T0);  // a line per 16
    const __m256 f = exp_vector<kTableDegree>(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv), w, &count);
    _mm256_storeu_ps(e + i, f);
    acc[(i / 8) % 4] = _mm256_add_ps(acc[(i / 8) % 4], f);
  }
  alignas(32) float lanes[32];
  for (int q = 0; q < 4; ++q) _mm256_store_ps(lanes + 8 * q, acc[q]);
  for (; i < len; ++i) {  // the tail, lane by lane
    e[i] = canonicalize(exp(sub(x[i], m)));
    lanes[i % 32] = add(lanes[i % 32], e[i]);
  }
  for (int s = 16; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = add(lanes[j], lanes[j + s]);
  return lanes[0];
}

void run_table_avx2(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks) {
  int64_t count = 0;
  switch (degree) {
    case 4: count = run_degree<4>(x, out, n, margin_bits); break;
    case 5: count = run_degree<5>(x, out, n, margin_bits); break;
    default: count = run_degree<kTableDegree>(x, out, n, margin_bits); break;
  }
  if (fallbacks) *fallbacks += count;
}

}  // namespace exp_f64_simd
}  // namespace bl

#endif  // x86-64
