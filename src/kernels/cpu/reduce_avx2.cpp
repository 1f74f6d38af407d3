// AVX2+FMA leaves of the sum schedule (compiled with -mavx2 -mfma; called only after
// cpu_has_avx2_fma()). The 32 lanes of schedule.h are four 8-wide registers: element i of a
// leaf goes to register (i mod 32) / 8, slot i mod 8, so each lane sees its values in ascending
// order exactly as in leaf_reduce. The fold by halving then runs on the 32 stored lanes.
#include "kernels/cpu/reduce_rows.h"

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace bl::cpu {

#if defined(__x86_64__) || defined(_M_X64)
namespace {

struct VecAdd {
  static __m256 apply(__m256 lane, __m256 x, __m256) { return _mm256_add_ps(lane, x); }
};
struct VecAddAbs {
  static __m256 apply(__m256 lane, __m256 x, __m256) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    return _mm256_add_ps(lane, _mm256_and_ps(x, magnitude));
  }
};
struct VecSquare {
  static __m256 apply(__m256 lane, __m256 x, __m256) { return _mm256_fmadd_ps(x, x, lane); }
};
struct VecCenteredSquare {
  static __m256 apply(__m256 lane, __m256 x, __m256 c) {
    __m256 d = _mm256_sub_ps(x, c);
    return _mm256_fmadd_ps(d, d, lane);
  }
};

// Vec is the SIMD form of Step: same operation, same rounding, per slot.
template <class Vec, class Step>
float leaf_avx2(const float* x, int64_t len, float c) {
  const __m256 cv = _mm256_set1_ps(c);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + kReduceLanes <= len; i += kReduceLanes) {
    a0 = Vec::apply(a0, _mm256_loadu_ps(x + i), cv);
    a1 = Vec::apply(a1, _mm256_loadu_ps(x + i + 8), cv);
    a2 = Vec::apply(a2, _mm256_loadu_ps(x + i + 16), cv);
    a3 = Vec::apply(a3, _mm256_loadu_ps(x + i + 24), cv);
  }
  alignas(32) float lanes[kReduceLanes];
  _mm256_store_ps(lanes, a0);
  _mm256_store_ps(lanes + 8, a1);
  _mm256_store_ps(lanes + 16, a2);
  _mm256_store_ps(lanes + 24, a3);
  for (int64_t k = 0; i < len; ++i, ++k) lanes[k] = Step::apply(lanes[k], x[i], c);
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = Step::combine(lanes[j], lanes[j + s]);
  return lanes[0];
}

// max / min of a leaf. bl::max and bl::min are associative and commutative (NaN absorbs; the
// rest is a total order with -0 < +0), so any order gives the reference's value. Non-NaN floats
// are compared as signed integers s = bits ^ ((bits >> 31) & 0x7FFFFFFF), which orders them as
// the total order does; NaN is tracked apart and gives the canonical NaN.
template <bool kMax>
inline __m256i extremum8(__m256i a, __m256i b) {
  return kMax ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b);
}
template <bool kMax>
inline __m128i extremum4(__m128i a, __m128i b) {
  return kMax ? _mm_max_epi32(a, b) : _mm_min_epi32(a, b);
}

// Four independent accumulators and the horizontal step in registers: with one accumulator
// that was also stored to an array, the compiler kept it in memory and every step waited on a
// store-to-load round trip (2.5 GB/s in L2, a sixth of the sum leaf).
template <bool kMax>
float leaf_extremum_avx2(const float* x, int64_t len) {
  const __m256i flip = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i start = _mm256_set1_epi32(kMax ? INT32_MIN : INT32_MAX);
  __m256i best0 = start, best1 = start, best2 = start, best3 = start;
  __m256 any_nan0 = _mm256_setzero_ps(), any_nan1 = _mm256_setzero_ps();
  auto key = [&](__m256 v) {
    const __m256i u = _mm256_castps_si256(v);
    return _mm256_xor_si256(u, _mm256_and_si256(_mm256_srai_epi32(u, 31), flip));
  };
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    any_nan0 = _mm256_or_ps(any_nan0, _mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q), _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q)));
    any_nan1 = _mm256_or_ps(any_nan1, _mm256_or_ps(_mm256_cmp_ps(v2, v2, _CMP_UNORD_Q), _mm256_cmp_ps(v3, v3, _CMP_UNORD_Q)));
    best0 = extremum8<kMax>(best0, key(v0));
    best1 = extremum8<kMax>(best1, key(v1));
    best2 = extremum8<kMax>(best2, key(v2));
    best3 = extremum8<kMax>(best3, key(v3));
  }
  for (; i + 8 <= len; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    any_nan0 = _mm256_or_ps(any_nan0, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    best0 = extremum8<kMax>(best0, key(v));
  }
  const __m256i best = extremum8<kMax>(extremum8<kMax>(best0, best1), extremum8<kMax>(best2, best3));
  __m128i m = extremum4<kMax>(_mm256_castsi256_si128(best), _mm256_extracti128_si256(best, 1));
  m = extremum4<kMax>(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = extremum4<kMax>(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  bool nan_seen = _mm256_movemask_ps(_mm256_or_ps(any_nan0, any_nan1)) != 0;
  int32_t b = _mm_cvtsi128_si32(m);
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

float leaf_max_avx2(const float* x, int64_t len, float) { return leaf_extremum_avx2<true>(x, len); }
float leaf_min_avx2(const float* x, int64_t len, float) { return leaf_extremum_avx2<false>(x, len); }

float leaf_sum_avx2(const float* x, int64_t len, float c) { return leaf_avx2<VecAdd, StepAdd>(x, len, c); }
float leaf_abs_sum_avx2(const float* x, int64_t len, float c) {
  return leaf_avx2<VecAddAbs, StepAddAbs>(x, len, c);
}
float leaf_square_sum_avx2(const float* x, int64_t len, float c) {
  return leaf_avx2<VecSquare, StepSquare>(x, len, c);
}
float leaf_centered_square_sum_avx2(const float* x, int64_t len, float c) {
  return leaf_avx2<VecCenteredSquare, StepCenteredSquare>(x, len, c);
}

#else  // not x86-64: never called (cpu_has_avx2_fma() is false); defined so the library links.

float leaf_max_avx2(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepMax>(x, len, c); }
float leaf_min_avx2(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepMin>(x, len, c); }

float leaf_sum_avx2(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepAdd>(x, len, c); }
float leaf_abs_sum_avx2(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepAddAbs>(x, len, c);
}
float leaf_square_sum_avx2(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepSquare>(x, len, c);
}
float leaf_centered_square_sum_avx2(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepCenteredSquare>(x, len, c);
}

#endif

}  // namespace bl::cpu
