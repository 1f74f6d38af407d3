// ops_optim.h: fused optimizer updates. Each gives the bits of the separate elementwise ops it
// replaces (src/kernels/adam.h states the steps), in one pass over the parameter.
#pragma once

#include <array>

#include "bitlearn/tensor.h"

namespace bl {

enum class AdamDecayKind { none, decoupled, l2 };

// The per-step numbers of one Adam / AdamW update. decay: 1 - lr * weight_decay for decoupled
// decay (AdamW), weight_decay for L2 decay (Adam), unused for none.
struct AdamStepScalars {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float step_size = 0.0f;  // lr / (1 - beta1^t)
  float bc2_sqrt = 1.0f;   // sqrt(1 - beta2^t)
  AdamDecayKind decay_kind = AdamDecayKind::none;
  float decay = 0.0f;
};

// One update of parameter p with moments m, v and gradient g (f32, one shape, one device):
// returns the new {p, m, v}. Non-contiguous operands are read through contiguous copies.
std::array<Tensor, 3> adam_update(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& g,
                                  const AdamStepScalars& s);

}  // namespace bl
