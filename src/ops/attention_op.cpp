// attention_op.cpp: the Tensor-level causal_attention (see bitlearn/ops_attention.h).
#include "bitlearn/ops_attention.h"

#include "bitlearn/ops_shape.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/attention.h"
#include "kernels/attention_backward.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {
namespace {

constexpr const char* kOp = "causal_attention";

void check_operand(const Tensor& t, const char* name, DType dtype, int64_t ndim) {
  check_defined(t, kOp, name);
  BL_CHECK(t.dtype() == dtype, kOp, ": operand ", name, " has dtype ", dtype_name(t.dtype()),
           "; expected ", dtype_name(dtype));
  BL_CHECK(t.ndim() == ndim, kOp, ": operand ", name, " has shape ", shape_str(t.shape()), "; expected ",
           ndim, " dimensions");
}

// t itself when its last axis is contiguous (or of extent <= 1), else a contiguous copy.
Tensor last_axis_unit(const Tensor& t) {
  if (t.dim(-1) <= 1 || t.strides().back() == 1) return t;
  return t.contiguous();
}

}  // namespace

Tensor causal_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& q_pos_in,
                        const Tensor& kv_len_in, float scale, int64_t window) {
  check_operand(q_in, "q", DType::f32, 4);
  check_operand(k_in, "k", DType::f32, 4);
  check_operand(v_in, "v", DType::f32, 4);
  check_operand(q_pos_in, "q_pos", DType::i64, 2);
  check_operand(kv_len_in, "kv_len", DType::i64, 1);
  check_same_device(q_in, k_in, kOp, "q", "k");
  check_same_device(q_in, v_in, kOp, "q", "v");
  check_same_device(q_in, q_pos_in, kOp, "q", "q_pos");
  check_same_device(q_in, kv_len_in, kOp, "q", "kv_len");
  check_device_usable(q_in.device(), kOp);
  const int64_t B = q_in.dim(0), T = q_in.dim(1), H = q_in.dim(2), D = q_in.dim(3);
  const int64_t Tk = k_in.dim(1), G = k_in.dim(2);
  BL_CHECK(k_in.dim(0) == B && k_in.dim(3) == D, kOp, ": operand k has shape ", shape_str(k_in.shape()),
           "; expected [", B, ", Tk, G, ", D, "] for q of shape ", shape_str(q_in.shape()));
  BL_CHECK(v_in.shape() == k_in.shape(), kOp, ": operand v has shape ", shape_str(v_in.shape()),
           "; expected k's shape ", shape_str(k_in.shape()));
  BL_CHECK(G >= 1 && H % G == 0, kOp, ": q has ", H, " heads, not a multiple of the ", G,
           " key/value heads of k");
  BL_CHECK(q_pos_in.dim(0) == B && q_pos_in.dim(1) == T, kOp, ": operand q_pos has shape ",
           shape_str(q_pos_in.shape()), "; expected [", B, ", ", T, "]");
  BL_CHECK(kv_len_in.dim(0) == B, kOp, ": operand kv_len has shape ", shape_str(kv_len_in.shape()),
           "; expected [", B, "]");
  BL_CHECK(window >= 0, kOp, ": window ", window, " must be >= 0");
  const Tensor q = last_axis_unit(q_in), k = last_axis_unit(k_in), v = last_axis_unit(v_in);
  const Tensor q_pos = q_pos_in.contiguous(), kv_len = kv_len_in.contiguous();
  // Every kv_len must fit the key slots: checked on the host (a small copy for CUDA operands).
  const std::vector<int64_t> lens = kv_len.to_vector<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    BL_CHECK(lens[b] >= 0 && lens[b] <= Tk, kOp, ": kv_len[", b, "] = ", lens[b], " lies outside [0, ",
             Tk, "] (the key slots of k)");
  }

  Tensor out = Tensor::empty({B, T, H, D}, DType::f32, q.device());
  AttentionArgs a;
  a.batch = B;
  a.q_len = T;
  a.n_heads = H;
  a.n_kv_heads = G;
  a.head_dim = D;
  a.kv_capacity = Tk;
  a.scale = scale;
  a.window = window;
  a.q_sb = q.strides()[0], a.q_st = q.strides()[1], a.q_sh = q.strides()[2];
  a.k_sb = k.strides()[0], a.k_st = k.strides()[1], a.k_sh = k.strides()[2];
  a.v_sb = v.strides()[0], a.v_st = v.strides()[1], a.v_sh = v.strides()[2];
  a.o_sb = T * H * D, a.o_st = H * D, a.o_sh = D;
  if (out.numel() == 0) return out;
  const auto* qp = static_cast<const float*>(q.raw_data());
  const auto* kp = static_cast<const float*>(k.raw_data());
  const auto* vp = static_cast<const float*>(v.raw_data());
  const auto* pp = static_cast<const int64_t*>(q_pos.raw_data());
  const auto* lp = static_cast<const int64_t*>(kv_len.raw_data());
  auto* op = static_cast<float*>(out.raw_data());
  dispatch::attention(q.device(), a, qp, kp, vp, pp, lp, op);
  return out;
}

namespace {

// first_position < 0: row r of [..., R, T] is the query at position r % T (the whole problem);
// otherwise row i of every [rows, keys] matrix is the query at position first_position + i.
std::pair<Tensor, Tensor> softmax_backward_rows(const Tensor& scores, const Tensor& dprobs, float scale,
                                                int64_t window, int64_t first_position) {
  constexpr const char* op = "causal_softmax_backward";
  check_defined(scores, op, "scores");
  check_defined(dprobs, op, "dprobs");
  BL_CHECK(scores.dtype() == DType::f32 && dprobs.dtype() == DType::f32, op, ": scores and dprobs must be f32, got ",
           dtype_name(scores.dtype()), " and ", dtype_name(dprobs.dtype()));
  BL_CHECK(scores.ndim() >= 2, op, ": scores has shape ", shape_str(scores.shape()), "; expected [..., rows, keys]");
  BL_CHECK(dprobs.shape() == scores.shape(), op, ": dprobs has shape ", shape_str(dprobs.shape()),
           "; expected the shape of scores ", shape_str(scores.shape()));
  check_same_device(scores, dprobs, op, "scores", "dprobs");
  check_device_usable(scores.device(), op);
  BL_CHECK(window >= 0, op, ": window ", window, " must be >= 0");
  const int64_t n = scores.dim(-1);
  BL_CHECK(n <= kAttentionBackwardMaxKeys, op, ": ", n, " keys per row exceed the limit of ", kAttentionBackwardMaxKeys);
  const Tensor s = scores.contiguous(), dp = dprobs.contiguous();
  Tensor p = Tensor::empty(s.shape(), DType::f32, s.device());
  Tensor ds = Tensor::empty(s.shape(), DType::f32, s.device());
  AttentionBackwardArgs a;
  a.n = n;
  a.rows = n == 0 ? 0 : s.numel() / n;
  if (first_position < 0) {
    a.period = n < 1 ? 1 : n;
  } else {
    const int64_t block_rows = scores.dim(-2);
    a.period = block_rows < 1 ? 1 : block_rows;
    a.offset = first_position;
  }
  a.scale = scale;
  a.window = window;
  if (a.rows == 0 || n == 0) return {p, ds};
  dispatch::attention_backward(s.device(), a, static_cast<const float*>(s.raw_data()),
                               static_cast<const float*>(dp.raw_data()), static_cast<float*>(p.raw_data()),
                               static_cast<float*>(ds.raw_data()));
  return {p, ds};
}

}  // namespace

std::pair<Tensor, Tensor> causal_softmax_backward(const Tensor& scores, const Tensor& dprobs, float scale,
                                                  int64_t window) {
  return softmax_backward_rows(scores, dprobs, scale, window, -1);
}

std::pair<Tensor, Tensor> causal_softmax_backward(const Tensor& scores, const Tensor& dprobs, float scale,
                                                  int64_t window, int64_t first_position) {
  BL_CHECK(first_position >= 0, "causal_softmax_backward: first_position ", first_position, " must be >= 0");
  return softmax_backward_rows(scores, dprobs, scale, window, first_position);
}

}  // namespace bl
