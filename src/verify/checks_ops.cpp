// checks_ops.cpp: the public Tensor ops (bitlearn/ops.h) on the check's device.
//
// op.elementwise: unary ops, contract math through the Tensor path, binary ops with numpy
//   broadcasting ([7,1,33] with [5,33]), comparisons, where, casts and a strided (transposed)
//   operand, on data with special values.
// op.index: index_select, gather, scatter, embedding and embedding_backward (the latter with rows
//   that collect more contributions than one reduction leaf).
// op.reduce_api: the Tensor reductions and row ops (bitlearn/ops_reduce.h) on strided views.
#include "bitlearn/ops.h"
#include "verify/check.h"
#include "verify/inputs.h"
#include "verify/tensor_io.h"

namespace bl::verify {

namespace {

void check_elementwise(CheckContext& ctx, OutputWriter& out) {
  const int64_t a0 = ctx.size(3, 7), c = ctx.size(17, 33), b0 = ctx.size(4, 5);
  Tensor x = make_tensor(ctx, uniform_floats(ctx, 4001, a0 * c, -3.0f, 3.0f, 7), {a0, 1, c});
  Tensor y = make_tensor(ctx, uniform_floats(ctx, 4002, b0 * c, -3.0f, 3.0f, 5), {b0, c});

  add_tensor(out, "abs", abs(x));
  add_tensor(out, "neg", neg(x));
  add_tensor(out, "sqrt", sqrt(x));
  add_tensor(out, "relu", relu(x));
  add_tensor(out, "square", square(x));
  add_tensor(out, "reciprocal", reciprocal(x));
  add_tensor(out, "sign", sign(x));
  add_tensor(out, "floor", floor(x));
  add_tensor(out, "ceil", ceil(x));
  add_tensor(out, "round", round(x));
  add_tensor(out, "exp", exp(x));
  add_tensor(out, "log", log(x));
  add_tensor(out, "tanh", tanh(x));
  add_tensor(out, "sigmoid", sigmoid(x));
  add_tensor(out, "gelu", gelu(x));
  add_tensor(out, "silu", silu(x));
  add_tensor(out, "sin", sin(x));

  add_tensor(out, "add", add(x, y));
  add_tensor(out, "sub", sub(x, y));
  add_tensor(out, "mul", mul(x, y));
  add_tensor(out, "div", div(x, y));
  add_tensor(out, "maximum", maximum(x, y));
  add_tensor(out, "minimum", minimum(x, y));
  add_tensor(out, "pow", pow(abs(x), y));
  add_tensor(out, "lt", lt(x, y));
  add_tensor(out, "eq", eq(x, y));
  add_tensor(out, "ne", ne(x, y));
  add_tensor(out, "where", where(gt(x, y), x, y));
  add_tensor(out, "cast_i32", cast(mul(x, Tensor::scalar(1e9, DType::f32, core_device(ctx))), DType::i32));
  add_tensor(out, "cast_back", cast(cast(x, DType::i64), DType::f32));

  // A strided operand: x viewed as [c, a0] through a transpose.
  Tensor xt = x.reshape({a0, c}).transpose(0, 1);
  add_tensor(out, "strided_add", add(xt, xt));
}

void check_index(CheckContext& ctx, OutputWriter& out) {
  const int64_t v = ctx.size(13, 50), d = ctx.size(8, 24), rows = ctx.size(3, 8), cols = ctx.size(7, 25);
  // grad_out first: its element 0 always reaches embedding_backward (the negative control).
  Tensor grad_out =
      make_tensor(ctx, uniform_floats(ctx, 5001, rows * cols * d, -1.0f, 1.0f, 97), {rows, cols, d});
  Tensor w = make_tensor(ctx, uniform_floats(ctx, 5002, v * d, -1.0f, 1.0f, 31), {v, d});
  Tensor ids = make_index(ctx, uniform_indices(5003, rows * cols, v), {rows, cols});

  add_tensor(out, "embedding", embedding(w, ids));
  add_tensor(out, "embedding_backward", embedding_backward(grad_out, ids, v));

  Tensor sel = make_index(ctx, uniform_indices(5004, 2 * v, v), {2 * v});
  add_tensor(out, "index_select0", index_select(w, 0, sel));
  Tensor sel1 = make_index(ctx, uniform_indices(5005, 3 * d, d), {3 * d});
  add_tensor(out, "index_select1", index_select(w, 1, sel1));

  Tensor gidx = make_index(ctx, uniform_indices(5006, v * 5, d), {v, 5});
  add_tensor(out, "gather1", gather(w, 1, gidx));
  // scatter with repeated targets: the last one in row-major order wins.
  Tensor sidx = make_index(ctx, uniform_indices(5007, 4 * d, v), {4, d});
  Tensor src = make_tensor(ctx, uniform_floats(ctx, 5008, 4 * d, -9.0f, 9.0f, 0), {4, d});
  add_tensor(out, "scatter0", scatter(w, 0, sidx, src));

  // Many contributions per row: rows 0 and 1 each collect about n/2 gradients (> one leaf).
  const int64_t n = ctx.size(9000, 12289), dd = 4;
  Tensor many_ids = make_index(ctx, uniform_indices(5009, n, 2), {n});
  Tensor many_grad = make_tensor(ctx, uniform_floats(ctx, 5010, n * dd, -1.0f, 1.0f, 1001), {n, dd});
  add_tensor(out, "embedding_backward_long", embedding_backward(many_grad, many_ids, 3));
}

// The public reduction API on strided views: dims other than the last, several dims at once,
// keepdim, a permuted (non-contiguous) operand, and the row ops along a middle dimension.
void check_reduce_api(CheckContext& ctx, OutputWriter& out) {
  const int64_t a = ctx.size(3, 6), b = ctx.size(37, 257), c = ctx.size(5, 11);
  Tensor x = make_tensor(ctx, uniform_floats(ctx, 8001, a * b * c, -5.0f, 5.0f, 211), {a, b, c});
  Tensor xp = x.permute({2, 0, 1});  // [c, a, b], strided
  add_tensor(out, "sum_all", sum(x));
  add_tensor(out, "sum_dim1", sum(x, {1}));
  add_tensor(out, "sum_dims02_keep", sum(x, {0, 2}, true));
  add_tensor(out, "mean_permuted", mean(xp, {2}));
  add_tensor(out, "var_ddof1", var(x, {1}, 1));
  add_tensor(out, "stddev", stddev(xp, {1, 2}));
  add_tensor(out, "amax", amax(x, {1}));
  add_tensor(out, "amin", amin(xp, {0}));
  add_tensor(out, "l1", l1_norm(x, {2}));
  add_tensor(out, "l2", l2_norm(x, {1}));
  add_tensor(out, "argmax", argmax(x, 1));
  add_tensor(out, "argmin_permuted", argmin(xp, 2, true));
  add_tensor(out, "softmax_dim1", softmax(x, 1));
  add_tensor(out, "log_softmax_permuted", log_softmax(xp, -1));
  add_tensor(out, "cumsum_dim1", cumsum(x, 1));
  SortResult s = sort(xp, 2, true);
  add_tensor(out, "sort.values", s.values);
  add_tensor(out, "sort.indices", s.indices);
  SortResult t = topk(x, 3, 1);
  add_tensor(out, "topk.values", t.values);
  add_tensor(out, "topk.indices", t.indices);
  Tensor rows = x.reshape({a * b, c});
  Tensor gamma = make_tensor(ctx, uniform_floats(ctx, 8002, c, 0.5f, 1.5f), {c});
  Tensor beta = make_tensor(ctx, uniform_floats(ctx, 8003, c, -0.5f, 0.5f), {c});
  add_tensor(out, "layer_norm", layer_norm(rows, gamma, beta));
  add_tensor(out, "rms_norm", rms_norm(rows, gamma));
}

}  // namespace

void add_op_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"op.elementwise", true, check_elementwise});
  checks.push_back({"op.index", true, check_index});
  checks.push_back({"op.reduce_api", true, check_reduce_api});
}

}  // namespace bl::verify
