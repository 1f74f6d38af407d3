// math_map_loop.h: the per-chunk loops of the CPU math map, included by math_map.cpp (baseline ISA),
// math_map_avx2.cpp (AVX2+FMA) and math_map_avx512.cpp. All compile the same source, so all follow
// the same operation order as the reference (the functions are elementwise: no order across elements).
//
// Everything here has internal linkage (unnamed namespace): the translation units are built
// for different instruction sets, and a shared out-of-line copy chosen by the linker could run
// AVX2 code on a CPU without it.
#pragma once

#include "kernels/math_map.h"

namespace {

// One loop per function so the function call sits directly in the loop body (no switch per
// element), which lets the compiler inline and, where it can, vectorize it.
#define BL_MATH_MAP_UNARY_LOOP(name)                                                         \
  case ::bl::MathFn::name:                                                                   \
    for (int64_t i = 0; i < n; ++i) out[i] = ::bl::canonicalize(::bl::name(x[i]));           \
    return;

inline void math_map_chunk_loops(::bl::MathFn fn, const float* x, const float* y, float* out,
                                 int64_t n) {
  switch (fn) {
    BL_MATH_MAP_UNARY_LOOP(exp)
    BL_MATH_MAP_UNARY_LOOP(expm1)
    BL_MATH_MAP_UNARY_LOOP(log)
    BL_MATH_MAP_UNARY_LOOP(log1p)
    BL_MATH_MAP_UNARY_LOOP(log2)
    BL_MATH_MAP_UNARY_LOOP(tanh)
    BL_MATH_MAP_UNARY_LOOP(sigmoid)
    BL_MATH_MAP_UNARY_LOOP(silu)
    BL_MATH_MAP_UNARY_LOOP(softplus)
    BL_MATH_MAP_UNARY_LOOP(gelu_tanh)
    BL_MATH_MAP_UNARY_LOOP(sin)
    BL_MATH_MAP_UNARY_LOOP(cos)
    BL_MATH_MAP_UNARY_LOOP(erf)
    BL_MATH_MAP_UNARY_LOOP(gelu)
    BL_MATH_MAP_UNARY_LOOP(rsqrt)
    case ::bl::MathFn::pow:
      for (int64_t i = 0; i < n; ++i) out[i] = ::bl::canonicalize(::bl::pow(x[i], y[i]));
      return;
  }
}

#undef BL_MATH_MAP_UNARY_LOOP

// The chunk loop of an ISA with an explicit-SIMD binary64 exp kernel (exp_f64_cpu.h; same bits as
// bl::exp, fewer operations than the compiled bl::exp loop): exp goes to that kernel, every other
// function to the loops above.
template <void (*ExpKernel)(const float*, float*, int64_t)>
inline void math_map_chunk_with_exp(::bl::MathFn fn, const float* x, const float* y, float* out,
                                    int64_t n) {
  if (fn == ::bl::MathFn::exp) {
    ExpKernel(x, out, n);
    return;
  }
  math_map_chunk_loops(fn, x, y, out, n);
}

}  // namespace
