// train_maps.h: elementwise pieces of the decoder's training pass (src/lm) in one pass each, for
// training: rotary embedding (forward and backward), the SwiGLU gate (forward and backward) and the
// backward of GELU with the tanh approximation. Raw-pointer API and its scalar reference.
//
// Every value is the rounding sequence of the Tensor ops each one replaces (the element functions
// below are the specification), so the result equals the composed ops bit for bit. Every stored
// NaN is canonical. Elements (and rows) are independent.
//
// Rotary embedding of rows x [rows, heads * D] with per-row tables cos, sin [rows, D], half = D / 2,
// for element i of a head (x_i, c_i, s_i):
//   forward   y_i  = x_i c_i + rot_i s_i,   rot_i = -x_(i+half) (i < half), x_(i-half) (i >= half)
//   backward  dx_i = g_i c_i + u_i,         u_i = z_(i+half) (i < half), -z_(i-half) (i >= half),
//                                           z_j = g_j s_j
// (each product, negation and sum its own rounding).
// SwiGLU of the gate's input a and the up projection b:
//   forward   y  = silu(a) b
//   backward  (dy) db = dy silu(a);  da = (dy b) (s (1 + a (1 - s))),  s = sigmoid(a)
// GELU (tanh form) backward, with k = 0.7978845608028654 and q = 0.044715 rounded to binary32:
//   t = tanh(k (x + q (x^2 x))),
//   dx = g ((1/2) (1 + t) + ((1/2) x) ((1 - t^2) (k (1 + 3q x^2))))     (3q rounded from binary64)
#pragma once

#include <cstdint>

#include "contract/math.h"
#include "kernels/launch.h"

namespace bl {

class ThreadPool;

struct RopeArgs {
  int64_t rows = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;  // even
  bool backward = false;
};

// Element i of head h of one row (xr: the row of x or g; cr, sr: the row's tables).
BL_HD float rope_element(const float* xr, const float* cr, const float* sr, int64_t h, int64_t i, int64_t D,
                         bool backward) {
  const int64_t half = D / 2, base = h * D;
  if (!backward) {
    const float rot = i < half ? canonicalize(neg(xr[base + i + half])) : xr[base + i - half];
    return canonicalize(add(canonicalize(mul(xr[base + i], cr[i])), canonicalize(mul(rot, sr[i]))));
  }
  const int64_t j = i < half ? i + half : i - half;
  const float z = canonicalize(mul(xr[base + j], sr[j]));
  const float u = i < half ? z : canonicalize(neg(z));
  return canonicalize(add(canonicalize(mul(xr[base + i], cr[i])), u));
}

enum class TrainMap {
  swiglu_forward,      // in a, b -> out0 y
  swiglu_backward,     // in a, b, dy -> out0 da, out1 db
  gelu_tanh_backward,  // in x, g -> out0 dx
};

// Element e of a TrainMap (in2 / out1 unused where the op has none).
BL_HD void train_map_element(TrainMap op, int64_t e, const float* in0, const float* in1, const float* in2,
                             float* out0, float* out1) {
  if (op == TrainMap::swiglu_forward) {
    out0[e] = canonicalize(mul(canonicalize(silu(in0[e])), in1[e]));
  } else if (op == TrainMap::swiglu_backward) {
    const float a = in0[e], dy = in2[e];
    out1[e] = canonicalize(mul(dy, canonicalize(silu(a))));
    const float s = canonicalize(sigmoid(a));
    const float d = canonicalize(mul(s, canonicalize(add(1.0f, canonicalize(mul(a, canonicalize(sub(1.0f, s))))))));
    out0[e] = canonicalize(mul(canonicalize(mul(dy, in1[e])), d));
  } else {
    const float k = 0.7978845608028654f, q = 0.044715f, three_q = static_cast<float>(3 * 0.044715);
    const float x = in0[e];
    const float x2 = canonicalize(mul(x, x));
    const float t = canonicalize(
        tanh(canonicalize(mul(k, canonicalize(add(x, canonicalize(mul(q, canonicalize(mul(x2, x))))))))));
    const float left = canonicalize(mul(0.5f, canonicalize(add(1.0f, t))));
    const float slope = canonicalize(mul(k, canonicalize(add(1.0f, canonicalize(mul(three_q, x2))))));
    const float right = canonicalize(
        mul(canonicalize(mul(0.5f, x)), canonicalize(mul(canonicalize(sub(1.0f, canonicalize(mul(t, t)))), slope))));
    out0[e] = canonicalize(mul(in1[e], canonicalize(add(left, right))));
  }
}

// Throws bl::Error when args are not a valid problem.
void rope_check_args(const RopeArgs& args);

// References (every element in order), CPU (threads over blocks fixed by the size) and CUDA
// (device pointers, default stream) versions; all give the same bits. y may not alias x.
void rope_reference(const RopeArgs& args, const float* x, const float* cos, const float* sin, float* y);
void rope_cpu(const RopeArgs& args, const float* x, const float* cos, const float* sin, float* y, ThreadPool& pool);
void rope_cuda(const RopeArgs& args, const float* x, const float* cos, const float* sin, float* y,
               const LaunchConfig& config = LaunchConfig());

void train_map_reference(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                         float* out1);
void train_map_cpu(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                   float* out1, ThreadPool& pool);
void train_map_cuda(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                    float* out1, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
