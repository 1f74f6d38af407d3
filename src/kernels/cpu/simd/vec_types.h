// vec_types.h: the register types every vector traits struct of this folder declares (vec_scalar.h
// lists the operation set that goes with them). Expanded inside the struct, so the declarations are
// the struct's own: a template base would drop the attributes of the x86 vector types (may_alias).
#pragma once

// kLanes floats per register; F the float register, I the int32 register, N the NaN accumulator.
#define BL_SIMD_VEC_TYPES(lanes, Float, Int, NanAcc) \
  static constexpr int kLanes = lanes;               \
  using F = Float;                                   \
  using I = Int;                                     \
  using N = NanAcc;
