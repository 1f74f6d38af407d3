// optim_ops.cpp: the fused optimizer updates of bitlearn/ops_optim.h.
#include "bitlearn/ops_optim.h"

#include "core/allocator.h"
#include "core/error.h"
#include "kernels/adam.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {

std::array<Tensor, 3> adam_update(const Tensor& p_in, const Tensor& m_in, const Tensor& v_in, const Tensor& g_in,
                                  const AdamStepScalars& s) {
  constexpr const char* op = "adam_update";
  const Tensor* operands[] = {&p_in, &m_in, &v_in, &g_in};
  const char* names[] = {"p", "m", "v", "g"};
  for (int i = 0; i < 4; ++i) {
    check_defined(*operands[i], op, names[i]);
    BL_CHECK(operands[i]->dtype() == DType::f32, op, ": operand ", names[i], " has dtype ",
             dtype_name(operands[i]->dtype()), "; expected f32");
    BL_CHECK(operands[i]->shape() == p_in.shape(), op, ": operand ", names[i], " has shape ",
             shape_str(operands[i]->shape()), "; expected the parameter's shape ", shape_str(p_in.shape()));
    check_same_device(p_in, *operands[i], op, "p", names[i]);
  }
  check_device_usable(p_in.device(), op);
  const Tensor p = p_in.contiguous(), m = m_in.contiguous(), v = v_in.contiguous(), g = g_in.contiguous();
  AdamScalars k;
  k.beta1 = s.beta1;
  k.one_minus_beta1 = binary_f32(BinaryOp::sub, 1.0f, s.beta1);
  k.beta2 = s.beta2;
  k.one_minus_beta2 = binary_f32(BinaryOp::sub, 1.0f, s.beta2);
  k.bc2_sqrt = s.bc2_sqrt;
  k.eps = s.eps;
  k.step_size = s.step_size;
  k.decay_mode = s.decay_kind == AdamDecayKind::decoupled ? AdamDecay::decoupled
                 : s.decay_kind == AdamDecayKind::l2      ? AdamDecay::l2
                                                          : AdamDecay::none;
  k.decay = s.decay;
  std::array<Tensor, 3> out{Tensor::empty(p.shape(), DType::f32, p.device()),
                            Tensor::empty(p.shape(), DType::f32, p.device()),
                            Tensor::empty(p.shape(), DType::f32, p.device())};
  if (p.numel() == 0) return out;
  dispatch::adam_update(p.device(), k, static_cast<const float*>(p.raw_data()), static_cast<const float*>(m.raw_data()),
                        static_cast<const float*>(v.raw_data()), static_cast<const float*>(g.raw_data()),
                        static_cast<float*>(out[0].raw_data()), static_cast<float*>(out[1].raw_data()),
                        static_cast<float*>(out[2].raw_data()), p.numel());
  return out;
}

}  // namespace bl
