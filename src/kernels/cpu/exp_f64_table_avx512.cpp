// The table-driven binary64 exp kernel for AVX-512 (F, VL, DQ): 16 floats per step, as two halves
// of 8 doubles. The same operations in the same order as exp_f64_table_avx2.cpp (exp_f64_simd.h
// has the evaluation and its error bound); the 16-entry table of 2^(j/16) sits in two registers
// and is read by one two-source permute (vpermt2pd) instead of a gather. Lanes in doubt and inputs
// outside [kLow, kHigh] get the scalar bl::exp, except x < kZeroBelow (+0) and x > kInfAbove
// (+inf), stored directly. The tail uses masked loads and stores (inactive lanes evaluate e^0,
// never in doubt, never stored).
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
  __m512i low;
  __m512i width;
  bool on;
};

// e^x for 8 in-range floats; *doubt gets an 8-bit mask of the lanes failing the rounding test.
template <int Degree>
BL_EXP_TABLE_INLINE __m256 exp_half(__m256 xf, __m512d table_lo, __m512d table_hi, const Window& w, int* doubt) {
  const __m512d x = _mm512_cvtps_pd(xf);
  const __m512d shifter = _mm512_set1_pd(6755399441055744.0);  // 1.5 * 2^52
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(kTableInvStep), shifter);
  const __m512d nd = _mm512_sub_pd(t, shifter);
  const __m512d r1 = _mm512_fnmadd_pd(nd, _mm512_set1_pd(kTableStepHi), x);  // exact
  const __m512d r = _mm512_fnmadd_pd(nd, _mm512_set1_pd(kTableStepLo), r1);
  // The low bits of t hold N (t = 1.5*2^52 + N): the permute reads j = N & 15 (bits 0-3 of each
  // index); (N << 48) masked to the exponent field is k << 52 (mod 2^64), added to the table
  // value's bits: 2^(j/16) * 2^k.
  const __m512i ti = _mm512_castpd_si512(t);
  const __m512d tj = _mm512_permutex2var_pd(table_lo, ti, table_hi);
  const __m512i kbits = _mm512_and_si512(_mm512_slli_epi64(ti, 48), _mm512_set1_epi64(int64_t(0xFFF0000000000000ull)));
  const __m512d ts = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(tj), kbits));
  __m512d p = _mm512_set1_pd(kTableTaylor[Degree]);
  for (int i = Degree - 1; i >= 1; --i) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kTableTaylor[i]));
  const __m512d y = _mm512_fmadd_pd(_mm512_mul_pd(ts, r), p, ts);
  const __m256 f = _mm512_cvtpd_ps(y);
  *doubt = 0;
  if (w.on) {
    const __m512i low_bits = _mm512_and_si512(_mm512_castpd_si512(y), _mm512_set1_epi64((1 << 29) - 1));
    *doubt = static_cast<int>(_mm512_cmple_epu64_mask(_mm512_sub_epi64(low_bits, w.low), w.width));
  }
  return f;
}

// f with the lanes set in `redo` replaced by the scalar canonicalize(bl::exp(x)); counts them.
__attribute__((noinline)) __m512 fallback_lanes(__m512 xv, __m512 f, int redo, int64_t* count) {
  alignas(64) float xin[16];
  alignas(64) float res[16];
  _mm512_store_ps(xin, xv);
  _mm512_store_ps(res, f);
  for (int j = 0; j < 16; ++j) {
    if ((redo >> j) & 1) {
      res[j] = canonicalize(exp(xin[j]));
      ++*count;
    }
  }
  return _mm512_load_ps(res);
}

// e^x for the lanes j < 16 of xv set in `active` (the others must hold 0); lanes in doubt or out
// of range are recomputed by the scalar exp, counted in *count. Inactive lanes hold 1.
template <int Degree>
BL_EXP_TABLE_INLINE __m512 exp_vector(__m512 xv, __mmask16 active, __m512d table_lo, __m512d table_hi, const Window& w,
                         int64_t* count) {
  const __mmask16 in_range = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kLow), _CMP_GE_OQ) &
                             _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kHigh), _CMP_LE_OQ);
  const __m512 xs = _mm512_maskz_mov_ps(in_range, xv);  // other lanes evaluate e^0, then fall back
  const __mmask16 zero = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kZeroBelow), _CMP_LT_OQ);  // +0
  const __mmask16 inf = _mm512_cmp_ps_mask(xv, _mm512_set1_ps(kInfAbove), _CMP_GT_OQ);     // +inf
  int doubt_lo, doubt_hi;
  const __m256 f_lo = exp_half<Degree>(_mm512_castps512_ps256(xs), table_lo, table_hi, w, &doubt_lo);
  const __m256 f_hi = exp_half<Degree>(_mm512_extractf32x8_ps(xs, 1), table_lo, table_hi, w, &doubt_hi);
  __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(f_lo), f_hi, 1);
  f = _mm512_mask_mov_ps(f, zero, _mm512_setzero_ps());
  f = _mm512_mask_mov_ps(f, inf, _mm512_set1_ps(float_of(0x7F800000u)));
  const int settled = static_cast<int>(in_range | zero | inf);
  const int redo = (~settled | ((doubt_lo | (doubt_hi << 8)) & static_cast<int>(in_range))) &
                   static_cast<int>(active);
  if (redo == 0) return f;
  return fallback_lanes(xv, f, redo, count);
}

// out[j] for the lanes j < 16 set in `active`; returns the number recomputed by the scalar exp.
template <int Degree>
BL_EXP_TABLE_INLINE int64_t exp_block(const float* x, float* out, __mmask16 active, __m512d table_lo, __m512d table_hi,
                         const Window& w) {
  int64_t count = 0;
  const __m512 f = exp_vector<Degree>(_mm512_maskz_loadu_ps(active, x), active, table_lo, table_hi, w, &count);
  _mm512_mask_storeu_ps(out, active, f);  // x may alias out: x was read first
  return count;
}

// e[j] = exp(sub(x[j], m)) for the lanes j < 16 set in `active`, added into the sum lanes `acc`.
BL_EXP_TABLE_INLINE void shift_exp_add_block(const float* x, __m512 m, float* e, __mmask16 active, __m512d table_lo,
                                __m512d table_hi, const Window& w, __m512* acc) {
  int64_t count = 0;
  const __m512 xs = _mm512_maskz_sub_ps(active, _mm512_maskz_loadu_ps(active, x), m);
  const __m512 f = exp_vector<kTableDegree>(xs, active, table_lo, table_hi, w, &count);
  _mm512_mask_storeu_ps(e, active, f);
  *acc = _mm512_mask_add_ps(*acc, active, *acc, f);
}

Window kernel_window(int margin_bits) {
  Window w;
  w.on = margin_bits > 0;
  const int64_t half_width = w.on ? int64_t{1} << (53 - margin_bits) : 0;  // W
  w.low = _mm512_set1_epi64((int64_t{1} << 28) - half_width);
  w.width = _mm512_set1_epi64(2 * half_width);
  return w;
}

template <int Degree>
int64_t run_degree(const float* x, float* out, int64_t n, int margin_bits) {
  const Window w = kernel_window(margin_bits);
  const __m512d table_lo = _mm512_load_pd(kTable);
  const __m512d table_hi = _mm512_load_pd(kTable + 8);
  int64_t count = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    count += exp_block<Degree>(x + i, out + i, 0xFFFF, table_lo, table_hi, w);
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
    count += exp_block<Degree>(x + i, out + i, tail, table_lo, table_hi, w);
  }
  return count;
}

}  // namespace

void run_table_stream_avx512(const float* x, float* out, int64_t n) {
  const Window w = kernel_window(kTableMarginBits);
  const __m512d table_lo = _mm512_load_pd(kTable);
  const __m512d table_hi = _mm512_load_pd(kTable + 8);
  // Head: regular masked stores until out is 64-byte aligned; then whole blocks by non-temporal
  // stores (no read for ownership of the output lines); the tail by a masked store.
  int64_t i = 0;
  const int64_t head = std::min<int64_t>(n, ((64 - reinterpret_cast<uintptr_t>(out) % 64) % 64) / 4);
  if (reinterpret_cast<uintptr_t>(out) % 4 != 0) {  // not float-aligned: no streaming at all
    run_degree<kTableDegree>(x, out, n, kTableMarginBits);
    return;
  }
  if (head > 0) {
    exp_block<kTableDegree>(x, out, static_cast<__mmask16>((1u << head) - 1u), table_lo, table_hi, w);
    i = head;
  }
  for (; i + 16 <= n; i += 16) {
    int64_t count = 0;
    const __m512 f = exp_vector<kTableDegree>(_mm512_loadu_ps(x + i), 0xFFFF, table_lo, table_hi, w, &count);
    _mm512_stream_ps(out + i, f);
  }
  if (i < n) exp_block<kTableDegree>(x + i, out + i, static_cast<__mmask16>((1u << (n - i)) - 1u), table_lo, table_hi, w);
  _mm_sfence();  // the streamed lines are visible before the caller signals completion
}

float run_table_shift_leaf_avx512(const float* x, float m, float* e, int64_t len, const float* next) {
  const Window w = kernel_window(kTableMarginBits);
  const __m512d table_lo = _mm512_load_pd(kTable);
  const __m512d table_hi = _mm512_load_pd(kTable + 8);
  const __m512 mv = _mm512_set1_ps(m);
  // Sum lanes 0..15 in acc[0], 16..31 in acc[1]: element i goes to lane i mod 32, in ascending i.
  __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 16 <= len; i += 16) {
    if (next) _mm_prefetch(reinterpret_cast<const char*>(next + i), _MM_HINT_T0);  // a line per block
    shift_exp_add_block(x + i, mv, e + i, 0xFFFF, table_lo, table_hi, w, &acc[(i / 16) % 2]);
  }
  if (i < len) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (len - i)) - 1u);
    shift_exp_add_block(x + i, mv, e + i, tail, table_lo, table_hi, w, &acc[(i / 16) % 2]);
  }
  alignas(64) float lanes[32];
  _mm512_store_ps(lanes, acc[0]);
  _mm512_store_ps(lanes + 16, acc[1]);
  for (int s = 16; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = add(lanes[j], lanes[j + s]);
  return lanes[0];
}

void run_table_avx512(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks) {
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

#endif  // AVX-512
