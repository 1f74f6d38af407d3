// AVX-512 leaves of the sum schedule (compiled with AVX-512 flags; called only when use_avx512()).
// The 32 lanes of schedule.h are two 16-wide registers: element i of a leaf goes to register
// (i mod 32) / 16, slot i mod 16, so each lane sees its values in ascending order exactly as in
// leaf_reduce. The fold by halving then runs on the 32 stored lanes. The AVX2 leaves, twice as wide.
#include "kernels/cpu/reduce_rows.h"

#include <cstdint>

// BL_AVX512_EMULATION: a test (tests/isa/) supplies the intrinsics as plain C++ so that machines
// without AVX-512 check this code's logic too; never defined in the library build.
#if defined(BL_AVX512_EMULATION)
#define BL_AVX512_BODY 1
#elif defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#define BL_AVX512_BODY 1
#endif

namespace bl::cpu {

#if defined(BL_AVX512_BODY)
namespace {

static_assert(kReduceLanes == 32, "two 16-lane registers hold the 32 lanes");

struct VecAdd {
  static __m512 apply(__m512 lane, __m512 x, __m512) { return _mm512_add_ps(lane, x); }
};
struct VecAddAbs {
  static __m512 apply(__m512 lane, __m512 x, __m512) {
    const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
    return _mm512_add_ps(lane, _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), magnitude)));
  }
};
struct VecSquare {
  static __m512 apply(__m512 lane, __m512 x, __m512) { return _mm512_fmadd_ps(x, x, lane); }
};
struct VecCenteredSquare {
  static __m512 apply(__m512 lane, __m512 x, __m512 c) {
    __m512 d = _mm512_sub_ps(x, c);
    return _mm512_fmadd_ps(d, d, lane);
  }
};

// Vec is the SIMD form of Step: same operation, same rounding, per slot.
template <class Vec, class Step>
float leaf_avx512(const float* x, int64_t len, float c) {
  const __m512 cv = _mm512_set1_ps(c);
  __m512 a0 = _mm512_setzero_ps(), a1 = a0;
  int64_t i = 0;
  for (; i + kReduceLanes <= len; i += kReduceLanes) {
    a0 = Vec::apply(a0, _mm512_loadu_ps(x + i), cv);
    a1 = Vec::apply(a1, _mm512_loadu_ps(x + i + 16), cv);
  }
  alignas(64) float lanes[kReduceLanes];
  _mm512_store_ps(lanes, a0);
  _mm512_store_ps(lanes + 16, a1);
  for (int64_t k = 0; i < len; ++i, ++k) lanes[k] = Step::apply(lanes[k], x[i], c);
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = Step::combine(lanes[j], lanes[j + s]);
  return lanes[0];
}

// max / min of a leaf, as in the AVX2 leaves: bl::max and bl::min are associative and commutative
// (NaN absorbs; the rest is a total order with -0 < +0), so any order gives the reference's value.
// Non-NaN floats are compared as signed integers s = bits ^ ((bits >> 31) & 0x7FFFFFFF); NaN is
// tracked apart and gives the canonical NaN.
template <bool kMax>
float leaf_extremum_avx512(const float* x, int64_t len) {
  // Two independent accumulators, combined after the loop (the AVX2 leaf says why).
  const __m512i flip = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i start = _mm512_set1_epi32(kMax ? INT32_MIN : INT32_MAX);
  __m512i best0 = start, best1 = start;
  __mmask16 any_nan = 0;
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    any_nan = static_cast<__mmask16>(any_nan | _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q) |
                                     _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q));
    const __m512i u0 = _mm512_castps_si512(v0), u1 = _mm512_castps_si512(v1);
    const __m512i s0 = _mm512_xor_si512(u0, _mm512_and_si512(_mm512_srai_epi32(u0, 31), flip));
    const __m512i s1 = _mm512_xor_si512(u1, _mm512_and_si512(_mm512_srai_epi32(u1, 31), flip));
    best0 = kMax ? _mm512_max_epi32(best0, s0) : _mm512_min_epi32(best0, s0);
    best1 = kMax ? _mm512_max_epi32(best1, s1) : _mm512_min_epi32(best1, s1);
  }
  for (; i + 16 <= len; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    any_nan = static_cast<__mmask16>(any_nan | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q));
    const __m512i u = _mm512_castps_si512(v);
    const __m512i s = _mm512_xor_si512(u, _mm512_and_si512(_mm512_srai_epi32(u, 31), flip));
    best0 = kMax ? _mm512_max_epi32(best0, s) : _mm512_min_epi32(best0, s);
  }
  const __m512i best = kMax ? _mm512_max_epi32(best0, best1) : _mm512_min_epi32(best0, best1);
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, best);
  bool nan_seen = any_nan != 0;
  int32_t b = lanes[0];
  for (int k = 1; k < 16; ++k) b = kMax ? (lanes[k] > b ? lanes[k] : b) : (lanes[k] < b ? lanes[k] : b);
  for (; i < len; ++i) {
    if (is_nan(x[i])) nan_seen = true;
    uint32_t u = bits_of(x[i]);
    int32_t s = static_cast<int32_t>(u ^ ((u >> 31) ? 0x7FFFFFFFu : 0u));
    b = kMax ? (s > b ? s : b) : (s < b ? s : b);
  }
  if (nan_seen) return canonical_nan();
  uint32_t ub = static_cast<uint32_t>(b);
  return float_of(ub ^ ((ub >> 31) ? 0x7FFFFFFFu : 0u));
}

}  // namespace

float leaf_max_avx512(const float* x, int64_t len, float) { return leaf_extremum_avx512<true>(x, len); }
float leaf_min_avx512(const float* x, int64_t len, float) { return leaf_extremum_avx512<false>(x, len); }

float leaf_sum_avx512(const float* x, int64_t len, float c) { return leaf_avx512<VecAdd, StepAdd>(x, len, c); }
float leaf_abs_sum_avx512(const float* x, int64_t len, float c) {
  return leaf_avx512<VecAddAbs, StepAddAbs>(x, len, c);
}
float leaf_square_sum_avx512(const float* x, int64_t len, float c) {
  return leaf_avx512<VecSquare, StepSquare>(x, len, c);
}
float leaf_centered_square_sum_avx512(const float* x, int64_t len, float c) {
  return leaf_avx512<VecCenteredSquare, StepCenteredSquare>(x, len, c);
}

#else  // not compiled for AVX-512: never called (use_avx512() is false); defined so the library links.

float leaf_max_avx512(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepMax>(x, len, c); }
float leaf_min_avx512(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepMin>(x, len, c); }

float leaf_sum_avx512(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepAdd>(x, len, c); }
float leaf_abs_sum_avx512(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepAddAbs>(x, len, c);
}
float leaf_square_sum_avx512(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepSquare>(x, len, c);
}
float leaf_centered_square_sum_avx512(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepCenteredSquare>(x, len, c);
}

#endif

}  // namespace bl::cpu
