// adam.h: one Adam / AdamW update of every element of a parameter, its two moment slots and its
// gradient, in one pass. Each step is the rounding of the Tensor op it replaces in nn::Adam (the
// element functions of binary.h and unary.h), so the result equals the composed ops bit for bit:
//   decoupled decay: p1 = p * decay                  (decay = 1 - lr * weight_decay)
//   L2 decay:        g1 = g + p * decay               (decay = weight_decay)
//   m' = m * beta1 + g1 * (1 - beta1)
//   v' = v * beta2 + square(g1) * (1 - beta2)
//   p' = p1 - (m' / (sqrt(v') / bc2_sqrt + eps)) * step_size
// with p1 = p and g1 = g where no decay applies. Outputs may alias the inputs element for element.
#pragma once

#include <cstdint>

#include "kernels/binary.h"
#include "kernels/launch.h"
#include "kernels/unary.h"

namespace bl {

class ThreadPool;

enum class AdamDecay : int { none, decoupled, l2 };

struct AdamScalars {
  float beta1 = 0.9f, one_minus_beta1 = 0.1f;
  float beta2 = 0.999f, one_minus_beta2 = 0.001f;
  float bc2_sqrt = 1.0f;   // sqrt(1 - beta2^t)
  float eps = 1e-8f;
  float step_size = 0.0f;  // lr / (1 - beta1^t)
  AdamDecay decay_mode = AdamDecay::none;
  float decay = 0.0f;
};

// The update of one element (the reference; every backend calls it).
BL_HD void adam_element(const AdamScalars& s, float p, float m, float v, float g, float* p_out, float* m_out,
                        float* v_out) {
  float p1 = p, g1 = g;
  if (s.decay_mode == AdamDecay::decoupled) p1 = binary_f32(BinaryOp::mul, p, s.decay);
  if (s.decay_mode == AdamDecay::l2) g1 = binary_f32(BinaryOp::add, g, binary_f32(BinaryOp::mul, p, s.decay));
  const float m2 = binary_f32(BinaryOp::add, binary_f32(BinaryOp::mul, m, s.beta1),
                              binary_f32(BinaryOp::mul, g1, s.one_minus_beta1));
  const float v2 = binary_f32(BinaryOp::add, binary_f32(BinaryOp::mul, v, s.beta2),
                              binary_f32(BinaryOp::mul, unary_f32(UnaryOp::square, g1), s.one_minus_beta2));
  const float denom =
      binary_f32(BinaryOp::add, binary_f32(BinaryOp::div, unary_f32(UnaryOp::sqrt, v2), s.bc2_sqrt), s.eps);
  *p_out = binary_f32(BinaryOp::sub, p1, binary_f32(BinaryOp::mul, binary_f32(BinaryOp::div, m2, denom), s.step_size));
  *m_out = m2;
  *v_out = v2;
}

// Reference, CPU (threads over fixed blocks of elements) and CUDA (device pointers, default
// stream): element i of p_out, m_out, v_out from element i of p, m, v, g.
void adam_reference(const AdamScalars& s, const float* p, const float* m, const float* v, const float* g,
                    float* p_out, float* m_out, float* v_out, int64_t n);
void adam_cpu(const AdamScalars& s, const float* p, const float* m, const float* v, const float* g, float* p_out,
              float* m_out, float* v_out, int64_t n, ThreadPool& pool);
void adam_cuda(const AdamScalars& s, const float* p, const float* m, const float* v, const float* g, float* p_out,
               float* m_out, float* v_out, int64_t n, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
