// ops_train.h: fused pieces of a decoder's training pass as Tensor ops (src/kernels/norm_backward.h
// and src/kernels/train_maps.h define the numerics exactly).
//
// Each op computes, in one pass, exactly what a fixed sequence of the elementwise, reduction and
// shape ops computes (each step rounded as that op rounds it), so a trainer may use either form and
// get the same bits on every device.
#pragma once

#include <cstdint>
#include <utility>

#include "bitlearn/tensor.h"

namespace bl {

// The input gradient of layer norm (layer_norm true) or RMS norm over the last axis of x, given the
// gradient g of the output (shape of x) and the weight w [n]. Returns {dx, g * xhat}: with
// xhat = (x - mean) / sqrt(var + eps) (RMS: x / sqrt(mean(x^2) + eps)) computed as
// c * rsqrt(mean(c * c) + eps), d = g * w and mean over the last axis,
//   dx = rsqrt(...) * ((d - xhat * mean(d * xhat)) - mean(d))        (RMS: without - mean(d)).
// The second output, summed over rows, is the weight's gradient.
std::pair<Tensor, Tensor> norm_backward(const Tensor& x, const Tensor& g, const Tensor& w, float eps,
                                        bool layer_norm);

// Rotary embedding of rows x [N, heads * head_dim] with per-row tables cos, sin [N, head_dim]:
// x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1) per head. backward: the transpose,
// g * cos + rotate_half^T(g * sin) with rotate_half^T(z) = (z2, -z1).
Tensor rope(const Tensor& x, const Tensor& cos_rows, const Tensor& sin_rows, int64_t head_dim, bool backward = false);

// SwiGLU: silu(a) * b (a and b of one shape), and its backward {da, db} for the output gradient dy.
Tensor swiglu(const Tensor& a, const Tensor& b);
std::pair<Tensor, Tensor> swiglu_backward(const Tensor& a, const Tensor& b, const Tensor& dy);

// The gradient of gelu_tanh(x) for the output gradient g (shape of x).
Tensor gelu_tanh_backward(const Tensor& x, const Tensor& g);

}  // namespace bl
