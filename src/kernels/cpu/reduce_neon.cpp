// AArch64 NEON leaves of the sum schedule (NEON is in the AArch64 baseline; called only when
// use_neon()). The 32 lanes of schedule.h are eight 4-wide registers: element i of a leaf goes to
// register (i mod 32) / 4, slot i mod 4, so each lane sees its values in ascending order exactly
// as in leaf_reduce. The fold by halving then runs on the 32 stored lanes.
#include "kernels/cpu/reduce_rows.h"

#include <cstdint>

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace bl::cpu {

#if defined(__aarch64__) && defined(__ARM_NEON)
namespace {

struct NeonAdd {
  static float32x4_t apply(float32x4_t lane, float32x4_t x, float32x4_t) { return vaddq_f32(lane, x); }
};
struct NeonAddAbs {
  static float32x4_t apply(float32x4_t lane, float32x4_t x, float32x4_t) {
    return vaddq_f32(lane, vabsq_f32(x));  // FABS clears the sign bit only, like bl::abs
  }
};
struct NeonSquare {
  static float32x4_t apply(float32x4_t lane, float32x4_t x, float32x4_t) { return vfmaq_f32(lane, x, x); }
};
struct NeonCenteredSquare {
  static float32x4_t apply(float32x4_t lane, float32x4_t x, float32x4_t c) {
    const float32x4_t d = vsubq_f32(x, c);
    return vfmaq_f32(lane, d, d);
  }
};

// Vec is the NEON form of Step: same operation, same rounding, per slot.
template <class Vec, class Step>
float leaf_neon(const float* x, int64_t len, float c) {
  const float32x4_t cv = vdupq_n_f32(c);
  float32x4_t acc[8];
  for (int r = 0; r < 8; ++r) acc[r] = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + kReduceLanes <= len; i += kReduceLanes)
    for (int r = 0; r < 8; ++r) acc[r] = Vec::apply(acc[r], vld1q_f32(x + i + 4 * r), cv);
  float lanes[kReduceLanes];
  for (int r = 0; r < 8; ++r) vst1q_f32(lanes + 4 * r, acc[r]);
  for (int64_t k = 0; i < len; ++i, ++k) lanes[k] = Step::apply(lanes[k], x[i], c);
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = Step::combine(lanes[j], lanes[j + s]);
  return lanes[0];
}

// max / min of a leaf, as in the AVX2 version: non-NaN floats compared as the signed integers
// s = bits ^ ((bits >> 31) & 0x7FFFFFFF) (the total order with -0 < +0), NaN tracked apart and
// returned as the canonical NaN. Any order gives the reference's value.
template <bool kMax>
float leaf_extremum_neon(const float* x, int64_t len) {
  const int32x4_t flip = vdupq_n_s32(0x7FFFFFFF);
  int32x4_t best = vdupq_n_s32(kMax ? INT32_MIN : INT32_MAX);
  uint32x4_t ordered = vdupq_n_u32(0xFFFFFFFFu);
  int64_t i = 0;
  for (; i + 4 <= len; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    ordered = vandq_u32(ordered, vceqq_f32(v, v));
    const int32x4_t u = vreinterpretq_s32_f32(v);
    const int32x4_t s = veorq_s32(u, vandq_s32(vshrq_n_s32(u, 31), flip));
    best = kMax ? vmaxq_s32(best, s) : vminq_s32(best, s);
  }
  bool nan_seen = vminvq_u32(ordered) == 0;
  int32_t b = kMax ? vmaxvq_s32(best) : vminvq_s32(best);
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

float leaf_max_neon(const float* x, int64_t len, float) { return leaf_extremum_neon<true>(x, len); }
float leaf_min_neon(const float* x, int64_t len, float) { return leaf_extremum_neon<false>(x, len); }
float leaf_sum_neon(const float* x, int64_t len, float c) { return leaf_neon<NeonAdd, StepAdd>(x, len, c); }
float leaf_abs_sum_neon(const float* x, int64_t len, float c) {
  return leaf_neon<NeonAddAbs, StepAddAbs>(x, len, c);
}
float leaf_square_sum_neon(const float* x, int64_t len, float c) {
  return leaf_neon<NeonSquare, StepSquare>(x, len, c);
}
float leaf_centered_square_sum_neon(const float* x, int64_t len, float c) {
  return leaf_neon<NeonCenteredSquare, StepCenteredSquare>(x, len, c);
}

#else  // not AArch64: never called (use_neon() is false); defined so the library links.

float leaf_max_neon(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepMax>(x, len, c); }
float leaf_min_neon(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepMin>(x, len, c); }
float leaf_sum_neon(const float* x, int64_t len, float c) { return scalar_contiguous_leaf<StepAdd>(x, len, c); }
float leaf_abs_sum_neon(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepAddAbs>(x, len, c);
}
float leaf_square_sum_neon(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepSquare>(x, len, c);
}
float leaf_centered_square_sum_neon(const float* x, int64_t len, float c) {
  return scalar_contiguous_leaf<StepCenteredSquare>(x, len, c);
}

#endif

}  // namespace bl::cpu
