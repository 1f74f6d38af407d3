// reduce_leaf.h: the contiguous leaves of the sum schedule, written once over a vector traits
// type V (vec_scalar.h lists its operations) and instantiated by reduce_avx2.cpp,
// reduce_avx512.cpp and reduce_neon.cpp. Everything here is in an unnamed namespace: each
// per-ISA translation unit keeps its own copy (scripts/check_isa_objects.sh).
//
// The 32 lanes of schedule.h are 32 / V::kLanes registers: element i of a leaf goes to register
// (i mod 32) / kLanes, slot i mod kLanes, so each lane sees its values in ascending order exactly
// as in leaf_reduce; the partial block at the end goes lane by lane through the scalar step, and
// the fold by halving runs on the 32 stored lanes.
#pragma once

#include <cstdint>

#include "kernels/reduce.h"

namespace bl::simd {
namespace {

static_assert(kReduceLanes == 32, "the leaves below hold 32 lanes");

// The vector forms of the sum-schedule steps: the same operation, the same rounding, per slot.
struct VecAdd {
  template <class V>
  static typename V::F apply(typename V::F lane, typename V::F x, typename V::F) { return V::add(lane, x); }
};
struct VecAddAbs {
  template <class V>
  static typename V::F apply(typename V::F lane, typename V::F x, typename V::F) {
    return V::add(lane, V::abs(x));
  }
};
struct VecSquare {
  template <class V>
  static typename V::F apply(typename V::F lane, typename V::F x, typename V::F) { return V::fma(x, x, lane); }
};
struct VecCenteredSquare {
  template <class V>
  static typename V::F apply(typename V::F lane, typename V::F x, typename V::F c) {
    const typename V::F d = V::sub(x, c);
    return V::fma(d, d, lane);
  }
};

// The leaf value of Step over x[0..len), len <= kReduceLeaf, with step value c; Vec is Step's
// vector form.
template <class V, class Vec, class Step>
float leaf_lanes(const float* x, int64_t len, float c) {
  constexpr int kRegs = kReduceLanes / V::kLanes;
  const typename V::F cv = V::set1(c);
  typename V::F acc[kRegs];
  for (int r = 0; r < kRegs; ++r) acc[r] = V::zero();
  int64_t i = 0;
  for (; i + kReduceLanes <= len; i += kReduceLanes)
    for (int r = 0; r < kRegs; ++r) acc[r] = Vec::template apply<V>(acc[r], V::loadu(x + i + r * V::kLanes), cv);
  alignas(64) float lanes[kReduceLanes];
  for (int r = 0; r < kRegs; ++r) V::store(lanes + r * V::kLanes, acc[r]);
  for (int64_t k = 0; i < len; ++i, ++k) lanes[k] = Step::apply(lanes[k], x[i], c);
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = Step::combine(lanes[j], lanes[j + s]);
  return lanes[0];
}

// max (kMax) or min of x[0..len), len >= 1. bl::max and bl::min are associative and commutative
// (NaN absorbs; the rest is a total order with -0 < +0), so any order gives the reference's value.
// Non-NaN floats are compared by their total-order keys (V::key); NaN is tracked apart and gives
// the canonical NaN. One accumulator (and NaN flag) per register of the 32 lanes keeps the steps
// independent; with a single one every step waited on the previous.
template <class V, bool kMax>
float leaf_extremum(const float* x, int64_t len) {
  constexpr int kRegs = kReduceLanes / V::kLanes;
  using I = typename V::I;
  using N = typename V::N;
  I best[kRegs];
  N nan[kRegs];
  for (int r = 0; r < kRegs; ++r) {
    best[r] = V::set1_i32(kMax ? INT32_MIN : INT32_MAX);
    nan[r] = V::nan_none();
  }
  int64_t i = 0;
  for (; i + kReduceLanes <= len; i += kReduceLanes) {
    for (int r = 0; r < kRegs; ++r) {
      const typename V::F v = V::loadu(x + i + r * V::kLanes);
      nan[r] = V::nan_note(nan[r], v);
      best[r] = kMax ? V::max_i32(best[r], V::key(v)) : V::min_i32(best[r], V::key(v));
    }
  }
  for (; i + V::kLanes <= len; i += V::kLanes) {
    const typename V::F v = V::loadu(x + i);
    nan[0] = V::nan_note(nan[0], v);
    best[0] = kMax ? V::max_i32(best[0], V::key(v)) : V::min_i32(best[0], V::key(v));
  }
  for (int s = kRegs / 2; s >= 1; s /= 2) {
    for (int r = 0; r < s; ++r) {
      best[r] = kMax ? V::max_i32(best[r], best[r + s]) : V::min_i32(best[r], best[r + s]);
      nan[r] = V::nan_or(nan[r], nan[r + s]);
    }
  }
  bool nan_seen = V::nan_any(nan[0]);
  int32_t b = kMax ? V::hmax_i32(best[0]) : V::hmin_i32(best[0]);
  for (; i < len; ++i) {
    if (is_nan(x[i])) nan_seen = true;
    const uint32_t u = bits_of(x[i]);
    const int32_t s = static_cast<int32_t>(u ^ ((u >> 31) ? 0x7FFFFFFFu : 0u));
    b = kMax ? (s > b ? s : b) : (s < b ? s : b);
  }
  if (nan_seen) return canonical_nan();
  const uint32_t ub = static_cast<uint32_t>(b);
  return float_of(ub ^ ((ub >> 31) ? 0x7FFFFFFFu : 0u));
}

}  // namespace
}  // namespace bl::simd

// Defines leaf_<name>_<isa> in bl::cpu: the lane leaf of Step with the vector step Vec, traits V.
#define BL_DEFINE_REDUCE_LANES_LEAF(isa, V, name, Vec, Step)            \
  float leaf_##name##_##isa(const float* x, int64_t len, float c) {     \
    return ::bl::simd::leaf_lanes<V, ::bl::simd::Vec, Step>(x, len, c); \
  }

// Defines the six contiguous leaves of reduce_rows.h for one ISA: leaf_sum_<isa> ... leaf_min_<isa>
// in bl::cpu, from the generic leaves above instantiated with traits V.
#define BL_DEFINE_REDUCE_LEAVES(isa, V)                                                           \
  BL_DEFINE_REDUCE_LANES_LEAF(isa, V, sum, VecAdd, StepAdd)                                       \
  BL_DEFINE_REDUCE_LANES_LEAF(isa, V, abs_sum, VecAddAbs, StepAddAbs)                             \
  BL_DEFINE_REDUCE_LANES_LEAF(isa, V, square_sum, VecSquare, StepSquare)                          \
  BL_DEFINE_REDUCE_LANES_LEAF(isa, V, centered_square_sum, VecCenteredSquare, StepCenteredSquare) \
  float leaf_max_##isa(const float* x, int64_t len, float) { return ::bl::simd::leaf_extremum<V, true>(x, len); } \
  float leaf_min_##isa(const float* x, int64_t len, float) { return ::bl::simd::leaf_extremum<V, false>(x, len); }
