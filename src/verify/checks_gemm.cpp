// checks_gemm.cpp: matrix products through the kernel layer (src/kernels/matmul.h).
//
// gemm.chain: four batched products of odd shapes, each feeding the next, with both transposes,
//   a broadcast (batch stride 0) weight and K spanning one, two and three k-leaves:
//     C1[b] = A[b] (M x K1) @ W1 (K1 x N1)              W1 shared by the batch
//     C2[b] = C1[b]^T (N1 x M) @ X2[b] (M x N2)         trans_a
//     C3[b] = C2[b] (N1 x N2) @ W3^T, W3 stored N3 x N2  trans_b
//     C4[b] = C3[b] (N1 x N3) @ W4 (N3 x N4)
//   plus a small product with special values (NaN, infinities, subnormals) and one with K = 0.
// Each runs through the matmul dispatch (ops/dispatch.h) on the check's device, default launch shape.
#include "kernels/matmul.h"
#include "ops/dispatch.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

namespace {

std::vector<float> matmul_on_device(CheckContext& ctx, const MatmulArgs& args, const DeviceFloats& a,
                                    const DeviceFloats& b) {
  DeviceFloats c = device_zeros(ctx, args.batch * args.m * args.ldc);
  dispatch::matmul(core_device(ctx), args, a.data, b.data, c.data);
  return to_host(c);
}

void check_chain(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t batch = ctx.size(2, 3);
  const int64_t m = ctx.size(19, 67), k1 = ctx.size(37, 301), n1 = ctx.size(13, 45);
  const int64_t n2 = ctx.size(29, 129), n3 = ctx.size(263, 513), n4 = ctx.size(7, 31);

  std::vector<float> a = uniform_floats(ctx, 3001, batch * m * k1, -1.0f, 1.0f);
  std::vector<float> w1 = normal_floats(ctx, 3002, k1 * n1, 0.06f);
  std::vector<float> x2 = uniform_floats(ctx, 3003, batch * m * n2, -0.5f, 0.5f);
  std::vector<float> w3 = normal_floats(ctx, 3004, n3 * n2, 0.09f);
  std::vector<float> w4 = normal_floats(ctx, 3005, n3 * n4, 0.05f);

  MatmulArgs p1 = matmul_dense_args(batch, m, n1, k1);
  p1.stride_b = 0;  // one weight for the whole batch
  std::vector<float> c1 = matmul_on_device(ctx, p1, to_device(ctx, a), to_device(ctx, w1));
  out.add_f32("c1", c1);

  MatmulArgs p2 = matmul_dense_args(batch, n1, n2, m, /*trans_a=*/true, false);
  std::vector<float> c2 = matmul_on_device(ctx, p2, to_device(ctx, c1), to_device(ctx, x2));
  out.add_f32("c2", c2);

  MatmulArgs p3 = matmul_dense_args(batch, n1, n3, n2, false, /*trans_b=*/true);
  p3.stride_b = 0;
  std::vector<float> c3 = matmul_on_device(ctx, p3, to_device(ctx, c2), to_device(ctx, w3));
  out.add_f32("c3", c3);

  MatmulArgs p4 = matmul_dense_args(batch, n1, n4, n3);
  p4.stride_b = 0;
  out.add_f32("c4", matmul_on_device(ctx, p4, to_device(ctx, c3), to_device(ctx, w4)));

  // Special values: NaN must come out canonical, infinities and subnormals as the reference says.
  std::vector<float> sa = uniform_floats(ctx, 3006, 17 * 23, -2.0f, 2.0f, 11);
  std::vector<float> sb = uniform_floats(ctx, 3007, 23 * 19, -2.0f, 2.0f, 13);
  MatmulArgs ps = matmul_dense_args(1, 17, 19, 23);
  out.add_f32("specials", matmul_on_device(ctx, ps, to_device(ctx, sa), to_device(ctx, sb)));

  // K = 0: every output is +0.
  MatmulArgs pz = matmul_dense_args(1, 5, 6, 0);
  out.add_f32("k0", matmul_on_device(ctx, pz, to_device(ctx, sa), to_device(ctx, sb)));
}

}  // namespace

void add_gemm_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"gemm.chain", true, check_chain});
}

}  // namespace bl::verify
