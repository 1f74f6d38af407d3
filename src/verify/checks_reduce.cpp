// checks_reduce.cpp: reductions through the kernel layer (src/kernels/reduce.h).
//
// reduce.large: sum, mean, var, std, l1, l2, max, min, argmax, argmin of one long vector
//   (1,000,003 elements in the full suite: >= 10^6 and prime, so leaves and lanes end unevenly).
// reduce.axes: the same ops over the middle axis of an (outer, n, inner) array with special values
//   (NaN, infinities, signed zeros, subnormals), where NaN propagation and ties matter.
// Both run through the reduce dispatch (ops/dispatch.h) on the check's device, on the same bytes.
#include "kernels/reduce.h"
#include "ops/dispatch.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

namespace {

const ReduceOp kFloatOps[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std,
                              ReduceOp::max, ReduceOp::min,  ReduceOp::l1,  ReduceOp::l2};

std::vector<float> reduce_on_device(CheckContext& ctx, const DeviceFloats& x, ReduceOp op,
                                    ReduceShape shape, int64_t ddof) {
  DeviceFloats out = device_zeros(ctx, shape.outer * shape.inner);
  dispatch::reduce(core_device(ctx), op, x.data, shape, out.data, ddof);
  return to_host(out);
}

std::vector<int64_t> arg_reduce_on_device(CheckContext& ctx, const DeviceFloats& x, ArgReduceOp op,
                                          ReduceShape shape) {
  DeviceI64 out = device_empty_i64(ctx, shape.outer * shape.inner);
  dispatch::arg_reduce(core_device(ctx), op, x.data, shape, out.data);
  return to_host(out);
}

void reduce_all(CheckContext& ctx, OutputWriter& out, const std::vector<float>& host, ReduceShape shape) {
  select_device(ctx);
  DeviceFloats x = to_device(ctx, host);
  for (ReduceOp op : kFloatOps)
    out.add_f32(reduce_op_name(op), reduce_on_device(ctx, x, op, shape, 0));
  out.add_f32("var_ddof1", reduce_on_device(ctx, x, ReduceOp::var, shape, 1));
  out.add_i64("argmax", arg_reduce_on_device(ctx, x, ArgReduceOp::argmax, shape));
  out.add_i64("argmin", arg_reduce_on_device(ctx, x, ArgReduceOp::argmin, shape));
}

void check_large(CheckContext& ctx, OutputWriter& out) {
  const int64_t n = ctx.size(65537, 1000003);
  std::vector<float> x = uniform_floats(ctx, 2001, n, -1.0f, 1.0f, 0);
  reduce_all(ctx, out, x, ReduceShape{1, n, 1});
}

void check_axes(CheckContext& ctx, OutputWriter& out) {
  ReduceShape shape{ctx.size(5, 37), ctx.size(257, 4099), 3};
  std::vector<float> x =
      uniform_floats(ctx, 2002, shape.outer * shape.n * shape.inner, -100.0f, 100.0f, 1031);
  reduce_all(ctx, out, x, shape);
}

}  // namespace

void add_reduce_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"reduce.large", true, check_large});
  checks.push_back({"reduce.axes", true, check_axes});
}

}  // namespace bl::verify
