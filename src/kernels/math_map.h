// math_map.h: the contract math functions applied element by element to arrays.
//
// This header is the op's specification: the table of function ids and names, a scalar
// `math_apply`, and the reference maps (one plain loop). The CPU map (kernels/cpu/math_map.cpp)
// and the CUDA map (kernels/cuda/math_map.cu) must give the same bits as the reference for every
// input; tests/math/ and tests/cuda/test_math_cuda.cu check it.
#pragma once

#include <stdint.h>

#include "contract/math.h"

namespace bl {

// Every contract math function. The numbering is part of the tool and file formats (sweep hash
// files use the names, never the numbers, but keep the order stable anyway).
enum class MathFn : int {
  exp = 0,
  expm1,
  log,
  log1p,
  log2,
  tanh,
  sigmoid,
  silu,
  softplus,
  gelu_tanh,
  sin,
  cos,
  erf,
  gelu,
  pow,
  rsqrt,
};

constexpr int kMathFnCount = 16;

// Number of operands: 2 for pow, 1 for every other function.
BL_HD int math_arity(MathFn fn) { return fn == MathFn::pow ? 2 : 1; }

// f(x) for a unary function. For pow (binary) this returns the canonical NaN: call the two-operand
// overload instead. The switch is the reference; it is not meant to sit in a hot loop.
BL_HD float math_apply(MathFn fn, float x) {
  switch (fn) {
    case MathFn::exp: return bl::exp(x);
    case MathFn::expm1: return bl::expm1(x);
    case MathFn::log: return bl::log(x);
    case MathFn::log1p: return bl::log1p(x);
    case MathFn::log2: return bl::log2(x);
    case MathFn::tanh: return bl::tanh(x);
    case MathFn::sigmoid: return bl::sigmoid(x);
    case MathFn::silu: return bl::silu(x);
    case MathFn::softplus: return bl::softplus(x);
    case MathFn::gelu_tanh: return bl::gelu_tanh(x);
    case MathFn::sin: return bl::sin(x);
    case MathFn::cos: return bl::cos(x);
    case MathFn::erf: return bl::erf(x);
    case MathFn::gelu: return bl::gelu(x);
    case MathFn::rsqrt: return bl::rsqrt(x);
    case MathFn::pow: break;
  }
  return canonical_nan();
}

// f(x, y) for the binary function pow; every unary function ignores y.
BL_HD float math_apply(MathFn fn, float x, float y) {
  if (fn == MathFn::pow) return bl::pow(x, y);
  return math_apply(fn, x);
}

// The reference map: out[i] = f(x[i]) (unary) or f(x[i], y[i]) (pow; y must then be non-null),
// for i in [0, n), in ascending i. Results are stored canonicalized (a no-op for conforming
// functions, which already return the canonical NaN).
inline void math_map_reference(MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  if (fn == MathFn::pow) {
    for (int64_t i = 0; i < n; ++i) out[i] = canonicalize(math_apply(fn, x[i], y[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = canonicalize(math_apply(fn, x[i]));
  }
}

}  // namespace bl

// Host part: names, the CPU map and the CUDA map entry points (host functions; nvcc parses them
// in both passes, so they are not hidden from the device pass).
#include <string>
#include <vector>

namespace bl {

class ThreadPool;
struct LaunchConfig;

// The function's name as the tools spell it ("exp", "gelu_tanh", ...).
const char* math_fn_name(MathFn fn);
// The id for a name; throws bl::Error naming the unknown name and listing the valid ones.
MathFn math_fn_from_name(const std::string& name);
// All functions in id order.
std::vector<MathFn> all_math_fns();

// Number of elements per CPU task: the partition depends on n only (never on the thread count).
constexpr int64_t kMathMapChunk = 16384;

// CPU map: same bits as math_map_reference, run on `pool` in chunks of kMathMapChunk elements.
// Uses the AVX-512 or AVX2+FMA build of the loop when the active ISA variant is one of them. Throws bl::Error for pow (use the
// overload with y), for a negative n, or for null pointers with n > 0.
void math_map_cpu(MathFn fn, const float* x, float* out, int64_t n, ThreadPool& pool);
// CPU map for pow: out[i] = pow(x[i], y[i]). Throws bl::Error for any other (unary) function.
void math_map_cpu(MathFn fn, const float* x, const float* y, float* out, int64_t n,
                  ThreadPool& pool);

// One chunk of the CPU map, single-threaded (y is null for unary functions). Exposed for the
// threaded driver and the tests; math_map_chunk_avx2 may only be called after
// cpu_has_avx2_fma() returned true.
void math_map_chunk_baseline(MathFn fn, const float* x, const float* y, float* out, int64_t n);
void math_map_chunk_avx2(MathFn fn, const float* x, const float* y, float* out, int64_t n);
// The AVX-512 build of the same loop; call only when bl::active_isa() is Isa::avx512.
void math_map_chunk_avx512(MathFn fn, const float* x, const float* y, float* out, int64_t n);

// CUDA map on device pointers (device 0's current stream 0): a grid-stride loop with
// config.block threads per block and at most config.grid_cap blocks (0 = as many as needed).
// Synchronizes before returning; throws bl::Error on a CUDA error or a bad argument.
void math_map_cuda(MathFn fn, const float* dev_x, float* dev_out, int64_t n,
                   const LaunchConfig& config);
// CUDA map for pow: dev_out[i] = pow(dev_x[i], dev_y[i]).
void math_map_cuda(MathFn fn, const float* dev_x, const float* dev_y, float* dev_out, int64_t n,
                   const LaunchConfig& config);

}  // namespace bl
