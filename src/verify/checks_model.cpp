// checks_model.cpp: a small network forward pass (mlp.forward).
//
//   h      = x @ W1 + b1            x [B, D_in], W1 [D_in, H]   (contract GEMM, then a broadcast add)
//   h      = gelu(h)                (erf form, contract math through the Tensor op)
//   h      = layer_norm(h) * gamma + beta
//   logits = h @ W2 + b2            W2 [H, C]
//   p      = softmax(logits)
// Weights come from Philox normals with a fixed seed (scaled like a common initialization). The
// products and row ops run through the kernel layer on the Tensors' memory; the broadcast add and
// gelu through the public Tensor ops, so both layers meet in one check.
#include "bitlearn/ops.h"
#include "ops/dispatch.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"
#include "verify/tensor_io.h"

namespace bl::verify {

namespace {

float* fptr(Tensor& t) { return static_cast<float*>(t.raw_data()); }
const float* fptr(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }

// a [m, k] @ b [k, n] on the tensors' device.
Tensor matmul_2d(const CheckContext& ctx, const Tensor& a, const Tensor& b) {
  const int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
  Tensor c = Tensor::empty({m, n}, DType::f32, core_device(ctx));
  MatmulArgs args = matmul_dense_args(1, m, n, k);
  dispatch::matmul(core_device(ctx), args, fptr(a), fptr(b), fptr(c));
  return c;
}

void check_mlp(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t batch = ctx.size(8, 64), d_in = ctx.size(33, 197), hidden = ctx.size(48, 256),
                classes = 10;
  Tensor x = make_tensor(ctx, uniform_floats(ctx, 7001, batch * d_in, -1.0f, 1.0f), {batch, d_in});
  Tensor w1 = make_tensor(ctx, normal_floats(ctx, 7002, d_in * hidden, 0.07f), {d_in, hidden});
  Tensor b1 = make_tensor(ctx, uniform_floats(ctx, 7003, hidden, -0.1f, 0.1f), {hidden});
  Tensor gamma = make_tensor(ctx, uniform_floats(ctx, 7004, hidden, 0.5f, 1.5f), {hidden});
  Tensor beta = make_tensor(ctx, uniform_floats(ctx, 7005, hidden, -0.2f, 0.2f), {hidden});
  Tensor w2 = make_tensor(ctx, normal_floats(ctx, 7006, hidden * classes, 0.09f), {hidden, classes});
  Tensor b2 = make_tensor(ctx, uniform_floats(ctx, 7007, classes, -0.1f, 0.1f), {classes});

  Tensor h = gelu(add(matmul_2d(ctx, x, w1), b1)).contiguous();
  Tensor hn = Tensor::empty({batch, hidden}, DType::f32, core_device(ctx));
  Tensor logits = Tensor();
  Tensor p = Tensor::empty({batch, classes}, DType::f32, core_device(ctx));
  const float eps = 1e-5f;
  dispatch::layer_norm(core_device(ctx), fptr(h), batch, hidden, fptr(gamma), fptr(beta), eps, fptr(hn), nullptr,
                       nullptr);
  logits = add(matmul_2d(ctx, hn, w2), b2).contiguous();
  dispatch::softmax(core_device(ctx), fptr(logits), batch, classes, fptr(p), false);
  add_tensor(out, "hidden", hn);
  add_tensor(out, "logits", logits);
  add_tensor(out, "probabilities", p);
}

}  // namespace

void add_model_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"mlp.forward", true, check_mlp});
}

}  // namespace bl::verify
